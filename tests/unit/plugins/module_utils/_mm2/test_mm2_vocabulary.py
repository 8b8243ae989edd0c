# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 2's vocabulary (plugins/module_utils/_mm2) against Apache Kafka's connect/mirror sources.

Every expected value below was worked out by hand from the Java method named in the test (tags 2.4.1, 3.0.0, 3.1.0,
3.5.0, 3.5.2 and trunk of apache/kafka, connect/mirror and connect/mirror-client; for 4.x, KIP-1074/KAFKA-17200's
ReplicationPolicy, DefaultReplicationPolicy and DefaultTopicFilter), not by running the code under test.
"""
import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.findings import ERROR, WARNING, finding_text, min_insync_findings
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.internal_records import decode_records
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import FlowNames, ReplicationPolicy, offset_syncs_cluster_alias
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import (
    DEFAULT_GROUPS_EXCLUDE,
    DEFAULT_TOPICS_EXCLUDE,
    DEFAULT_TOPICS_EXCLUDE_4,
    alternation,
    compile_patterns,
    pattern_problems,
    split_patterns,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import OffsetSync
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.selection import MirrorFilter, default_topics_exclude, validated_topics
from tests.support.checkout import REPO

V2_4_1, V3_0, V3_1, V3_5_1, V3_5_2 = (2, 4, 1), (3, 0, 0), (3, 1, 0), (3, 5, 1), (3, 5, 2)
V3_9_2, V4_0, V4_3_1 = (3, 9, 2), (4, 0, 0), (4, 3, 1)


# ----------------------------------------------------------------------------- DefaultReplicationPolicy


@pytest.mark.parametrize("separator, source, topic, remote", [
    (".", "A", "orders", "A.orders"),
    ("_", "A", "orders", "A_orders"),
    (".", "A", "B.orders", "A.B.orders"),
    (".", "A", "heartbeats", "A.heartbeats"),
])
def test_default_policy_format_remote_topic(separator, source, topic, remote):
    """DefaultReplicationPolicy.formatRemoteTopic: sourceClusterAlias + separator + topic."""
    assert ReplicationPolicy("default", separator).remote_topic(source, topic) == remote


@pytest.mark.parametrize("topic, source, upstream", [
    ("A.orders", "A", "orders"),
    ("A.B.orders", "A", "B.orders"),
    ("orders", None, None),          # split gives one part: not a remote topic
    ("A.", None, None),              # Pattern.split drops the trailing empty string: one part
    (".orders", "", "orders"),       # a leading empty string is kept: the source alias is ""
    ("A..orders", "A", ".orders"),
])
def test_default_policy_topic_source_and_upstream_topic(topic, source, upstream):
    """DefaultReplicationPolicy.topicSource (separatorPattern.split(topic), parts[0] when 2+ parts) and upstreamTopic."""
    policy = ReplicationPolicy("default", ".")
    assert policy.topic_source(topic) == source
    assert policy.upstream_topic(topic) == upstream


def test_default_policy_original_topic_recurses_upstream():
    """ReplicationPolicy.originalTopic: upstreamTopic until null."""
    policy = ReplicationPolicy("default", ".")
    assert policy.original_topic("B.A.orders") == "orders"
    assert policy.original_topic("orders") == "orders"


# ----------------------------------------------------------------------------- IdentityReplicationPolicy


@pytest.mark.parametrize("topic, remote", [
    ("orders", "orders"),
    ("heartbeats", "A.heartbeats"),
    ("app-heartbeats", "A.app-heartbeats"),   # looksLikeHeartbeat: topic.endsWith("heartbeats")
    ("B.heartbeats", "A.B.heartbeats"),
    ("heartbeats-app", "heartbeats-app"),
])
def test_identity_policy_format_remote_topic(topic, remote):
    """IdentityReplicationPolicy.formatRemoteTopic: unchanged unless looksLikeHeartbeat, then DefaultReplicationPolicy's."""
    assert ReplicationPolicy("identity", ".").remote_topic("A", topic) == remote


