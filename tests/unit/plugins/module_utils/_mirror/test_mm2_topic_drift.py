# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topic settings drift of a flow (plugins/module_utils/_mirror/topic_drift.py): hand-made source/target pairs, no Kafka."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.topic_drift import (
    alignment_entries,
    compare_flow,
    drift_report,
    flow_filter,
    summary_text,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import FlowNames

BROKER_DEFAULTS = {"cleanup.policy": "delete", "retention.ms": "604800000", "retention.bytes": "-1", "min.insync.replicas": "1",
                   "max.message.bytes": "1048588", "compression.type": "producer"}
NAMES = FlowNames("primary", "secondary")


def side(partitions=3, replication_factor=3, **configs):
    return {"partitions": partitions, "replication_factor": replication_factor,
            "configs": dict(BROKER_DEFAULTS, **{key.replace("_", "."): value for key, value in configs.items()})}


def drift(source, target, brokers=3, names=NAMES, topic="orders"):
    targets = {} if target is None else {names.remote_topic(topic): target}
    return compare_flow(names, {topic: source}, targets, brokers)


def findings(report):
    return [(item["severity"], item["check"]) for item in report["findings"]]


def test_equal_settings_are_in_sync_and_need_no_alignment():
    report = drift(side(), side())
    assert report["topics"][0]["status"] == "in_sync" and report["findings"] == []
    assert report["summary"] == {"topics": 1, "in_sync": 1, "missing": 0, "errors": 0, "warnings": 0, "infos": 0}
    assert alignment_entries(report) == []


def test_values_compare_normalized():
    report = drift(side(cleanup_policy="compact,delete", retention_ms=604800000), side(cleanup_policy="delete, compact"))
    assert report["findings"] == []


def test_fewer_target_partitions_break_the_mirror_more_are_listed():
    fewer = drift(side(partitions=8), side(partitions=4))
    assert findings(fewer) == [("error", "partitions")]
    item = fewer["findings"][0]
    assert (item["source"], item["target"], item["topic"], item["remote_topic"], item["cluster"]) == (8, 4, "orders", "primary.orders", "secondary")
    assert "source partitions 4-7" in item["message"] and "kafka_topics_align_to_source" in item["fix"]
    assert fewer["topics"][0]["status"] == "error"
    more = drift(side(partitions=4), side(partitions=8))
    assert findings(more) == [("info", "partitions")]


@pytest.mark.parametrize("source_policy, target_policy, expected", [
    ("delete", "compact", "error"),  # records without a key refused, history compacted away on the target only
    ("delete", "compact,delete", "error"),
    ("compact", "delete", "error"),  # the target drops after retention.ms the keys the source keeps for ever
    ("compact", "compact,delete", "error"),
    ("compact,delete", "compact", "info"),  # the target keeps more than the source
    ("compact,delete", "delete", "info"),
])
def test_cleanup_policy(source_policy, target_policy, expected):
    report = drift(side(cleanup_policy=source_policy), side(cleanup_policy=target_policy))
    assert findings(report) == [(expected, "cleanup.policy")]


def test_replication_factor_is_judged_against_the_targets_brokers():
    assert findings(drift(side(replication_factor=3), side(replication_factor=1), brokers=3)) == [("warning", "replication_factor")]
    # The target cannot hold more replicas than it has brokers: the best it can do is listed, not warned about.
    assert findings(drift(side(replication_factor=3), side(replication_factor=2), brokers=2)) == [("info", "replication_factor")]
    assert findings(drift(side(replication_factor=1), side(replication_factor=3), brokers=3)) == [("info", "replication_factor")]
    under = drift(side(replication_factor=3), side(replication_factor=3), brokers=2)
    assert findings(under) == [("warning", "replication_factor")] and "under-replicated" in under["findings"][0]["message"]


def test_target_min_insync_replicas_above_its_replication_factor_breaks_the_writes():
    report = drift(side(replication_factor=1), side(replication_factor=1, min_insync_replicas=2), brokers=1)
    assert findings(report) == [("error", "min.insync.replicas"), ("info", "min.insync.replicas")]
    assert "NotEnoughReplicas" in report["findings"][0]["message"]
    # Equal above 1: one replica down stops the writes (the shared rule's warning).
    assert findings(drift(side(min_insync_replicas=3), side(min_insync_replicas=3))) == [("warning", "min.insync.replicas")]


