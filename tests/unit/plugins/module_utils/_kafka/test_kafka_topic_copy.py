# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""copy_from: which source topics become which target entries."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_copy import (
    DEFAULT_EXCLUDED_CONFIGS,
    config_sync_warnings,
    copied_entries,
    copy_rule_problems,
    left_out_of_copies,
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


# A source as MirrorMaker 2 meets it on a cluster that is also a target and runs Connect: user topics named *.internal and
# *-internal beside MirrorMaker 2's and Kafka's own.
INTERNAL_NAMES_SOURCE = {name: {"partitions": 1, "replication_factor": 1, "internal": name.startswith("__")} for name in (
    "orders", "ops.internal", "ops-internal", "connect-status-internal",
    "mm2-offsets.x.internal", "mm2-configs.x.internal", "mm2-offset-syncs.primary.internal", "x.checkpoints.internal",
    "__consumer_offsets", "__transaction_state", "heartbeats", "x.heartbeats", "mm2-scratch")}
ALWAYS_LEFT_OUT = ["mm2-offsets.x.internal", "mm2-configs.x.internal", "mm2-offset-syncs.primary.internal", "x.checkpoints.internal",
                   "__consumer_offsets", "__transaction_state", "heartbeats", "x.heartbeats", "mm2-scratch"]


@pytest.mark.parametrize("version", ["4.0", "4.0.0", "4.3.1"])
@pytest.mark.parametrize("naming", [{}, {"source_alias": "primary"}, {"source_alias": "primary", "replication_policy": "identity"},
                                    {"rename_prefix": "primary."}])
def test_from_4_0_a_user_internal_topic_is_copied(version, naming):
    """KIP-1074 (KAFKA-17200): MirrorMaker 2 4.x's ReplicationPolicy.isInternalTopic is isMM2InternalTopic (startsWith("mm2")
    && endsWith(internalSuffix()) || isCheckpointsTopic) or Kafka's (__*, .*), so it replicates ops.internal, ops-internal and
    Connect's connect-status-internal of a source that runs Connect; MirrorMaker 2's own, Kafka's and the heartbeats topics
    stay out, as do mm2- names (kafka_topic_copy's own rule)."""
    selected = selected_source_topics(INTERNAL_NAMES_SOURCE, rules(mirrormaker_version=version, **naming))
    assert selected == ["connect-status-internal", "ops-internal", "ops.internal", "orders"]
    assert not any(left_out_of_copies(name, rules(mirrormaker_version=version, **naming)) for name in selected)
    assert all(left_out_of_copies(name, rules(mirrormaker_version=version, **naming)) for name in ALWAYS_LEFT_OUT)


@pytest.mark.parametrize("version", ["2.4.1", "3.0.0", "3.9", "3.9.2", None])
@pytest.mark.parametrize("naming", [{}, {"source_alias": "primary"}, {"rename_prefix": "primary."}])
def test_before_4_0_and_with_the_release_unknown_no_internal_name_is_copied(version, naming):
    """2.4.0-3.9 ReplicationPolicy.isInternalTopic: every name ending in .internal or -internal; the release not given keeps
    that rule (it leaves out more)."""
    assert selected_source_topics(INTERNAL_NAMES_SOURCE, rules(mirrormaker_version=version, **naming)) == ["orders"]
    assert left_out_of_copies("ops.internal", rules(mirrormaker_version=version, **naming))


def test_the_release_decides_what_copy_from_exclude_can_still_narrow():
    """copy_from.exclude (mirror.yml passes MirrorMaker 2's default topics.exclude) narrows what the release replicates; it
    cannot bring back what the release treats as internal."""
    assert selected_source_topics(INTERNAL_NAMES_SOURCE, rules(mirrormaker_version="4.3.1", exclude=r".*\.internal")) == [
        "connect-status-internal", "ops-internal", "orders"]
    assert selected_source_topics(INTERNAL_NAMES_SOURCE, rules(mirrormaker_version="3.9.2", exclude="tmp.*")) == ["orders"]