def test_identity_policy_topic_source_and_upstream_topic():
    """IdentityReplicationPolicy.topicSource (source.cluster.alias) and upstreamTopic (the topic itself), heartbeats deferred."""
    policy = ReplicationPolicy("identity", ".", source_cluster_alias="A")
    assert policy.topic_source("orders") == "A"
    assert policy.upstream_topic("orders") == "orders"
    assert policy.topic_source("B.heartbeats") == "B"
    assert policy.upstream_topic("B.heartbeats") == "heartbeats"
    assert ReplicationPolicy("identity", ".").topic_source("orders") is None


@pytest.mark.parametrize("kind, topic, heartbeats", [
    ("default", "heartbeats", True),
    ("default", "A.heartbeats", True),
    ("default", "B.A.heartbeats", True),
    ("default", "app-heartbeats", False),     # originalTopic("app-heartbeats") is itself
    ("default", "A.app-heartbeats", False),
    ("identity", "heartbeats", True),
    ("identity", "A.heartbeats", True),
    ("identity", "app-heartbeats", False),    # named like one (A.app-heartbeats remote) but not a heartbeats topic
    ("identity", "orders", False),
])
def test_is_heartbeats_topic(kind, topic, heartbeats):
    """ReplicationPolicy.isHeartbeatsTopic (3.1+) / MirrorSourceConnector.isHeartbeatTopic: "heartbeats".equals(originalTopic(topic))."""
    assert ReplicationPolicy(kind, ".").is_heartbeats_topic(topic) is heartbeats


# ----------------------------------------------------------------------------- internal topics


@pytest.mark.parametrize("version, separator, topic, internal", [
    (V2_4_1, ".", "A.checkpoints.internal", True),
    (V2_4_1, ".", "connect-offsets-internal", True),   # "-internal": Connect's default names
    (V2_4_1, ".", "__consumer_offsets", True),
    (V2_4_1, ".", ".hidden", True),
    (V2_4_1, ".", "orders", False),
    (V2_4_1, "_", "A_checkpoints_internal", False),    # before 3.1 the separator is not part of the rule
    (V3_1, "_", "A_checkpoints_internal", True),       # isMM2InternalTopic: endsWith(internalSuffix())
    (V3_1, "_", "A.checkpoints.internal", True),
    (V3_1, "_", "orders_internal", True),
    (V3_1, ".", "orders_internal", False),
    (None, "-", "x-internal", True),
    (V3_1, ".", "internal", False),
])
def test_is_internal_topic(version, separator, topic, internal):
    """ReplicationPolicy.isInternalTopic (2.4.1: .internal, -internal, __, .) and DefaultReplicationPolicy.isMM2InternalTopic (3.1+)."""
    assert ReplicationPolicy("default", separator, version).is_internal_topic(topic) is internal


@pytest.mark.parametrize("topic, before_4, from_4", [
    ("x.internal", True, False),                          # a user topic: replicated from 4.0 on (KIP-1074)
    ("nr-ops.internal", True, False),
    ("x-internal", True, False),                          # Connect's "-internal" names are no longer internal
    ("connect-offsets-internal", True, False),
    ("mm2-offset-syncs.B.internal", True, True),          # isMM2InternalTopic: startsWith("mm2") && endsWith(internalSuffix())
    ("mm2-configs.A.internal", True, True),               # Connect's stores of MirrorMaker's dedicated mode
    ("mm2-status.A.internal", True, True),
    ("mm2foo.internal", True, True),                      # any name starting with "mm2", not only "mm2-"
    ("A.checkpoints.internal", True, True),               # isCheckpointsTopic
    ("B.A.checkpoints.internal", True, True),
    ("__consumer_offsets", True, True),                   # Kafka's: starts with "__"
    ("__transaction_state", True, True),
    (".hidden", True, True),                              # starts with "."
    ("heartbeats", False, False),                         # heartbeats are never internal: they travel
    ("A.heartbeats", False, False),
    ("orders", False, False),
    ("internal", False, False),
])
def test_is_internal_topic_before_and_from_4_0(topic, before_4, from_4):
    """ReplicationPolicy.isInternalTopic, separator '.': 3.9 (.internal, -internal, __, . and isMM2InternalTopic =
    endsWith(internalSuffix())) against 4.0+ (KIP-1074, KAFKA-17200: isMM2InternalTopic || __ || ., with isMM2InternalTopic =
    startsWith("mm2") && endsWith(internalSuffix()) || isCheckpointsTopic)."""
    for version in (V2_4_1, V3_1, V3_9_2):
        assert ReplicationPolicy("default", ".", version).is_internal_topic(topic) is before_4, version
    for version in (V4_0, V4_3_1, (5, 0, 0)):
        assert ReplicationPolicy("default", ".", version).is_internal_topic(topic) is from_4, version
    # Identity extends DefaultReplicationPolicy: the same rule.
    assert ReplicationPolicy("identity", ".", V4_3_1).is_internal_topic(topic) is from_4
    # The release not known: every name some release treats as internal (kafka_topic's deletion guard).
    assert ReplicationPolicy("default", ".").is_internal_topic(topic) is before_4


