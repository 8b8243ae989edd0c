# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight role's decisions (plugin_utils/preflight_report and its filters), which its templates used to make."""
import pytest

from ansible_collections.kafkaops.mirror.plugins.filter import preflight as plugin
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.preflight_report import (
    DEFERRED_NOTE,
    clock_findings,
    cluster_checks,
    missing_settings,
    report,
    stale_state_flows,
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
    settings = dict(target_alias="secondary", source_alias="primary", offset_syncs_topic_location="target", replication_factor="auto",
                    internal_replication_factor="auto", topics=[], extra_replication_factors={}, required_features=["dedicated_rest"],
                    derive_features=True, check_topic_creation="true")
    model = {"engine": None, "flows": [{"source": "primary", "target": "secondary", "sync_group_offsets": True}],
             "replication_policy": "identity", "offset_syncs_topic_location": "target", "dedicated_rest": False, "exactly_once": False}
    target = plugin.preflight_clusters(names, groups, hostvars, settings, model)[1]
    assert target["required_features"] == ["mm2", "sync_group_offsets", "identity_policy", "offset_syncs_location", "dedicated_rest"]
    assert target["check_topic_creation"] is True
    underived = plugin.preflight_clusters(names, groups, hostvars, dict(settings, derive_features=False), model)[1]
    assert underived["required_features"] == ["dedicated_rest"]
    assert set(plugin.FilterModule().filters()) == {"preflight_missing", "preflight_clusters", "preflight_stale_state_flows", "preflight_report"}


def _probe(alias, host, reachable=True, usable=True, failed=False):
    return {"item": {"alias": alias, "host": host}, "failed": failed, "bootstrap_reachable": reachable, "skipped": [],
            "brokers": [{"node_id": 1, "usable": usable}]}


def test_stale_state_is_read_only_for_flows_whose_clusters_answered():
    probes = [_probe("primary", "p0"), _probe("secondary", "s0"), _probe("tertiary", "t0", usable=False)]
    flows = [{"source": "primary", "target": "secondary", "topics": ["orders"], "groups_exclude": ["tmp-.*"],
              "properties": {"sasl.jaas.config": "secret"}},
             {"source": "primary", "target": "tertiary"},
             {"source": "secondary", "target": "primary", "enabled": False},
             {"source": "primary", "target": "quaternary"}]
    chosen = stale_state_flows(probes, flows)
    assert chosen["flows"] == [{"source": "primary", "target": "secondary", "source_host": "p0", "target_host": "s0",
                                "topics": ["orders"], "groups": [".*"], "groups_exclude": ["tmp-.*"]}]
    assert chosen["skipped"] == [
        "the offset syncs and checkpoints of flow primary->tertiary were not read (cluster tertiary: a broker's advertised address "
        "is unusable from here)",
        "the offset syncs and checkpoints of flow primary->quaternary were not read (cluster quaternary is not among the "
        "preflight's clusters)"]
    assert stale_state_flows(probes, flows, "mm1") == {"flows": [], "skipped": []}
    assert stale_state_flows(probes, [{"source": "primary", "target": "secondary", "topics": []}])["flows"][0]["topics"] == []
    assert plugin.preflight_stale_state_flows([_probe("primary", "p0", failed=True), _probe("secondary", "s0", reachable=False)],
                                              flows[:1])["skipped"] == [
        "the offset syncs and checkpoints of flow primary->secondary were not read (cluster primary: its probe failed; "
        "cluster secondary: its bootstrap servers do not answer)"]


def test_report_adds_the_stale_state_of_each_flow():
    stale = {"severity": "error", "check": "stale_offset_syncs", "cluster": "primary", "message": "syncs beyond the end",
             "fix": "delete it"}
    read = [{"flow": "primary->secondary", "offset_syncs_topic": "mm2-offset-syncs.secondary.internal", "stale_state": [stale]},
            {"flow": "primary->tertiary", "offset_syncs_topic": "mm2-offset-syncs.tertiary.internal", "stale_state": []}]
    result = report([_result("primary", [])], [], "mm", 5.0, [], read, ["flow x->y was not read"])
    assert result["table"][2:6] == [
        "clocks: not compared",
        "MirrorMaker state of primary->secondary (mm2-offset-syncs.secondary.internal and checkpoints): 1 stale finding(s)",
        "MirrorMaker state of primary->tertiary (mm2-offset-syncs.tertiary.internal and checkpoints): nothing stale",
        "ERROR syncs beyond the end. Fix: delete it"]
    assert result["errors"] == ["syncs beyond the end. Fix: delete it"] and result["warnings"] == ["flow x->y was not read"]
    assert result["stale_state_read"] is False
    assert report([_result("primary", [])], [], "mm", 5.0, [], read[1:], [])["stale_state_read"] is True
    assert report([_result("primary", [])], [], "mm", 5.0, [])["stale_state_read"] is False  # not looked at
    deferred = report([_result("primary", [])], [], "mm", 5.0, ["stale_offset_syncs"], read, [])
    assert deferred["errors"] == [] and deferred["warnings"][0].startswith("syncs beyond the end" + DEFERRED_NOTE)


@pytest.mark.parametrize("flows, probe, acl_count", [
    # The flow's patterns as ACLs: each cluster gets its side's, and the creation probe is a remote topic of the flow.
    ([{"source": "primary", "target": "secondary", "topics": ["sx-.*"], "groups": ["sx-.*"]}], "primary.sx-kafkaops-preflight-probe", True),
    ([{"source": "primary", "target": "secondary", "topics": ["orders"], "groups": ["app"]}], "primary.orders", True),
    # MirrorMaker 2's default .* needs ACLs on every topic: no narrower check, and the probe keeps its own name.
    ([{"source": "primary", "target": "secondary"}], "kafkaops-preflight-probe", False),
    (None, "kafkaops-preflight-probe", False),
])
def test_cluster_checks_carry_the_flows_acls_and_probe_topic(flows, probe, acl_count):
    checks = {c["alias"]: c for c in cluster_checks(CLUSTERS, "secondary", "primary", "source", "auto", 3, flows=flows)}
    assert checks["secondary"]["probe_topic"] == probe
    assert bool(checks["primary"]["required_acls"]) is acl_count and bool(checks["secondary"]["required_acls"]) is acl_count
    for alias, check in checks.items():
        assert all(set(acl) == {"resource_type", "pattern_type", "resource_name", "operation"} for acl in check["required_acls"]), alias
    if acl_count:
        source = {(a["resource_name"], a["operation"]) for a in checks["primary"]["required_acls"]}
        assert ("mm2-offset-syncs.secondary.internal", "WRITE") in source and not any(name.startswith("primary.") for name, _op in source)
