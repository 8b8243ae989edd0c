"""copy_from: which source topics become which target entries."""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils.kafka_topic_copy import (
    DEFAULT_EXCLUDED_CONFIGS,
    copied_entries,
    copy_rule_problems,
    merge_entries,
    selected_source_topics,
)

SOURCE = {
    "orders": {"partitions": 8, "replication_factor": 3, "internal": False},
    "orders-tmp": {"partitions": 1, "replication_factor": 3, "internal": False},
    "payments": {"partitions": 4, "replication_factor": 1, "internal": False},
    "__consumer_offsets": {"partitions": 50, "replication_factor": 3, "internal": True},
    "heartbeats": {"partitions": 1, "replication_factor": 3, "internal": False},
    "secondary.checkpoints.internal": {"partitions": 1, "replication_factor": 3, "internal": False},
}
OVERRIDES = {"orders": {"retention.ms": "1000", "min.insync.replicas": "2", "leader.replication.throttled.replicas": "*"}}


def rules(**extra):
    return dict(dict(topics=".*", exclude=None, rename_prefix="", replication_factor=None, exclude_configs=list(DEFAULT_EXCLUDED_CONFIGS)), **extra)


def test_internal_topics_are_never_copied_and_regexes_match_whole_names():
    assert selected_source_topics(SOURCE, rules()) == ["orders", "orders-tmp", "payments"]
    assert selected_source_topics(SOURCE, rules(topics="orders.*", exclude=".*-tmp")) == ["orders"]
    assert selected_source_topics(SOURCE, rules(topics="order")) == []


def test_entries_copy_partitions_overrides_and_cap_the_replication_factor():
    entries = copied_entries(SOURCE, OVERRIDES, rules(rename_prefix="primary."), target_live_brokers=2)
    by_name = {entry["name"]: entry for entry in entries}
    assert sorted(by_name) == ["primary.orders", "primary.orders-tmp", "primary.payments"]
    assert by_name["primary.orders"] == {
        "label": "copy_from topic 'orders'", "name": "primary.orders", "state": "present",
        "partitions": 8, "replication_factor": 2, "configs": {"retention.ms": "1000"},
    }
    assert by_name["primary.payments"]["replication_factor"] == 1


def test_explicit_replication_factor_and_explicit_entries_win():
    copied = copied_entries(SOURCE, {}, rules(topics="orders|payments", replication_factor=1), target_live_brokers=3)
    assert {entry["replication_factor"] for entry in copied} == {1}
    merged = merge_entries(copied, [{"label": "topics[0]", "name": "orders", "partitions": 12}])
    assert [entry["name"] for entry in merged] == ["payments", "orders"]
    assert merged[-1]["partitions"] == 12


def test_bad_regexes_are_named():
    problems = copy_rule_problems(rules(topics="(", exclude_configs=["ok", "["]))
    assert len(problems) == 2
    assert problems[0].startswith("copy_from.topics: '('") and problems[1].startswith("copy_from.exclude_configs: '['")
