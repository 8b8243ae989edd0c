# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one reader of MirrorMaker 2's internal topics (plugins/module_utils/_kafka/internal_topic_reader.py InternalTopicReader), as
kafka_mirror_status (polling) and kafka_mirror_offsets (one read to the end, mm2_offsets.read_internal_topic) use it."""
from __future__ import annotations

import pytest
from kafka.errors import KafkaTimeoutError

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.internal_topic_reader import InternalTopicReader
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets import read_internal_topic
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets_plan import OffsetsError
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint

TOPIC = "primary.checkpoints.internal"


class Record:
    def __init__(self, partition, offset, key, value):
        self.partition, self.offset, self.key, self.value, self.timestamp = partition, offset, key, value, 0


class Consumer:
    """A consumer over {topic: [[Record]]}; `end_gap` moves a partition's end past its last record (a compacted tail)."""

    def __init__(self, cluster):
        self.cluster, self.positions, self.fetched, self.closed = cluster, {}, 0, False

    def partitions_for_topic(self, topic):
        return set(range(len(self.cluster.topics[topic])))

    def assign(self, tps):
        self.positions = {tp: 0 for tp in tps}

    def _log(self, tp):
        return self.cluster.topics[tp.topic][tp.partition]

    def beginning_offsets(self, tps):
        return {tp: 0 for tp in tps}

    def end_offsets(self, tps):
        if self.cluster.failing_reads:
            self.cluster.failing_reads -= 1
            raise KafkaTimeoutError("Failed to get offsets by timestamps in 30000 ms")
        return {tp: len(self._log(tp)) + self.cluster.end_gap for tp in tps}

    def close(self):
        self.closed = True

    def seek(self, tp, offset):
        self.positions[tp] = offset

    def position(self, tp):
        return self.positions[tp]

    def poll(self, timeout_ms=0):
        if self.cluster.stuck:
            return {}
        out = {}
        for tp, position in self.positions.items():
            batch = self._log(tp)[position:]
            if batch:
                out[tp] = batch
                self.fetched += len(batch)
            self.positions[tp] = len(self._log(tp)) + self.cluster.end_gap
        return out


class Cluster:
    """A connection (admin() and consumer()) and its admin client."""

    def __init__(self, topics, end_gap=0, stuck=False):
        self.topics, self.end_gap, self.stuck, self.consumers = topics, end_gap, stuck, []
        self.failing_reads = 0  # end-offset reads that time out before one answers (a leader moving)

    def admin(self):
        return self

    def list_topics(self):
        return list(self.topics)

    def consumer(self, **_options):
        self.consumers.append(Consumer(self))
        return self.consumers[-1]

    def append(self, partition, checkpoint=None, value=b"", key=b"k"):
        log = self.topics[TOPIC][partition]
        if checkpoint is not None:
            key, value = checkpoint.encode_key(), checkpoint.encode_value()
        log.append(Record(partition, len(log), key, value))


def checkpoint(group, offset):
    return Checkpoint(group, "primary.orders", 0, offset, offset, "")


def test_reads_everything_once_then_only_what_was_appended():
    cluster = Cluster({TOPIC: [[], []]})
    cluster.append(1, checkpoint("b", 1))
    cluster.append(0, checkpoint("a", 1))
    reader = InternalTopicReader(cluster, TOPIC, timeout_s=1)
    decoded, problems = reader.new_decoded(Checkpoint)
    assert [c.group for c in decoded] == ["a", "b"] and problems == [] and reader.behind == {}  # partition by partition
    cluster.append(0, checkpoint("a", 2))
    decoded, problems = reader.new_decoded(Checkpoint)
    assert [(c.group, c.upstream_offset) for c in decoded] == [("a", 2)] and problems == []
    assert reader.new_decoded(Checkpoint) == ([], []) and len(cluster.consumers) == 1 and cluster.consumers[0].fetched == 3


