# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job names MirrorMaker 2's internal topics as the release that runs MirrorMaker does (--mirrormaker-version).

Expected names are written by hand from Apache Kafka's connect/mirror-client sources:
- 2.4.1 (to 3.0.x): MirrorClientConfig.CHECKPOINTS_TOPIC_SUFFIX `.checkpoints.internal`, MirrorConnectorConfig.offsetSyncsTopic
  `mm2-offset-syncs.` + target alias + `.internal`: dots whatever replication.policy.separator says;
  ReplicationPolicy.isInternalTopic: `__*`, `.*`, `*.internal`, `*-internal` only.
- 3.1+ (KIP-690): DefaultReplicationPolicy.checkpointsTopic / offsetSyncsTopic put internalSeparator() (the separator) in the
  names, and DefaultReplicationPolicy.isMM2InternalTopic treats `*<separator>internal` as internal.
- 3.5.2+ (KAFKA-15102): MirrorClientConfig.INTERNAL_TOPIC_SEPARATOR_ENABLED=false makes internalSeparator() `.` again.
- 3.0+ (KIP-716): MirrorConnectorConfig.offsetSyncsTopic names the topic after the cluster it is NOT on.
"""
from __future__ import annotations

import struct

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import KafkaVersion

from mirror_validation import cli
from mirror_validation.job import _Run
from mirror_validation.options import JobOptions, job_options
from mirror_validation.kafka_reader import RawRecord
from mirror_validation.naming import parse_release
from mirror_validation.topic_pairs import pair_topics

ARGV = ["--source-bootstrap", "a:9092", "--target-bootstrap", "b:9092", "--topics", ".*", "--source-alias", "primary",
        "--target-alias", "secondary"]


def options(*extra):
    return job_options(cli.given_options(cli.build_parser().parse_args(ARGV + list(extra))), {})


@pytest.mark.parametrize("extra, syncs, checkpoints", [
    # MirrorConnectorConfig.offsetSyncsTopic and MirrorClientConfig.CHECKPOINTS_TOPIC_SUFFIX of 2.4.1: always dots.
    (["--mirrormaker-version", "2.4.1", "--replication-policy-separator", "_"], "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal"),
    # 3.0.0 still has the dots (KIP-690 is 3.1.0); offset-syncs.topic.location=target (KIP-716) names it after the source.
    (["--mirrormaker-version", "3.0.0", "--replication-policy-separator", "_", "--offset-syncs-topic-location", "target"],
     "mm2-offset-syncs.primary.internal", "primary.checkpoints.internal"),
    # DefaultReplicationPolicy.offsetSyncsTopic / checkpointsTopic of 3.9: internalSeparator() is the separator.
    (["--mirrormaker-version", "3.9", "--replication-policy-separator", "_"], "mm2-offset-syncs_secondary_internal", "primary_checkpoints_internal"),
    (["--mirrormaker-version", "3.9.0", "--replication-policy-separator", "_", "--offset-syncs-topic-location", "target"],
     "mm2-offset-syncs_primary_internal", "primary_checkpoints_internal"),
    # DefaultReplicationPolicy.internalSeparator with replication.policy.internal.topic.separator.enabled=false (3.5.2+).
    (["--mirrormaker-version", "3.5.2", "--replication-policy-separator", "_", "--no-internal-topic-separator"],
     "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal"),
    # The switch does not exist before 3.5.2 (KAFKA-15102): 3.5.1 keeps the separator.
    (["--mirrormaker-version", "3.5.1", "--replication-policy-separator", "_", "--no-internal-topic-separator"],
     "mm2-offset-syncs_secondary_internal", "primary_checkpoints_internal"),
    # No release given: the newest rules, as before.
    (["--replication-policy-separator", "_"], "mm2-offset-syncs_secondary_internal", "primary_checkpoints_internal"),
])
def test_internal_topic_names_follow_the_release(extra, syncs, checkpoints):
    names = options(*extra).flow_names()
    assert (names.offset_syncs_topic, names.checkpoints_topic) == (syncs, checkpoints)
    # Remote topics follow the separator in every release (DefaultReplicationPolicy.formatRemoteTopic).
    assert names.remote_topic("orders") == "primary_orders"


def test_a_release_that_cannot_run_the_settings_is_refused_naming_it(capsys):
    """IdentityReplicationPolicy is in connect-mirror-client from 3.0.0 (KAFKA-9726); offset-syncs.topic.location from 3.0.0."""
    with pytest.raises(ValueError, match="Kafka 2.4.1"):
        options("--mirrormaker-version", "2.4.1", "--replication-policy", "identity")
    assert cli.main(ARGV + ["--mirrormaker-version", "2.7.0", "--offset-syncs-topic-location", "target"]) == 2
    assert "bad arguments" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not a Kafka version"):
        options("--mirrormaker-version", "latest")


@pytest.mark.parametrize("text", ["2.4.1", "3.9", "3.9.0", "2.4.1.5.0.3000", " 3.5.2", "10.0"])
def test_the_job_reads_a_release_as_the_collection_does(text):
    """The vendored parse_release is _mm2.versions.KafkaVersion.parse's rule (the job cannot import the collection)."""
    assert parse_release(text) == tuple(KafkaVersion.parse(text))
    assert parse_release("") is None and parse_release(None) is None


# The job against two recorded clusters: what it lists, reads and compares, with MirrorMaker's internal topics named as one
# release names them.
def _string(text):
    return struct.pack(">h", len(text)) + text.encode()