@pytest.mark.parametrize("separator, enabled, topic, internal", [
    ("_", True, "mm2-offset-syncs_B_internal", True),
    ("_", True, "A_checkpoints_internal", True),
    ("_", True, "orders_internal", False),                # 3.1-3.9: internal (endsWith("_internal")); 4.x: not mm2*
    ("_", True, "mm2-offsets.A.internal", False),         # not the internal suffix; the default topics.exclude covers it
    ("_", True, "x.internal", False),
    ("_", False, "mm2-offset-syncs.B.internal", True),    # internal separator switched off: '.' in MM2's names
    ("_", False, "A.checkpoints.internal", True),
    ("_", False, "mm2-offset-syncs_B_internal", False),
])
def test_is_internal_topic_from_4_0_follows_the_internal_separator(separator, enabled, topic, internal):
    """DefaultReplicationPolicy.isMM2InternalTopic / isCheckpointsTopic (4.x) use internalSuffix() / checkpointsTopicSuffix()."""
    assert ReplicationPolicy("default", separator, V4_3_1, internal_separator_enabled=enabled).is_internal_topic(topic) is internal


def test_checkpoints_and_mm2_internal_topics_follow_the_release():
    policy_3, policy_4 = ReplicationPolicy("default", "_", V3_9_2), ReplicationPolicy("default", "_", V4_3_1)
    for policy in (policy_3, policy_4):
        assert policy.is_checkpoints_topic(policy.checkpoints_topic("A"))
        assert policy.is_mm2_internal_topic(policy.checkpoints_topic("A"))
        assert policy.is_mm2_internal_topic(policy.offset_syncs_topic("B"))
        assert not policy.is_checkpoints_topic(policy.offset_syncs_topic("B"))
    assert policy_3.is_mm2_internal_topic("orders_internal") and not policy_4.is_mm2_internal_topic("orders_internal")
    assert not policy_3.only_mm2_internal_topics and policy_4.only_mm2_internal_topics
    assert not ReplicationPolicy().only_mm2_internal_topics


@pytest.mark.parametrize("version, separator, enabled, checkpoints, offset_syncs", [
    (V2_4_1, "_", True, "A.checkpoints.internal", "mm2-offset-syncs.B.internal"),
    (V3_0, "_", True, "A.checkpoints.internal", "mm2-offset-syncs.B.internal"),
    (V3_1, ".", True, "A.checkpoints.internal", "mm2-offset-syncs.B.internal"),
    (V3_1, "_", True, "A_checkpoints_internal", "mm2-offset-syncs_B_internal"),
    (V3_5_1, "_", False, "A_checkpoints_internal", "mm2-offset-syncs_B_internal"),   # the switch does not exist yet
    (V3_5_2, "_", False, "A.checkpoints.internal", "mm2-offset-syncs.B.internal"),
    (None, "_", True, "A_checkpoints_internal", "mm2-offset-syncs_B_internal"),
])
def test_internal_topic_names(version, separator, enabled, checkpoints, offset_syncs):
    """DefaultReplicationPolicy.checkpointsTopic / offsetSyncsTopic (3.1+, KIP-690; internalSeparator() from 3.5.2,
    KAFKA-15102) and MirrorClientConfig.CHECKPOINTS_TOPIC_SUFFIX / MirrorConnectorConfig.offsetSyncsTopic before 3.1."""
    policy = ReplicationPolicy("default", separator, version, internal_separator_enabled=enabled)
    assert policy.checkpoints_topic("A") == checkpoints
    assert policy.offset_syncs_topic("B") == offset_syncs


