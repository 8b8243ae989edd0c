# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter kafkaops.mirror.kafka_version_from_jars: jar paths found in <kafka home>/libs -> the Kafka version."""
from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.kafka_install import KafkaInstallError, version_from_jars


def kafka_version_from_jars(paths, kafka_home, home_variable, version_variable):
    try:
        return version_from_jars(paths, kafka_home, home_variable, version_variable)
    except KafkaInstallError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"kafka_version_from_jars": kafka_version_from_jars}
