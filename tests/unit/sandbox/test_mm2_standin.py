# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MirrorMaker 2 stand-in's configuration: the properties file read like java.util.Properties and MirrorMakerConfig,
topic and group filters, and the names of MM2's topics (each case cites the Kafka class it follows)."""
from pathlib import Path

import pytest

from sandbox.mm2.filters import IncludeExclude, compile_pattern_list, parse_list
from sandbox.mm2.policy import ReplicationPolicy
from sandbox.mm2.properties import load as load_properties
from sandbox.mm2.records import MirrorRecords
from sandbox.mm2.replicator import progress_key
from sandbox.mm2.settings import SettingsError, load

PROPERTIES = """
clusters = primary, secondary
primary.bootstrap.servers = 127.0.1.10:9092
secondary.bootstrap.servers = 127.0.2.10:9092
secondary.offset.storage.replication.factor = 1
replication.factor = 1
primary->secondary.enabled = true
primary->secondary.topics = orders.*, payments
primary->secondary.topics.exclude = orders\\\\.tmp
primary->secondary.emit.checkpoints.interval.seconds = 5
emit.checkpoints.interval.seconds = 60
"""


def settings(tmp_path: Path, text=PROPERTIES, release=(3, 9, 0)):
    path = tmp_path / "mm2.properties"
    path.write_text(text)
    return load(str(path), None, release)


def forward(tmp_path, extra="", release=(3, 9, 0)):
    return next(flow for flow in settings(tmp_path, PROPERTIES + extra, release).flows if flow.enabled)


def test_properties_are_read_like_java_util_properties():
    text = ("# comment\n! also a comment\n  a.key = spaced value  \nb.key:colon\nc.key plain\n"
            "d.key = one, \\\n    two\ne\\=key = x\nf.key = tab\\there \\u0041\ng.key\n")
    assert load_properties(text) == {"a.key": "spaced value  ", "b.key": "colon", "c.key": "plain", "d.key": "one, two",
                                     "e=key": "x", "f.key": "tab\there A", "g.key": ""}


def test_malformed_unicode_escape_is_a_settings_error(tmp_path):
    with pytest.raises(SettingsError, match="malformed"):
        settings(tmp_path, PROPERTIES + "topics = \\u00zz\n")


def test_flows_resolve_pair_keys_over_top_level(tmp_path):
    loaded = settings(tmp_path)
    flows = {flow.name: flow for flow in loaded.flows}
    # The reverse pair has no flow but still runs, for heartbeats (MirrorMakerConfig.clusterPairs()).
    assert set(flows) == {"primary->secondary", "secondary->primary"}
    forward_flow, reverse = flows["primary->secondary"], flows["secondary->primary"]
    assert forward_flow.enabled and not reverse.enabled
    assert forward_flow.number("emit.checkpoints.interval.seconds") == 5
    assert reverse.number("emit.checkpoints.interval.seconds") == 60
    assert forward_flow.number("replication.factor") == 1
    # MirrorMakerConfig.workerConfig: the target's `<alias>.`-prefixed worker settings.
    assert forward_flow.worker["offset.storage.replication.factor"] == "1"
    assert reverse.worker["offset.storage.replication.factor"] == "3"


def test_top_level_offset_storage_wins_over_the_cluster_prefix(tmp_path):
    """workerConfig puts clusterProps(target) first, then the top-level offset.storage* keys over them."""
    flow = forward(tmp_path, "offset.storage.replication.factor = 2\n")
    assert flow.worker["offset.storage.replication.factor"] == "2"


def test_topic_selection(tmp_path):
    """MirrorSourceConnector.shouldReplicateTopic: (filter or heartbeats) and not internal and not a cycle."""
    topics = forward(tmp_path).topics
    assert topics.replicates("orders-eu") and topics.replicates("payments")
    assert not topics.replicates("orders.tmp")  # excluded
    assert not topics.replicates("audit")  # not included
    assert topics.replicates("heartbeats") and topics.replicates("third.heartbeats")  # isHeartbeatsTopic always travels
    assert not topics.replicates("secondary.orders")  # isCycle: it came from the target
    assert not topics.replicates("mm2-offset-syncs.secondary.internal")