def test_identity_policy_uses_the_separator_in_internal_names():
    """IdentityReplicationPolicy extends DefaultReplicationPolicy: the same internal names and heartbeat prefix."""
    policy = ReplicationPolicy("identity", "_", V3_1)
    assert policy.checkpoints_topic("A") == "A_checkpoints_internal"
    assert policy.remote_topic("A", "heartbeats") == "A_heartbeats"


# ----------------------------------------------------------------------------- one flow


@pytest.mark.parametrize("version, location, topic", [
    (V2_4_1, "source", "mm2-offset-syncs.B.internal"),
    (V3_0, "source", "mm2-offset-syncs.B.internal"),
    (V3_0, "target", "mm2-offset-syncs.A.internal"),   # named after the OTHER cluster: the source
    (None, "target", "mm2-offset-syncs.A.internal"),
])
def test_offset_syncs_topic_of_a_flow(version, location, topic):
    """MirrorConnectorConfig.offsetSyncsTopic (3.0+): otherClusterAlias = location source ? target alias : source alias."""
    names = FlowNames("A", "B", offset_syncs_location=location, version=version)
    assert names.offset_syncs_topic == topic


def test_offset_syncs_on_the_target_before_3_0_is_refused_naming_the_version():
    """offset-syncs.topic.location arrived in 3.0 (KIP-716, MirrorConnectorConfig.OFFSET_SYNCS_TOPIC_LOCATION)."""
    with pytest.raises(ValueError, match=r"Kafka 3\.0 or later \(KIP-716\).*Kafka 2\.4\.1"):
        offset_syncs_cluster_alias("A", "B", "target", V2_4_1)


def test_identity_policy_before_3_0_is_refused_naming_the_version():
    """IdentityReplicationPolicy is first in connect/mirror-client at the 3.0.0 tag (KAFKA-9726); 2.7.0 has only
    DefaultReplicationPolicy, so MirrorMaker 2 of 2.x fails on the class name."""
    with pytest.raises(ValueError, match=r"identity needs MirrorMaker 2 of Kafka 3\.0 or later \(IdentityReplicationPolicy, KAFKA-9726\); "
                                         r"this one is Kafka 2\.4\.1"):
        FlowNames("A", "B", "identity", version=V2_4_1)
    assert FlowNames("A", "B", "identity", version=V3_0).remote_topic("orders") == "orders"
    assert FlowNames("A", "B", "default", version=V2_4_1).remote_topic("orders") == "A.orders"


def test_flow_names_with_separator_and_identity():
    """MirrorConnectorConfig.checkpointsTopic / targetHeartbeatsTopic with separator '_' on 3.1+."""
    names = FlowNames("primary", "secondary", "default", "_", "target", (3, 9, 0))
    assert names.checkpoints_topic == "primary_checkpoints_internal"
    assert names.offset_syncs_topic == "mm2-offset-syncs_primary_internal"
    assert names.remote_heartbeats_topic == "primary_heartbeats"
    assert names.heartbeats_topic == "heartbeats"
    assert FlowNames("A", "B", "identity").remote_topic("orders") == "orders"


@pytest.mark.parametrize("kind, topic, cycle", [
    ("default", "B.orders", True),        # came from the target
    ("default", "C.B.orders", True),      # recursion: upstream B.orders came from B
    ("default", "C.orders", False),
    ("default", "orders", False),
    ("identity", "orders", False),        # topicSource is A (source.cluster.alias), upstream equals topic: stop
    ("identity", "B.heartbeats", True),
])
def test_is_cycle(kind, topic, cycle):
    """MirrorSourceConnector.isCycle for the flow A -> B."""
    assert FlowNames("A", "B", kind).is_cycle(topic) is cycle


# ----------------------------------------------------------------------------- patterns and selection


