# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the failover role: failover_missing and failover_report (plugin_utils/failover_report)."""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.failover_report import missing_settings, report


def failover_missing(aliases, source_group, target_group, groups, hostvars):
    """aliases: {failover_source_alias: value, failover_target_alias: value} (each defaults from its group)."""
    defaults_from = {"failover_source_alias": source_group, "failover_target_alias": target_group}
    named = [(variable, aliases.get(variable), defaults_from[variable]) for variable in sorted(defaults_from)]
    bootstrap = []
    for group in (source_group, target_group):
        hosts = groups.get(group) or []
        bootstrap.append((group, hosts[0], hostvars[hosts[0]].get("kafka_bootstrap_servers")) if hosts else (group, None, None))
    return missing_settings(named, bootstrap)


def failover_report(result, check_mode, verify, target_bootstrap, target_alias, replication_policy):
    return report(result, bool(check_mode), bool(verify), target_bootstrap, target_alias, replication_policy)


class FilterModule:
    def filters(self):
        return {"failover_missing": failover_missing, "failover_report": failover_report}