@pytest.mark.parametrize("version, selected", [
    # 3.1-3.9 isInternalTopic: also endsWith(internalSuffix()), `_internal` with separator `_` (KIP-690).
    ("3.9.2", ["orders"]),
    (None, ["orders"]),
    # 4.x: `<separator>internal` names are internal only when MirrorMaker 2's (mm2* or checkpoints).
    ("4.3.1", ["ops.internal", "ops_internal", "orders"]),
])
def test_the_internal_rule_uses_the_flow_s_separator(version, selected):
    """DefaultReplicationPolicy.isMM2InternalTopic / isCheckpointsTopic with replication.policy.separator `_`: the checkpoints
    topic of a flow into the source (`x_checkpoints_internal`) is MirrorMaker 2's own in every release."""
    source = {name: {"partitions": 1, "replication_factor": 1, "internal": False}
              for name in ("orders", "ops_internal", "ops.internal", "x_checkpoints_internal", "mm2-offset-syncs_primary_internal")}
    naming = dict(source_alias="primary", replication_policy_separator="_", mirrormaker_version=version)
    assert selected_source_topics(source, rules(**naming)) == selected


def test_a_4_x_copy_pre_creates_the_remote_topic_of_a_user_internal_topic():
    entries = copied_entries(INTERNAL_NAMES_SOURCE, {}, rules(source_alias="primary", mirrormaker_version="4.3.1", topics="ops.*|orders"),
                             target_live_brokers=3)
    assert [entry["name"] for entry in entries] == ["primary.ops-internal", "primary.ops.internal", "primary.orders"]
    entries = copied_entries(INTERNAL_NAMES_SOURCE, {}, rules(source_alias="primary", mirrormaker_version="3.9.2", topics="ops.*|orders"),
                             target_live_brokers=3)
    assert [entry["name"] for entry in entries] == ["primary.orders"]