@pytest.mark.parametrize("given, patterns", [
    ("a,b", ["a", "b"]),
    (" a , b ", ["a", "b"]),             # ConfigDef LIST: trimmed, then split on \s*,\s*
    (["a,b"], ["a", "b"]),               # a list renders comma-joined: the same two patterns
    (["a", "b.*"], ["a", "b.*"]),
    ("", []),                            # blank: no pattern (compilePatternList returns null, matches nothing)
    (None, []),
    ("x{1,3}", ["x{1", "3}"]),           # MM2 splits a quantifier's comma too
])
def test_split_patterns_follows_configdef_list(given, patterns):
    """ConfigDef.parseType(LIST) + MirrorUtils.compilePatternList."""
    assert split_patterns(given) == patterns


def test_bad_pattern_is_named_with_its_option():
    assert pattern_problems("groups", ["ok", "bad("]) == ["groups: 'bad(' is not a regular expression (missing ), unterminated subpattern at position 3)"]
    with pytest.raises(ValueError, match=r"groups_exclude: 'bad\('"):
        compile_patterns("ok,bad(", "groups_exclude")


def test_alternation_is_one_whole_name_regex():
    assert alternation(DEFAULT_TOPICS_EXCLUDE) == r"(?:.*[\-\.]internal)|(?:.*\.replica)|(?:__.*)"
    assert alternation(None) == ""


def test_default_excludes_are_mm2s():
    """DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT (2.4.0 to 3.9; 4.0+ after KIP-1074) and DefaultGroupFilter.GROUPS_EXCLUDE_DEFAULT
    (2.4.0 to 4.x), as the Java string literals read."""
    assert split_patterns(".*[\\-\\.]internal, .*\\.replica, __.*") == list(DEFAULT_TOPICS_EXCLUDE)
    assert split_patterns("mm2.*\\.internal, .*\\.replica, __.*") == list(DEFAULT_TOPICS_EXCLUDE_4)
    assert split_patterns("console-consumer-.*, connect-.*, __.*") == list(DEFAULT_GROUPS_EXCLUDE)


@pytest.mark.parametrize("version, expected", [
    (V2_4_1, DEFAULT_TOPICS_EXCLUDE),
    (V3_9_2, DEFAULT_TOPICS_EXCLUDE),
    ((3, 99, 99), DEFAULT_TOPICS_EXCLUDE),
    (V4_0, DEFAULT_TOPICS_EXCLUDE_4),
    (V4_3_1, DEFAULT_TOPICS_EXCLUDE_4),
    (None, DEFAULT_TOPICS_EXCLUDE),        # release not known: the exclude list that leaves out more
])
def test_default_topics_exclude_follows_the_release(version, expected):
    assert default_topics_exclude(version) == expected


def test_the_4_x_default_topics_exclude_matches_only_mm2s_internal_topics():
    regex = compile_patterns(DEFAULT_TOPICS_EXCLUDE_4)
    excluded = [name for name in ("x.internal", "x-internal", "mm2-offset-syncs.B.internal", "mm2-configs.A.internal", "a.replica",
                                  "__consumer_offsets", "A.checkpoints.internal", "orders", "heartbeats") if any(p.fullmatch(name) for p in regex)]
    assert excluded == ["mm2-offset-syncs.B.internal", "mm2-configs.A.internal", "a.replica", "__consumer_offsets"]


@pytest.mark.parametrize("topic, before_4, from_4", [
    ("x.internal", False, True),
    ("x-internal", False, True),
    ("orders", True, True),
    ("mm2-offset-syncs.B.internal", False, False),
    ("mm2-offsets.A.internal", False, False),
    ("A.checkpoints.internal", False, False),
    ("__consumer_offsets", False, False),
    ("orders.replica", False, False),
    ("heartbeats", True, True),            # heartbeats always travel, in every release
    ("C.heartbeats", True, True),
    ("B.x.internal", False, False),        # cycle
])
def test_should_replicate_topic_per_release(topic, before_4, from_4):
    """MirrorSourceConnector.shouldReplicateTopic for A -> B with the release's default topics.exclude and isInternalTopic."""
    assert MirrorFilter(FlowNames("A", "B", version=V3_9_2)).replicates_topic(topic) is before_4
    assert MirrorFilter(FlowNames("A", "B", version=V4_3_1)).replicates_topic(topic) is from_4


