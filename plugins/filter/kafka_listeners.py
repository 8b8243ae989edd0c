# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters kafkaops.mirror.kafka_listeners_bound_to_all and kafkaops.mirror.kafka_listeners_checked (plugin_utils/kafka_listeners)."""
from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.kafka_listeners import ListenersError, bound_to_all_interfaces, checked


def kafka_listeners_bound_to_all(listeners, security_protocol_map=None):
    try:
        return bound_to_all_interfaces(listeners, security_protocol_map)
    except ListenersError as exc:
        raise AnsibleFilterError(f"kafka_listeners_bound_to_all: {exc}") from None


def kafka_listeners_checked(listeners, security_protocol_map=None):
    try:
        return checked(listeners, security_protocol_map)
    except ListenersError as exc:
        raise AnsibleFilterError(f"kafka_listeners_checked: {exc}") from None


class FilterModule:
    def filters(self):
        return {"kafka_listeners_bound_to_all": kafka_listeners_bound_to_all, "kafka_listeners_checked": kafka_listeners_checked}
