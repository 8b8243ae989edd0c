# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the preflight role: preflight_missing, preflight_clusters, preflight_stale_state_flows and preflight_report
(plugin_utils/preflight_report)."""
from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_config import required_features
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.preflight_report import cluster_checks, missing_settings, report, stale_state_flows


def _inventory_clusters(group_names, groups, hostvars):
    """{group, host, alias, bootstrap_servers} of the first host of each group that has hosts."""
    clusters = []
    for group in group_names:
        hosts = groups.get(group) or []
        if hosts:
            host_vars = hostvars[hosts[0]]
            clusters.append(dict(group=group, host=hosts[0], alias=host_vars.get("kafka_cluster_alias"),
                                 bootstrap_servers=host_vars.get("kafka_bootstrap_servers")))
    return clusters


def preflight_missing(group_names, groups, hostvars, target_alias):
    return missing_settings(group_names, _inventory_clusters(group_names, groups, hostvars), target_alias)


def _bool(value):
    return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "yes", "1", "on")


def preflight_clusters(group_names, groups, hostvars, settings, mm2_model):
    """What kafka_cluster_info checks on each cluster; with settings.derive_features the features mm2_model (the
    mirrormaker2_* settings, the role's model) turns on are checked too."""
    features = required_features(mm2_model) if _bool(settings.get("derive_features", True)) else []
    try:
        return cluster_checks(_inventory_clusters(group_names, groups, hostvars), settings["target_alias"], settings["source_alias"],
                              settings["offset_syncs_topic_location"], settings["replication_factor"], settings["internal_replication_factor"],
                              settings.get("topics"), settings.get("extra_replication_factors"),
                              features + list(settings.get("required_features") or []), _bool(settings.get("check_topic_creation", True)),
                              mm2_model.get("flows"), mm2_model.get("replication_policy"))
    except (KeyError, ValueError) as exc:
        raise AnsibleFilterError("preflight_clusters: %s" % exc) from None


def preflight_stale_state_flows(cluster_results, flows, engine="mm2"):
    try:
        return stale_state_flows(cluster_results, flows, engine)
    except (KeyError, TypeError) as exc:
        raise AnsibleFilterError("preflight_stale_state_flows: every flow needs a source and a target alias (%s)" % exc) from None


def preflight_report(cluster_results, clock_readings, reference_host, max_clock_skew, deferred_checks, stale_state_results=None,
                     stale_state_skipped=None):
    return report(cluster_results, clock_readings, reference_host, max_clock_skew, deferred_checks, stale_state_results, stale_state_skipped)


class FilterModule:
    def filters(self):
        return {"preflight_missing": preflight_missing, "preflight_clusters": preflight_clusters,
                "preflight_stale_state_flows": preflight_stale_state_flows, "preflight_report": preflight_report}