def test_a_given_topics_exclude_does_not_bring_back_what_the_release_treats_as_internal():
    """topics.exclude replaces the default, but isInternalTopic still applies: 3.9 never replicates x.internal, 4.x does unless
    excluded; MM2's own topics stay out in both."""
    before, after = (MirrorFilter(FlowNames("A", "B", version=v), topics_exclude="tmp.*") for v in (V3_9_2, V4_3_1))
    assert not before.replicates_topic("x.internal") and after.replicates_topic("x.internal")
    assert not before.replicates_topic("mm2-offset-syncs.B.internal") and not after.replicates_topic("mm2-offset-syncs.B.internal")
    assert not after.replicates_topic("A.checkpoints.internal") and not after.replicates_topic("__consumer_offsets")
    assert not MirrorFilter(FlowNames("A", "B", version=V4_3_1), topics_exclude=r".*\.internal").replicates_topic("x.internal")


@pytest.mark.parametrize("topic, replicated", [
    ("orders", True),
    ("orders.replica", False),            # default exclude
    ("A.checkpoints.internal", False),    # internal
    ("heartbeats", True),                 # heartbeats always travel
    ("C.heartbeats", True),
    ("B.orders", False),                  # cycle
    ("mm2-orders", True),                 # an ordinary name for MM2
    ("app-heartbeats", True),             # an ordinary topic: matches topics
])
def test_should_replicate_topic(topic, replicated):
    """MirrorSourceConnector.shouldReplicateTopic for A -> B with the default topics and topics.exclude."""
    assert MirrorFilter(FlowNames("A", "B")).replicates_topic(topic) is replicated


def test_exclude_replaces_the_default_and_heartbeats_ignore_topics():
    """TopicFilterConfig: topics.exclude is one value (given, it replaces the default); heartbeats bypass the filter."""
    selection = MirrorFilter(FlowNames("A", "B"), topics="orders.*", topics_exclude="orders-secret")
    assert selection.replicates_topic("orders.replica")
    assert not selection.replicates_topic("orders-secret")
    assert not selection.replicates_topic("payments")
    assert selection.replicates_topic("heartbeats")
    assert selection.data_topics(["orders", "heartbeats", "payments", "orders-internal", "orders_internal"]) == ["orders", "orders_internal"]


def test_group_filter():
    """DefaultGroupFilter.shouldReplicateGroup: groups minus groups.exclude (default console-consumer-.*, connect-.*, __.*)."""
    selection = MirrorFilter(FlowNames("A", "B"), groups="app-a,app-b")
    assert selection.replicates_group("app-b")
    assert not selection.replicates_group("app-c")
    assert not MirrorFilter(FlowNames("A", "B")).replicates_group("connect-mm2")


# ----------------------------------------------------------------------------- findings and internal records


def test_replication_factor_below_min_insync_replicas_is_an_error():
    below = min_insync_findings("B", "replication_factor", 1, 2)
    assert [f["severity"] for f in below] == [ERROR]
    assert finding_text(below[0]).endswith("Fix: raise replication_factor to at least 2, or lower min.insync.replicas.")
    assert [f["severity"] for f in min_insync_findings("B", "replication_factor", 2, 2)] == [WARNING]
    assert min_insync_findings("B", "replication_factor", 1, 1) == []
    assert min_insync_findings("B", "replication_factor", 3, None) == []


class _Record:
    def __init__(self, key, value, offset, partition=0):
        self.key, self.value, self.offset, self.partition = key, value, offset, partition


def test_internal_records_skip_tombstones_and_report_undecodable():
    sync = OffsetSync("orders", 0, 5, 3)
    records = [_Record(sync.encode_key(), sync.encode_value(), 0), _Record(sync.encode_key(), None, 1), _Record(b"\x00", b"\x01", 2)]
    decoded, problems = decode_records(records, OffsetSync, "mm2-offset-syncs.B.internal")
    assert decoded == [sync]
    assert len(problems) == 1 and problems[0].startswith("mm2-offset-syncs.B.internal[0]@2: ")