def test_entries_copy_partitions_overrides_and_cap_the_replication_factor():
    entries = copied_entries(SOURCE, OVERRIDES, rules(rename_prefix="primary."), target_live_brokers=2)
    by_name = {entry["name"]: entry for entry in entries}
    assert sorted(by_name) == ["primary.orders", "primary.orders-tmp", "primary.payments"]
    assert by_name["primary.orders"] == {
        "label": "copy_from topic 'orders'", "name": "primary.orders", "state": "present",
        "partitions": 8, "replication_factor": 2, "configs": {"retention.ms": "1000"}, "keep_more_partitions": True,
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


MIRRORED_SOURCE = {
    "orders": {"partitions": 2, "replication_factor": 1, "internal": False},
    "app-heartbeats": {"partitions": 1, "replication_factor": 1, "internal": False},
    "heartbeats": {"partitions": 1, "replication_factor": 1, "internal": False},
}


def test_copies_take_the_names_mirrormaker_2_writes_under_the_identity_policy():
    """IdentityReplicationPolicy.formatRemoteTopic (connect/mirror-client, Kafka 3.0+): `if (looksLikeHeartbeat(topic))
    return super.formatRemoteTopic(sourceClusterAlias, topic); else return topic;` with looksLikeHeartbeat =
    `topic != null && topic.endsWith(heartbeatsTopic())`. So `orders` stays `orders` while `app-heartbeats` is written as
    `primary.app-heartbeats` (DefaultReplicationPolicy.formatRemoteTopic: alias + separator + topic). A plain prefix of ''
    pre-created `app-heartbeats`, a topic MirrorMaker 2 never writes. The source's own `heartbeats` is MM2's, never copied."""
    entries = copied_entries(MIRRORED_SOURCE, {}, rules(source_alias="primary", replication_policy="identity"), target_live_brokers=1)
    assert [entry["name"] for entry in entries] == ["primary.app-heartbeats", "orders"]


@pytest.mark.parametrize("policy, separator, names", [
    # DefaultReplicationPolicy.formatRemoteTopic: sourceClusterAlias + separator + topic, for every topic.
    (None, None, ["primary.app-heartbeats", "primary.orders"]),
    ("default", "_", ["primary_app-heartbeats", "primary_orders"]),
    # IdentityReplicationPolicy.formatRemoteTopic defers to DefaultReplicationPolicy with the configured separator.
    ("identity", "_", ["orders", "primary_app-heartbeats"]),
])
def test_copies_follow_policy_and_separator(policy, separator, names):
    entries = copied_entries(MIRRORED_SOURCE, {}, rules(source_alias="primary", replication_policy=policy,
                                                        replication_policy_separator=separator), target_live_brokers=1)
    assert sorted(entry["name"] for entry in entries) == names


@pytest.mark.parametrize("extra, message", [
    (dict(source_alias="primary", rename_prefix="primary."), "copy_from.rename_prefix and copy_from.source_alias both name the copies"),
    (dict(replication_policy="identity"), "need copy_from.source_alias"),
    (dict(source_alias=" "), "copy_from.source_alias must not be empty"),
    (dict(source_alias="primary", replication_policy="prefix"), "replication policy 'prefix' is not one of default, identity"),
])
def test_naming_options_that_cannot_work_are_refused(extra, message):
    problems = copy_rule_problems(rules(**extra))
    assert any(message in problem for problem in problems), problems


# orders has retention.ms=1000 and min.insync.replicas=2 on the source; the copy carries retention.ms only (MM2's exclude list).
COPIED = copied_entries(SOURCE, OVERRIDES, rules(source_alias="primary"), target_live_brokers=3)
EXPLICIT = [{"label": "topics[0]", "name": "primary.orders", "state": "present",
             "configs": {"retention.ms": 1000, "segment.ms": "60000", "min.insync.replicas": "1"}}]


@pytest.mark.parametrize("version, undone", [
    # 2.7.0 MirrorSourceConnector.syncTopicConfigs -> updateTopicConfigs: AdminClient.alterConfigs (deprecated) with
    # targetConfig(), the source's non-default, non-excluded entries: every other override of the remote topic is dropped,
    # an excluded key (min.insync.replicas) included. retention.ms equals the source's (1000 == "1000"): it stays.
    ("2.7.0", "min.insync.replicas=1, segment.ms=60000"),
    ("3.4.1", "min.insync.replicas=1, segment.ms=60000"),
    # 3.9 syncTopicConfigs -> incrementalAlterConfigs: SET the source's overrides, DELETE entries the source has at their
    # default (config.isDefault() && !shouldReplicateSourceDefault); targetConfig() drops excluded keys first, so
    # min.insync.replicas is left alone; segment.ms (a default on the source) is deleted.
    ("3.9.0", "segment.ms=60000"),
    (None, "min.insync.replicas=1, segment.ms=60000"),
])
def test_configs_the_topic_config_sync_undoes_are_warned_about_per_release(version, undone):
    [warning] = config_sync_warnings(COPIED, EXPLICIT, rules(source_alias="primary", mirrormaker_version=version))
    assert warning.startswith("topics[0] sets %s on primary.orders, the remote topic of copy_from topic 'orders'" % undone), warning
    assert ("Kafka %s" % version if version else "before 3.5") in warning and "sync.topic.configs.enabled=false" in warning


def test_no_warning_when_the_sync_is_off_or_keeps_the_configs():
    assert config_sync_warnings(COPIED, EXPLICIT, rules(source_alias="primary", sync_topic_configs=False)) == []
    same = [dict(EXPLICIT[0], configs={"retention.ms": "1000"})]
    assert config_sync_warnings(COPIED, same, rules(source_alias="primary", mirrormaker_version="2.7.0")) == []
    excluded_only = [dict(EXPLICIT[0], configs={"min.insync.replicas": "1"})]
    assert config_sync_warnings(COPIED, excluded_only, rules(source_alias="primary", mirrormaker_version="3.5.0")) == []
    not_mirrored = [dict(EXPLICIT[0], name="dead-letters")]
    assert config_sync_warnings(COPIED, not_mirrored, rules(source_alias="primary", mirrormaker_version="2.7.0")) == []
    # Copies named by a prefix are not known to be MirrorMaker 2's remote topics.
    prefixed = copied_entries(SOURCE, OVERRIDES, rules(rename_prefix="primary."), target_live_brokers=3)
    assert config_sync_warnings(prefixed, EXPLICIT, rules(rename_prefix="primary.", mirrormaker_version="2.7.0")) == []


def test_a_bad_mirrormaker_version_is_refused():
    assert any("copy_from.mirrormaker_version" in problem for problem in copy_rule_problems(rules(mirrormaker_version="three")))


def test_the_identity_policy_is_refused_for_a_release_without_it():
    """IdentityReplicationPolicy is in connect/mirror-client from 3.0.0 on (KAFKA-9726); MirrorMaker 2 of 2.7 cannot load it."""
    [problem] = copy_rule_problems(rules(source_alias="primary", replication_policy="identity", mirrormaker_version="2.7.0"))
    assert problem.startswith("copy_from: replication policy identity needs MirrorMaker 2 of Kafka 3.0 or later") and "Kafka 2.7.0" in problem
    assert copy_rule_problems(rules(source_alias="primary", replication_policy="identity", mirrormaker_version="3.0.0")) == []
