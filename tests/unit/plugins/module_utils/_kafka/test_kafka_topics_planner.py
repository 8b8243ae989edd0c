# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planner decision tables: entry x current state -> plan, errors and warnings (no cluster involved)."""
from __future__ import annotations

import json

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topics import (
    canonical_config_value,
    config_value_text,
    config_values_equal,
    is_protected_topic,
    plan_topics,
    topic_name_problem,
)

EXISTING = {"orders": {"partitions": 4, "replication_factor": 1, "configs": {"retention.ms": "604800000", "cleanup.policy": "delete"}}}


def entry(name="orders", state="present", label=None, **fields):
    return dict(dict(label=label or f"topics[{name}]", name=name, state=state, partitions=None, replication_factor=None, configs={}), **fields)


def plan_for(*entries, current=None, live_brokers=3, broker_defaults=True, allow_internal=False):
    return plan_topics(list(entries), EXISTING if current is None else current, live_brokers, broker_defaults, allow_internal)


# entry fields, expected (creates, partition_increases, config_updates, deletions)
DECISIONS = [
    ("new topic, all given", entry("new", partitions=3, replication_factor=2, configs={"retention.ms": 1000}),
     ({"new": {"partitions": 3, "replication_factor": 2, "configs": {"retention.ms": "1000"}}}, {}, {}, [])),
    ("new topic, broker defaults", entry("new"), ({"new": {"partitions": None, "replication_factor": None, "configs": {}}}, {}, {}, [])),
    ("existing, same", entry(partitions=4, configs={"retention.ms": "604800000"}), ({}, {}, {}, [])),
    ("existing, nothing asked", entry(), ({}, {}, {}, [])),
    ("existing, more partitions", entry(partitions=6), ({}, {"orders": 6}, {}, [])),
    ("existing, int equals string", entry(configs={"retention.ms": 604800000}), ({}, {}, {}, [])),
    ("existing, config differs", entry(configs={"retention.ms": 1, "cleanup.policy": "delete"}), ({}, {}, {"orders": {"retention.ms": "1"}}, [])),
    ("existing, key not set yet", entry(configs={"segment.ms": 1000}), ({}, {}, {"orders": {"segment.ms": "1000"}}, [])),
    ("existing, grow and configure", entry(partitions=8, configs={"cleanup.policy": "compact"}),
     ({}, {"orders": 8}, {"orders": {"cleanup.policy": "compact"}}, [])),
    ("absent, exists", entry(state="absent"), ({}, {}, {}, ["orders"])),
    ("absent, missing", entry("gone", state="absent"), ({}, {}, {}, [])),
    ("absent, internal allowed", entry("__consumer_offsets", state="absent"), ({}, {}, {}, [])),
]


@pytest.mark.parametrize("case, topic, expected", DECISIONS, ids=[row[0] for row in DECISIONS])
def test_decisions(case, topic, expected):
    plan = plan_for(topic, allow_internal=True)
    assert plan.errors == []
    assert (plan.creates, plan.partition_increases, plan.config_updates, plan.deletions) == expected
    assert plan.changed == any(expected)
    assert set(plan.changes) == set(expected[0]) | set(expected[1]) | set(expected[2]) | set(expected[3])


# entry, plan options, fragment the error must contain
REFUSALS = [
    (entry("bad name"), {}, "must be 1 to 249 characters"),
    (entry("x" * 250), {}, "must be 1 to 249 characters"),
    (entry("."), {}, "'.' is not allowed"),
    (entry(".."), {}, "'..' is not allowed"),
    (entry("new", partitions=0), {}, "partitions must be an integer >= 1, got 0"),
    (entry("new", replication_factor=-1), {}, "replication_factor must be an integer >= 1"),
    (entry("new", replication_factor=4), {}, "replication_factor 4 is more than the 3 live broker(s)"),
    (entry(partitions=2), {}, "has 4 partitions and Kafka cannot remove partitions"),
    (entry("new", partitions=1), {"broker_defaults": False}, "set partitions and replication_factor"),
    (entry("new", configs={"retention.ms": None}), {}, "config retention.ms needs a value"),
    (entry("new", state="gone"), {}, "state must be one of present, absent"),
    (entry("__consumer_offsets", state="absent"), {}, "set allow_internal=true"),
    (entry("heartbeats", state="absent"), {}, "internal topic"),
    (entry("primary.heartbeats", state="absent"), {}, "internal topic"),
    (entry("mm2-offset-syncs.secondary.internal", state="absent"), {}, "internal topic"),
    (entry("mm2-configs.primary", state="absent"), {}, "internal topic"),
    # ReplicationPolicy.isInternalTopic: Connect's "-internal" names too
    (entry("connect-status-internal", state="absent"), {}, "internal topic"),
    (entry("mm2-offset-syncs_secondary_internal", state="absent"), {}, "internal topic"),
]


@pytest.mark.parametrize("topic, options, fragment", REFUSALS, ids=[f"{row[0]['name'][:20]}-{row[2][:25]}" for row in REFUSALS])
def test_refusals_name_the_entry_and_plan_nothing_for_it(topic, options, fragment):
    plan = plan_for(topic, **options)
    assert len(plan.errors) == 1
    assert plan.errors[0].startswith(f"{topic['label']} ({topic['name']!r}): ")
    assert fragment in plan.errors[0]
    assert topic["name"] not in plan.changes