def test_validated_topics_are_the_replicated_data_topics_the_validation_selects():
    names = ["orders", "orders-dlq", "payments", "heartbeats", "primary.heartbeats", "mm2-offset-syncs.secondary.internal",
             "primary.checkpoints.internal", "__consumer_offsets", "tmp.scratch", "orders.replica", "mm2-orders", "secondary.orders"]
    flow = FlowNames("primary", "secondary")
    assert validated_topics(names, "orders|payments|tmp.*", None, flow) == ["orders", "payments", "tmp.scratch"]
    assert validated_topics(names, ".*", r"tmp\..*, .*-dlq", flow) == ["mm2-orders", "orders", "payments"]
    # Without the target alias no cycle can be seen: secondary.orders would be replicated back by MM2 only if it came from elsewhere.
    assert "secondary.orders" in validated_topics(names, ".*", None, FlowNames("primary", None))


def test_validated_topics_follow_the_release_that_runs_mirrormaker():
    """KIP-1074: a user topic named *.internal is validated when MirrorMaker 2 4.x replicates it, and only then."""
    names = ["nr-orders", "nr-ops.internal", "nr-ops-internal", "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal",
             "mm2-offsets.primary.internal", "__consumer_offsets", "heartbeats", "primary.heartbeats", "nr-orders.replica"]
    for version in (V2_4_1, V3_9_2, None):
        assert validated_topics(names, "nr-.*", None, FlowNames("primary", "secondary", version=version)) == ["nr-orders"], version
    for version in (V4_0, V4_3_1):
        assert validated_topics(names, "nr-.*", None, FlowNames("primary", "secondary", version=version)) == [
            "nr-ops-internal", "nr-ops.internal", "nr-orders"], version
        assert validated_topics(names, ".*", r".*\.internal", FlowNames("primary", "secondary", version=version)) == [
            "nr-ops-internal", "nr-orders"]


def _declared_choices():
    """(where, option, choices) of every replication-policy and offset-syncs-location option the collection declares in YAML."""
    import ast

    import yaml

    found = []
    for spec_file in sorted(REPO.glob("roles/*/meta/argument_specs.yml")):
        for entry in (yaml.safe_load(spec_file.read_text())["argument_specs"] or {}).values():
            for name, option in (entry.get("options") or {}).items():
                found.append((str(spec_file.relative_to(REPO)), name, option.get("choices")))
    for module in sorted(REPO.glob("plugins/modules/*.py")):
        for node in ast.parse(module.read_text()).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "DOCUMENTATION":
                options = yaml.safe_load(node.value.value).get("options") or {}
                found.extend((str(module.relative_to(REPO)), name, option.get("choices")) for name, option in options.items())
    return found


def test_every_declared_policy_and_location_choice_is_the_vocabularys():
    """YAML cannot import POLICIES: each declaration must list exactly the vocabulary's values, and carry them."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import OFFSET_SYNCS_LOCATIONS, POLICIES

    checked = 0
    for where, name, choices in _declared_choices():
        if name.endswith("replication_policy"):
            assert choices == list(POLICIES), (where, name)
            checked += 1
        elif name.endswith("offset_syncs_topic_location") or name.endswith("offset_syncs_location"):
            assert choices == list(OFFSET_SYNCS_LOCATIONS), (where, name)
            checked += 1
    assert checked >= 8


def test_roles_that_follow_the_mirrormaker2_settings_fall_back_to_its_defaults():
    """failover, mirror_validation and preflight take MirrorMaker 2's naming and sizing from the mirrormaker2_* settings; when
    those are unset their fallback must be what the mirrormaker2 role itself would use, never a second opinion."""
    import re

    import yaml

    mm2_defaults = yaml.safe_load((REPO / "roles/mirrormaker2/defaults/main.yml").read_text())
    follow = re.compile(r"(mirrormaker2_[a-z0-9_]+) \| default\(('[^']*'|\d+)\)")
    checked = 0
    for defaults_file in sorted(REPO.glob("roles/*/defaults/main.yml")) + sorted(REPO.glob("roles/*/meta/argument_specs.yml")):
        if defaults_file.parts[-3] == "mirrormaker2":
            continue
        for variable, fallback in follow.findall(defaults_file.read_text()):
            if variable not in mm2_defaults:
                continue
            assert str(mm2_defaults[variable]) == fallback.strip("'"), (str(defaults_file.relative_to(REPO)), variable, fallback)
            checked += 1
    assert checked >= 10