def _sync(topic, partition, upstream, downstream):
    """OffsetSync.serialize: key topic + partition, value upstream + downstream offsets."""
    return _string(topic) + struct.pack(">i", partition), struct.pack(">qq", upstream, downstream)


def _checkpoint(group, topic, partition, upstream, downstream):
    """Checkpoint.serialize: key group + topic + partition, value version 0 + offsets + metadata."""
    return _string(group) + _string(topic) + struct.pack(">i", partition), struct.pack(">hqq", 0, upstream, downstream) + _string("")


def _data(count):
    return [(b"k%d" % offset, b"v%d" % offset) for offset in range(count)]


class RecordedCluster:
    """The reader interface the job's driver uses (kafka_reader), over single-partition topics held in memory."""

    def __init__(self, topics):
        self.records = topics  # {topic: [(key, value)]}

    def topics(self):
        return {name: 1 for name in self.records}

    def offsets(self, topic, partitions):
        return {partition: (0, len(self.records[topic])) for partition in partitions}

    @staticmethod
    def timestamp_types(_topics):
        return {}, None

    def read_ranges(self, ranges):
        for part in ranges:
            for offset in range(part.start, part.end):
                key, value = self.records[part.topic][offset]
                yield part, RawRecord(offset, key, value, (), None)


def clusters(separator_in_internal_names):
    """A flow primary -> secondary with separator `_` as a MirrorMaker writes it: internal topics with '.' (2.4.1-3.0) or
    with '_' (3.1+); `orders_internal` is a user topic on the source (internal for 3.1+ only, so not mirrored by 3.9)."""
    sep = "_" if separator_in_internal_names else "."
    source = {"orders": _data(3), "mm2-offset-syncs%ssecondary%sinternal" % (sep, sep): [_sync("orders", 0, 0, 0)]}
    target = {"primary_orders": _data(3), "primary%scheckpoints%sinternal" % (sep, sep): [_checkpoint("app", "primary_orders", 0, 2, 2)]}
    if not separator_in_internal_names:
        source["orders_internal"] = _data(2)
        target["primary_orders_internal"] = _data(2)
    return RecordedCluster(source), RecordedCluster(target)


def prepared(version, separator_in_internal_names):
    run = _Run(JobOptions(source=None, target=None, topics=".*", source_alias="primary", target_alias="secondary",
                          replication_policy_separator="_", mirrormaker_version=version, catch_up_timeout=0, catch_up_interval=0.01))
    run.prepare(*clusters(separator_in_internal_names))
    return run


def test_2_4_1_with_separator_underscore_finds_its_dotted_offset_syncs_and_checkpoints_and_validates_name_internal():
    """2.4.1: MirrorConnectorConfig.offsetSyncsTopic / MirrorClientConfig.CHECKPOINTS_TOPIC_SUFFIX keep dots;
    ReplicationPolicy.isInternalTopic does not know `_internal`, so MirrorMaker replicates orders_internal and the job compares it."""
    run = prepared("2.4.1", separator_in_internal_names=False)
    assert run.checks["offset_syncs"] == "checked (mm2-offset-syncs.secondary.internal)"
    assert run.checks["checkpoints"] == "checked (primary.checkpoints.internal)"
    assert run.syncs == {(0, 0, 0, 0)}
    assert [(row["group"], row["upstream"]) for row in run.checkpoints] == [("app", 2)]
    expected = [("orders", "primary_orders"), ("orders_internal", "primary_orders_internal")]
    assert [(pair.source_topic, pair.target_topic) for pair in run.pairs] == expected
    assert "Kafka 2.4.1" in run.checks["naming"] and "'.'" in run.checks["naming"]


def test_without_the_release_the_same_2_4_1_mirror_loses_its_checks():
    """The failure mode the release fixes: the newest rules look for `_` names and skip the offset syncs and checkpoints."""
    run = prepared(None, separator_in_internal_names=False)
    assert run.checks["offset_syncs"] == "skipped (mm2-offset-syncs_secondary_internal not found on the source)"
    assert run.checks["checkpoints"] == "skipped (primary_checkpoints_internal not found on the target)"
    assert [pair.source_topic for pair in run.pairs] == ["orders"]


def test_3_9_with_separator_underscore_finds_its_underscored_offset_syncs_and_checkpoints():
    """3.9: DefaultReplicationPolicy.offsetSyncsTopic / checkpointsTopic with internalSeparator() `_` (KIP-690, 3.1+)."""
    run = prepared("3.9", separator_in_internal_names=True)
    assert run.checks["offset_syncs"] == "checked (mm2-offset-syncs_secondary_internal)"
    assert run.checks["checkpoints"] == "checked (primary_checkpoints_internal)"
    assert run.syncs == {(0, 0, 0, 0)}
    assert "Kafka 3.9" in run.checks["naming"] and "'_'" in run.checks["naming"]


def test_3_9_leaves_out_what_its_replication_policy_calls_internal():
    """DefaultReplicationPolicy.isMM2InternalTopic (3.1+): `orders_internal` ends in `<separator>internal`, MirrorMaker 3.9
    never replicates it, so the job does not compare it; 2.4.1's ReplicationPolicy.isInternalTopic does not know that suffix."""
    source = {"orders": 3, "orders_internal": 2}
    for version, expected in (("3.9", ["orders"]), ("2.4.1", ["orders", "orders_internal"])):
        names = JobOptions(source=None, target=None, topics=".*", source_alias="primary", replication_policy_separator="_",
                           mirrormaker_version=version).flow_names(with_target=False)
        assert [pair.source_topic for pair in pair_topics(source, {}, ".*", None, names)] == expected, version