def test_retention_shorter_on_a_deleting_target_is_a_warning():
    assert findings(drift(side(retention_ms=604800000), side(retention_ms=86400000))) == [("warning", "retention.ms")]
    assert findings(drift(side(retention_bytes=-1), side(retention_bytes=1000000))) == [("warning", "retention.bytes")]
    assert findings(drift(side(retention_ms=86400000), side(retention_ms=-1))) == [("info", "retention.ms")]
    # A compacted target does not delete by time: its retention.ms is only listed (the policy difference is the error).
    compacted = drift(side(cleanup_policy="compact", retention_ms=604800000), side(cleanup_policy="compact", retention_ms=1000))
    assert findings(compacted) == [("info", "retention.ms")]


def test_smaller_max_message_bytes_on_the_target_breaks_the_mirror():
    assert findings(drift(side(max_message_bytes=10485760), side())) == [("error", "max.message.bytes")]
    assert findings(drift(side(), side(max_message_bytes=10485760))) == [("info", "max.message.bytes")]


def test_compression_difference_is_listed():
    assert findings(drift(side(compression_type="lz4"), side())) == [("info", "compression.type")]


def test_a_key_one_side_does_not_report_is_not_compared():
    target = side(cleanup_policy="compact")
    del target["configs"]["cleanup.policy"]
    assert findings(drift(side(), target)) == []


def test_missing_remote_topic_is_a_warning_and_aligned_by_creating_it():
    report = drift(side(partitions=8, replication_factor=3, retention_ms=86400000, min_insync_replicas=2), None, brokers=1)
    assert report["topics"][0]["status"] == "missing" and findings(report) == [("warning", "topic")]
    assert report["summary"]["missing"] == 1
    [entry] = alignment_entries(report)
    assert entry["name"] == "primary.orders" and (entry["partitions"], entry["replication_factor"]) == (8, 1)
    # min.insync.replicas capped at the replication factor the topic gets: 2 would refuse every write on one replica.
    assert entry["configs"]["min.insync.replicas"] == "1" and entry["configs"]["retention.ms"] == "86400000"


def test_alignment_grows_partitions_sets_configs_and_never_touches_the_replication_factor():
    report = drift(side(partitions=8, replication_factor=3, cleanup_policy="compact", min_insync_replicas=2),
                   side(partitions=4, replication_factor=1))
    assert alignment_entries(report) == [
        # min.insync.replicas stays 1: the remote topic has one replica.
        {"name": "primary.orders", "partitions": 8, "configs": {"cleanup.policy": "compact"}},
    ]
    shrink = drift(side(partitions=2), side(partitions=4, retention_ms=1000))
    assert alignment_entries(shrink) == [{"name": "primary.orders", "configs": {"retention.ms": "604800000"}}]


def test_remote_names_come_from_the_flows_policy():
    identity = FlowNames("primary", "secondary", policy="identity")
    assert drift(side(), side(), names=identity)["topics"][0]["remote_topic"] == "orders"
    underscore = FlowNames("primary", "secondary", separator="_")
    assert drift(side(), None, names=underscore)["topics"][0]["remote_topic"] == "primary_orders"


def test_summary_text_names_the_errors():
    report = drift(side(partitions=8), side(partitions=4))
    assert summary_text(report) == ("1 topic(s) compared, 0 in sync, 0 missing on the target, 1 error(s), 0 warning(s), 0 other "
                                    "difference(s): errors in primary.orders partitions")


def params(**extra):
    return dict(dict(source={"bootstrap_servers": ["127.0.0.1:9"]}, source_alias="primary", target_alias="secondary",
                     replication_policy="default", replication_policy_separator=".", mirrormaker_version=None, topics=[".*"],
                     topics_exclude=None), **extra)


def test_flow_filter_selects_as_mirrormaker_2_does():
    selection = flow_filter(params(topics=["orders.*, payments"]))
    assert selection.data_topics(["orders", "orders-eu", "payments", "heartbeats", "mm2-offset-syncs.secondary.internal", "secondary.orders",
                                  "__consumer_offsets", "clicks"]) == ["orders", "orders-eu", "payments"]


@pytest.mark.parametrize("bad, message", [
    ({"source_alias": " "}, "source_alias must not be empty"),
    ({"target_alias": "primary"}, "source_alias and target_alias are both 'primary'"),
    ({"mirrormaker_version": "latest"}, "is not a Kafka version"),
    ({"topics": ["orders("]}, "is not a regular expression"),
    ({"replication_policy_separator": ""}, "separator must not be empty"),
])
def test_bad_options_fail_before_any_connection(bad, message):
    def no_connection(_params):
        raise AssertionError("a connection was made")

    with pytest.raises(ValueError, match="nothing was read") as raised:
        drift_report(params(**bad), no_connection)
    assert message in str(raised.value)
