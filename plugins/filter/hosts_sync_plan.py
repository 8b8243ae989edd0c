# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter kafkaops.mirror.hosts_sync_plan: a node's hosts file + the source cluster's entries -> managed block, conflicts and
the short names left out."""
from __future__ import annotations

import re

from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.hosts_entries import DEFAULT_PATTERNS, HostsEntriesError, plan


def hosts_sync_plan(current_text, alias, source_files=None, ambari_hosts=None, patterns=None, local_names=None):
    patterns = list(patterns or DEFAULT_PATTERNS)
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise AnsibleFilterError(f"hosts_sync_plan: pattern {pattern!r} is not a valid regular expression: {exc}") from None
    try:
        return plan(current_text, alias, source_files=source_files, ambari_hosts=ambari_hosts, patterns=patterns, local_names=local_names or ())
    except HostsEntriesError as exc:
        raise AnsibleFilterError(f"hosts_sync_plan: {exc}") from None


class FilterModule:
    def filters(self):
        return {"hosts_sync_plan": hosts_sync_plan}
