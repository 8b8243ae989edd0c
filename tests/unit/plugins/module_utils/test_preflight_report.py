# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight role's decisions (module_utils/preflight_report and its filters), which its templates used to make."""
import pytest

from ansible_collections.kafkaops.mirror.plugins.filter import preflight as plugin
from ansible_collections.kafkaops.mirror.plugins.module_utils.preflight_report import (
    DEFERRED_NOTE,
    clock_findings,
    cluster_checks,
    missing_settings,
    report,
)

CLUSTERS = [
    {"group": "primary_kafka", "host": "p0", "alias": "primary", "bootstrap_servers": "p0:9092, p1:9092"},
    {"group": "secondary_kafka", "host": "s0", "alias": "secondary", "bootstrap_servers": ["s0:9092"]},
]


def test_missing_settings_name_group_variable_and_host():
    clusters = [dict(CLUSTERS[0], alias=None), CLUSTERS[1]]
    assert missing_settings(["primary_kafka", "secondary_kafka", "third_kafka"], clusters, "tertiary") == [
        "kafka_cluster_alias for group primary_kafka (not set for its host p0)",
        "inventory group third_kafka with at least one host",
        "a cluster with alias tertiary (preflight_target_alias); the clusters are secondary",
    ]
    assert missing_settings(["primary_kafka"], CLUSTERS[:1], "")[-1].startswith("kafka_cluster_alias of group secondary_kafka")
    assert missing_settings(["primary_kafka", "secondary_kafka"], CLUSTERS, "secondary") == []


@pytest.mark.parametrize("location, syncs_on", [("source", "primary"), ("target", "secondary")])
def test_cluster_checks_put_each_factor_where_mirrormaker_creates_the_topic(location, syncs_on):
    topics = [{"name": "orders", "replication_factor": 2}, {"name": "logs", "replication_factor": -1}, {"name": "plain"}]
    found = cluster_checks(CLUSTERS, "secondary", "primary", location, "auto", 3, topics, {"primary": {"extra": 1}}, ["mm2", "exactly_once", "mm2"])
    checks = {c["alias"]: c for c in found}
    target, source = checks["secondary"], checks["primary"]
    assert target["role"] == "target" and source["role"] == "source"
    assert target["replication_factors"] == {"remote topics (mirrormaker2_replication_factor)": "auto", "kafka_topics_list orders": 2}
    assert source["replication_factors"] == {"extra": 1}
    assert ("offset-syncs topic (mirrormaker2_internal_replication_factor)" in checks[syncs_on]["internal_replication_factors"])
    assert target["required_features"] == ["mm2", "exactly_once"] and source["required_features"] == []
    assert target["check_topic_creation"] and not source["check_topic_creation"]
    assert target["expected_topics"] == ["orders", "logs", "plain"] and source["bootstrap_servers"] == ["p0:9092", "p1:9092"]


def test_clock_skew_counts_only_beyond_the_measurement_uncertainty():
    readings = [{"host": "mm", "time": 100.0, "before": 99.9, "after": 100.1},      # offset 0, +/-0.1
                {"host": "b1", "time": 106.0, "before": 99.5, "after": 100.5},      # offset +6, +/-0.5: 6 - 0.5 - 0.1 > 5
                {"host": "b2", "time": 95.5, "before": 99.0, "after": 101.0}]       # offset -4.5: within the limit
    clocks, findings, line = clock_findings(readings, "mm", 5.0)
    assert [round(c["offset"], 3) for c in clocks] == [0.0, 6.0, -4.5]
    assert len(findings) == 1 and findings[0]["check"] == "clock_skew"
    assert findings[0]["message"].startswith("the clock of b1 is 6.0 s ahead of mm (more than 5.0 s)")
    assert line == "clocks: 3 hosts, largest difference 10.50 s (measured within +/-1.00 s, limit 5.0 s)"
    assert clock_findings([], "mm", 5.0) == ([], [], "clocks: not compared")


def _result(alias, findings, failed=False):
    summary = dict(cluster=alias, bootstrap="ok", brokers=1, advertised_ok="1/1", kafka_version="3.9.0", min_insync_replicas="1",
                   auto_create_topics="false", can_create_topics="yes", errors=0, warnings=0)
    return {"item": {"alias": alias}, "failed": failed, "msg": "boom", "findings": findings, "summary": summary}


def test_report_defers_errors_of_deferred_checks_and_prints_the_fix():
    advertised = {"severity": "error", "check": "advertised_address", "cluster": "primary", "message": "broker unreachable", "fix": "hosts_sync"}
    gate = {"severity": "error", "check": "version_gate", "cluster": "primary", "message": "too old", "fix": None}
    result = report([_result("primary", [advertised, gate]), _result("secondary", [], failed=True)], [], "mm", 5.0, ["advertised_address"])
    assert result["warnings"] == ["broker unreachable" + DEFERRED_NOTE + ". Fix: hosts_sync"]
    assert result["errors"] == ["too old", "cluster secondary: the probe failed: boom"]
    assert result["table"][0].split() == ["cluster", "bootstrap", "brokers", "advertised", "kafka", "min.isr", "auto-create", "can-create",
                                          "errors", "warnings"]
    assert result["table"][2] == "clocks: not compared"
    assert result["table"][3] == "WARN  broker unreachable" + DEFERRED_NOTE + ". Fix: hosts_sync"
    assert [row["cluster"] for row in result["clusters"]] == ["primary"]
    assert result["findings"][0]["severity"] == "warning" and advertised["severity"] == "error"


class _HostVars(dict):
    """hostvars as filters get them: host -> its variables."""


def test_filters_read_the_inventory_and_the_mirrormaker2_settings():
    groups = {"primary_kafka": ["p0"], "secondary_kafka": ["s0"]}
    hostvars = _HostVars(p0={"kafka_cluster_alias": "primary", "kafka_bootstrap_servers": "p0:9092"},
                         s0={"kafka_cluster_alias": "secondary", "kafka_bootstrap_servers": "s0:9092"})
    names = ["primary_kafka", "secondary_kafka"]
    assert plugin.preflight_missing(names, groups, hostvars, "secondary") == []
    settings = dict(target_alias="secondary", source_alias="primary", offset_syncs_location="target", replication_factor="auto",
                    internal_replication_factor="auto", topics=[], extra_replication_factors={}, required_features=["dedicated_rest"],
                    derive_features=True, check_topic_creation="true")
    model = {"engine": None, "flows": [{"source": "primary", "target": "secondary", "sync_group_offsets": True}],
             "replication_policy": "identity", "offset_syncs_topic_location": "target", "dedicated_rest": False, "exactly_once": False}
    target = plugin.preflight_clusters(names, groups, hostvars, settings, model)[1]
    assert target["required_features"] == ["mm2", "sync_group_offsets", "identity_policy", "offset_syncs_location", "dedicated_rest"]
    assert target["check_topic_creation"] is True
    underived = plugin.preflight_clusters(names, groups, hostvars, dict(settings, derive_features=False), model)[1]
    assert underived["required_features"] == ["dedicated_rest"]
    assert set(plugin.FilterModule().filters()) == {"preflight_missing", "preflight_clusters", "preflight_report"}