def test_pattern_lists_follow_configdef_list_and_compile_pattern_list():
    """ConfigDef Type.LIST splits at commas (blanks around them dropped); compilePatternList joins with | and an empty
    list matches nothing, so `topics = ` replicates no topic at all."""
    assert parse_list(" a , b,c ") == ["a", "b", "c"]
    assert compile_pattern_list("") is None
    assert not IncludeExclude("", "").replicates("anything")
    assert IncludeExclude("orders.*, payments", "").replicates("payments")
    assert not IncludeExclude("orders.*", "orders-tmp").replicates("orders-tmp")


def test_heartbeats_disabled_pair_is_not_run(tmp_path):
    loaded = settings(tmp_path, PROPERTIES + "secondary->primary.emit.heartbeats.enabled = false\n")
    assert [flow.name for flow in loaded.flows] == ["primary->secondary"]


def test_missing_bootstrap_is_reported(tmp_path):
    with pytest.raises(SettingsError, match="secondary.bootstrap.servers is missing"):
        settings(tmp_path, "clusters=primary,secondary\nprimary.bootstrap.servers=a:1\n")


def test_exactly_once_needs_the_target_worker_setting_and_3_5(tmp_path):
    """`<target>.exactly.once.source.support = enabled` (a worker setting of the target's herder), read from 3.5.0."""
    extra = "secondary.exactly.once.source.support = enabled\n"
    assert forward(tmp_path, extra).exactly_once
    assert not forward(tmp_path, extra, (3, 4, 1)).exactly_once
    assert not forward(tmp_path, "exactly.once.source.support = enabled\n").exactly_once  # top level is not a worker key


@pytest.mark.parametrize("release, separator, syncs_topic, checkpoints_topic", [
    # MirrorConnectorConfig.offsetSyncsTopic / checkpointsTopic before 3.1: always dots.
    ((3, 0, 0), "_", "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal"),
    # DefaultReplicationPolicy.offsetSyncsTopic / checkpointsTopic from 3.1 (KIP-690): the separator.
    ((3, 1, 0), "_", "mm2-offset-syncs_secondary_internal", "primary_checkpoints_internal"),
    ((3, 9, 0), ".", "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal"),
])
def test_internal_topic_names_follow_the_separator_from_3_1(tmp_path, release, separator, syncs_topic, checkpoints_topic):
    flow = forward(tmp_path, "replication.policy.separator = %s\n" % separator, release)
    assert (flow.records.offset_syncs_topic, flow.records.checkpoints_topic) == (syncs_topic, checkpoints_topic)
    assert flow.records.remote_topic("orders") == "primary%sorders" % separator


def test_internal_separator_can_be_turned_off_from_3_5_2(tmp_path):
    """KIP-949: replication.policy.internal.topic.separator.enabled=false puts '.' back in the internal names."""
    extra = "replication.policy.separator = _\nreplication.policy.internal.topic.separator.enabled = false\n"
    assert forward(tmp_path, extra).records.checkpoints_topic == "primary.checkpoints.internal"
    assert forward(tmp_path, extra, (3, 5, 1)).records.checkpoints_topic == "primary_checkpoints_internal"  # key unknown there


def test_offset_syncs_on_the_target_are_named_after_the_source(tmp_path):
    """MirrorSourceConfig.offsetSyncsTopic (3.0+): the alias of the *other* cluster than the one holding the topic."""
    flow = forward(tmp_path, "offset-syncs.topic.location = target\n")
    assert flow.offset_syncs_cluster == "secondary"
    assert flow.records.offset_syncs_topic == "mm2-offset-syncs.primary.internal"
    assert forward(tmp_path).records.offset_syncs_topic == "mm2-offset-syncs.secondary.internal"


def test_identity_policy_prefixes_anything_ending_in_heartbeats():
    """IdentityReplicationPolicy.looksLikeHeartbeat: topic.endsWith("heartbeats"), so app-heartbeats is renamed too."""
    policy = ReplicationPolicy(identity=True).for_source("primary")
    assert policy.format_remote_topic("primary", "orders") == "orders"
    assert policy.format_remote_topic("primary", "heartbeats") == "primary.heartbeats"
    assert policy.format_remote_topic("primary", "app-heartbeats") == "primary.app-heartbeats"
    assert policy.topic_source("orders") == "primary"  # source.cluster.alias
    assert policy.upstream_topic("orders") == "orders"