def test_a_batch_names_every_bad_entry_and_keeps_planning_the_good_ones():
    plan = plan_for(entry("ok", partitions=1), entry("bad name"), entry(partitions=1), entry("__x", state="absent"))
    assert [error.split(":")[0] for error in plan.errors] == ["topics[bad name] ('bad name')", "topics[orders] ('orders')", "topics[__x] ('__x')"]
    assert plan.error_message().startswith("3 problem(s) with the requested topics, nothing was changed: ")
    assert list(plan.creates) == ["ok"]


def test_duplicate_names_are_refused():
    plan = plan_for(entry("t", label="topics[0]"), entry("t", label="topics[3]"))
    assert plan.errors == ["topics[3] ('t'): topic is listed more than once (also topics[0])"]


def test_replication_factor_change_is_reported_not_planned():
    plan = plan_for(entry(replication_factor=3))
    assert not plan.changed and plan.errors == []
    assert plan.replication_factor_mismatches == {"orders": {"current": 1, "requested": 3}}
    assert "not changed" in plan.warnings[0] and "reassignment" in plan.warnings[0]


def test_a_copy_leaves_a_target_with_more_partitions_as_it_is_and_says_so():
    """copy_from's entries: the target made with more partitions (by hand, or by MirrorMaker 1 through auto-create) is no
    error, where an explicit entry asking for fewer is; its configs are still aligned."""
    copy = entry(label="copy_from topic 'orders'", partitions=2, configs={"retention.ms": 1000}, keep_more_partitions=True)
    plan = plan_for(copy)
    assert plan.errors == [] and plan.partition_increases == {} and plan.config_updates == {"orders": {"retention.ms": "1000"}}
    assert plan.warnings == ["copy_from topic 'orders' ('orders'): has 4 partitions, more than the 2 of its source; left as it is (Kafka cannot "
                             "remove partitions): MirrorMaker 1 spreads the records over them by key, MirrorMaker 2 leaves the extra ones empty"]
    assert plan_for(entry(partitions=2)).errors != []


def test_changes_and_diff_show_only_what_changes():
    plan = plan_for(entry(partitions=6, configs={"retention.ms": 1000, "cleanup.policy": "delete"}), entry("gone", state="absent"),
                    current=dict(EXISTING, gone={"partitions": 2, "replication_factor": 1, "configs": {}}))
    assert plan.changes["orders"] == {
        "action": "update",
        "before": {"partitions": 4, "configs": {"retention.ms": "604800000"}},
        "after": {"partitions": 6, "configs": {"retention.ms": "1000"}},
    }
    assert plan.changes["gone"] == {"action": "delete", "before": {"partitions": 2, "replication_factor": 1}, "after": None}
    diff = {entry["before_header"]: entry for entry in plan.diff()}
    assert json.loads(diff["topic orders"]["after"]) == plan.changes["orders"]["after"]
    assert diff["topic gone"]["after"] == ""
    assert plan.result()["updated"] == ["orders"] and plan.result()["deleted"] == ["gone"]


@pytest.mark.parametrize(
    "current, desired, equal",
    [
        ("604800000", 604800000, True),
        ("604800000", "604800000.0", True),
        ("0.5", 0.50, True),
        ("true", True, True),
        ("false", "False", True),
        ("compact,delete", ["compact", "delete"], True),
        ("compact,delete", "compact, delete", True),
        ("compact", "delete", False),
        ("1000", 1001, False),
        (None, "1", False),
        ("producer", "Producer", False),
    ],
)
def test_config_values_compare_normalized(current, desired, equal):
    assert config_values_equal(current, desired) is equal


def test_config_values_are_sent_the_way_kafka_reads_them():
    assert config_value_text(True) == "true"
    assert config_value_text(["compact", "delete"]) == "compact,delete"
    assert config_value_text(604800000) == "604800000"
    assert canonical_config_value(None) is None


@pytest.mark.parametrize("name", ["orders", "a.b_c-d", "x" * 249, "..."])
def test_legal_names(name):
    assert topic_name_problem(name) is None


@pytest.mark.parametrize("name, protected", [("__consumer_offsets", True), ("heartbeats", True), ("primary.heartbeats", True),
                                             ("primary.checkpoints.internal", True), ("mm2-status.primary.internal", True),
                                             # Internal before Kafka 4.0 only (KIP-1074): still guarded, whatever the release.
                                             ("ops.internal", True), ("primary.ops.internal", True), ("ops-internal", True),
                                             ("connect-status-internal", True), ("connect-offsets-internal", True),
                                             ("orders", False), ("primary.orders", False)])
def test_protected_topics(name, protected):
    assert is_protected_topic(name) is protected


def test_the_deletion_guard_does_not_follow_the_release():
    """A topic MirrorMaker 2 4.x replicates (ops.internal, KIP-1074) is copied by copy_from with mirrormaker_version 4.x, and
    still needs allow_internal to be deleted: the guard keeps every name some release treats as internal."""
    for name in ("ops.internal", "primary.ops.internal", "connect-status-internal"):
        current = {name: {"partitions": 1, "replication_factor": 1, "configs": {}}}
        refused = plan_for(entry(name, state="absent"), current=current)
        assert len(refused.errors) == 1 and "is a Kafka or MirrorMaker 2 internal topic; set allow_internal=true" in refused.errors[0]
        assert refused.deletions == []
        assert plan_for(entry(name, state="absent"), current=current, allow_internal=True).deletions == [name]
        # Creating or growing one needs nothing (copy_from pre-creates primary.ops.internal for MirrorMaker 2 4.x).
        created = plan_for(entry(name, partitions=2), current={})
        assert created.errors == [] and list(created.creates) == [name]