def test_tombstones_are_skipped_and_other_bad_records_reported():
    cluster = Cluster({TOPIC: [[]]})
    cluster.append(0, checkpoint("a", 1))
    cluster.append(0, value=None)
    cluster.append(0, key=b"\x00", value=b"\x00")
    decoded, problems = InternalTopicReader(cluster, TOPIC).new_decoded(Checkpoint)
    assert [c.group for c in decoded] == ["a"]
    assert len(problems) == 1 and problems[0].startswith(TOPIC + "[0]@2: ")


def test_tail_reads_only_the_last_records():
    cluster = Cluster({TOPIC: [[]]})
    for offset in range(5):
        cluster.append(0, checkpoint("a", offset))
    decoded, problems = InternalTopicReader(cluster, TOPIC, tail=2).new_decoded(Checkpoint)
    assert [c.upstream_offset for c in decoded] == [3, 4] and problems == []


def test_a_partition_whose_end_holds_no_record_is_read_without_waiting():
    """Its position reaches the end offset although no record comes (a compacted tail): the read ends, nothing is behind."""
    cluster = Cluster({TOPIC: [[]]}, end_gap=3)
    cluster.append(0, checkpoint("a", 1))
    reader = InternalTopicReader(cluster, TOPIC, timeout_s=30)
    assert len(reader.new_decoded(Checkpoint)[0]) == 1 and reader.behind == {}


def test_a_read_that_times_out_says_what_is_behind():
    cluster = Cluster({TOPIC: [[]]}, stuck=True)
    cluster.append(0, checkpoint("a", 1))
    reader = InternalTopicReader(cluster, TOPIC, timeout_s=0.01)
    assert reader.new_records() == []
    assert [(tp.topic, tp.partition, behind) for tp, behind in reader.behind.items()] == [(TOPIC, 0, (0, 1))]


def test_kafka_mirror_offsets_reads_to_the_end_or_fails_naming_the_partition():
    cluster = Cluster({TOPIC: [[]]})
    cluster.append(0, checkpoint("a", 1))
    cluster.append(0, value=None)
    assert read_internal_topic(cluster, "absent.checkpoints.internal", Checkpoint, 1) == (False, [], [])
    found, records, bad = read_internal_topic(cluster, TOPIC, Checkpoint, 1)
    assert found and [c.group for c in records] == ["a"] and bad == []
    cluster.stuck = True
    with pytest.raises(OffsetsError, match=r"reading topic primary.checkpoints.internal timed out after 0 s "
                                           r"\(primary.checkpoints.internal\[0\] at 0 of 2\); raise read_timeout"):
        read_internal_topic(cluster, TOPIC, Checkpoint, 0.01)


def test_a_start_that_failed_is_made_again_by_the_next_call():
    """The first call's end-offset read timed out (a leader moving): that consumer is closed, not kept at no position, and the
    next call starts again and reads the topic from its beginning."""
    cluster = Cluster({TOPIC: [[]]})
    cluster.append(0, checkpoint("a", 1))
    cluster.failing_reads = 1
    reader = InternalTopicReader(cluster, TOPIC, timeout_s=1)
    with pytest.raises(KafkaTimeoutError):
        reader.new_decoded(Checkpoint)
    decoded, problems = reader.new_decoded(Checkpoint)
    assert [c.group for c in decoded] == ["a"] and problems == []
    assert [c.closed for c in cluster.consumers] == [True, False]


def test_timed_decoding_pairs_each_record_with_its_timestamp():
    """new_decoded_timed: each decoded record with its record's timestamp (a checkpoint's age); tombstones skipped and bad
    records reported as new_decoded does."""
    cluster = Cluster({TOPIC: [[]]})
    for group, written_ms in (("a", 1000), ("b", 2000)):
        cluster.append(0, checkpoint(group, 1))
        cluster.topics[TOPIC][0][-1].timestamp = written_ms
    cluster.append(0, value=None)
    cluster.append(0, key=b"\x00", value=b"\x00")
    timed, problems = InternalTopicReader(cluster, TOPIC, timeout_s=1).new_decoded_timed(Checkpoint)
    assert [(item.group, written_ms) for item, written_ms in timed] == [("a", 1000), ("b", 2000)]
    assert len(problems) == 1 and "@3" in problems[0]