def test_is_internal_topic():
    """ReplicationPolicy.isInternalTopic: `<sep>internal`, `.internal`, `-internal`, `__`, leading '.'."""
    policy = ReplicationPolicy("_", internal_separator="_")
    for name in ("mm2-offset-syncs_b_internal", "x.internal", "connect-offsets-internal", "__consumer_offsets", ".hidden"):
        assert policy.is_internal_topic(name), name
    assert not policy.is_internal_topic("internal-orders")
    assert not ReplicationPolicy().is_internal_topic("a_internal")  # '_internal' is internal only with the '_' separator


def test_user_internal_topics_are_replicated_from_4_0(tmp_path):
    """KIP-1074 (4.0): isInternalTopic and the default topics.exclude cover only MM2's own internal topics and Kafka's, so a
    user topic named `*.internal` / `*-internal` is replicated by 4.x and skipped by every earlier release."""
    text = PROPERTIES.replace("primary->secondary.topics = orders.*, payments", "primary->secondary.topics = .*").replace(
        "primary->secondary.topics.exclude = orders\\\\.tmp\n", "")
    user = ("ops.internal", "audit-internal")
    mm2_own = ("mm2-offset-syncs.secondary.internal", "mm2-offsets.secondary.internal", "primary.checkpoints.internal",
               "secondary.checkpoints.internal", "__consumer_offsets", ".hidden", "orders.replica")
    for release, replicated in (((3, 9, 2), ()), ((4, 0, 0), user), ((4, 3, 1), user)):
        flow = next(f for f in settings(tmp_path, text, release).flows if f.enabled)
        assert tuple(t for t in (*user, *mm2_own, "orders") if flow.topics.replicates(t)) == (*replicated, "orders"), release
    policy = ReplicationPolicy("_", internal_separator="_", only_mm2_internal=True)
    assert policy.is_internal_topic("mm2-offset-syncs_b_internal") and policy.is_internal_topic("a_checkpoints_internal")
    assert not policy.is_internal_topic("x.internal") and not policy.is_internal_topic("mm2-offset-syncs.b.internal")


def test_default_policy_topic_source_splits_like_java():
    """DefaultReplicationPolicy.topicSource: String.split drops trailing empty strings, so "a." is not remote."""
    policy = ReplicationPolicy()
    assert policy.topic_source("primary.orders.v2") == "primary" and policy.upstream_topic("primary.orders.v2") == "orders.v2"
    assert policy.topic_source("orders") is None and policy.topic_source("orders.") is None
    assert policy.original_topic("a.b.heartbeats") == "heartbeats"


def test_checkpoint_of_a_topic_that_came_from_the_target_uses_its_original_name():
    """MirrorCheckpointTask.renameTopicPartition: secondary.orders on primary -> orders on secondary."""
    records = MirrorRecords("primary", "secondary")
    assert records.checkpoint("g", "secondary.orders", 0, 5, 5).topic == "orders"
    assert records.checkpoint("g", "orders", 0, 5, 5).topic == "primary.orders"


def test_records_carry_the_reference_bytes():
    """reference test vectors (Checkpoint / OffsetSync / Heartbeat record formats)."""
    records = MirrorRecords("primary", "secondary")
    sync = records.offset_sync("orders", 3, 1500, 1498)
    assert sync.topic == "mm2-offset-syncs.secondary.internal"
    assert (sync.key.hex(), sync.value.hex()) == ("00066f726465727300000003", "00000000000005dc00000000000005da")
    checkpoint = records.checkpoint_record(records.checkpoint("orders-app", "orders", 3, 1500, 1498))
    assert checkpoint.topic == "primary.checkpoints.internal"
    assert checkpoint.key.hex() == "000a6f72646572732d617070000e7072696d6172792e6f726465727300000003"
    assert checkpoint.value.hex() == "000000000000000005dc00000000000005da0000"
    beat = records.heartbeat(1795300498304)
    assert (beat.topic, beat.key.hex(), beat.value.hex()) == ("heartbeats", "00077072696d61727900097365636f6e64617279", "0000000001a2003f9b80")
    assert MirrorRecords.read_offset_sync(sync.key, sync.value) == ("orders", 3, 1500, 1498)


def test_progress_key_is_connects_json():
    assert progress_key("primary", "orders", 2) == b'["MirrorSourceConnector",{"cluster":"primary","partition":2,"topic":"orders"}]'
