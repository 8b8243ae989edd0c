# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in's copy when the target refuses records it would take again: a target rebuilt under a running MirrorMaker
lost the idempotent producer's state (OutOfOrderSequenceNumberError from kafka-python, where the Java producer bumps its
epoch and sends again), or a retriable error outlasted the producer's retries. The copy goes on, at least once (no record
lost); other errors still end the task."""
from collections import defaultdict

import pytest
from kafka import TopicPartition
from kafka.errors import InvalidTopicError, OutOfOrderSequenceNumberError, UnknownTopicOrPartitionError

from sandbox.mm2 import replicator as replicator_module
from sandbox.mm2.connect import ConnectWorker
from sandbox.mm2.replicator import SourceReplicator
from sandbox.mm2.settings import load
from tests.support.standin_cluster import PROPERTIES, StandInClusterFake


class Record:
    def __init__(self, offset):
        self.offset, self.key, self.value, self.headers, self.timestamp = offset, b"k%d" % offset, b"v", [], 1000 + offset


class Future:
    def __init__(self, offset=None, error=None):
        self.offset, self.error = offset, error

    def get(self, timeout):
        if self.error is not None:
            raise self.error
        return self


class RefusingProducer:
    """Appends what it takes to one log per partition; refuses the sends numbered in `refuse` with their error."""

    def __init__(self, refuse):
        self.refuse, self.sends, self.log = dict(refuse), 0, defaultdict(list)

    def send(self, topic, key=None, value=None, headers=None, partition=0, timestamp_ms=None):
        self.sends += 1
        if self.sends in self.refuse:
            return Future(error=self.refuse[self.sends])
        self.log[(topic, partition)].append(key)
        return Future(len(self.log[(topic, partition)]) - 1)

    def flush(self, timeout=None):
        pass


class Consumer:
    def __init__(self, batches):
        self.batches = list(batches)

    def assign(self, partitions):
        pass

    def seek(self, tp, offset):
        pass

    def poll(self, timeout_ms, max_records):
        return self.batches.pop(0) if self.batches else {}


class Cluster(StandInClusterFake):
    def __init__(self, topics=None, batches=(), producer=None):
        super().__init__(topics, batches)
        self._producer = producer

    def producer(self):
        return self._producer

    def offset_store_producer(self):  # one fake for both: these tests tell the offsets topic's sends by their topic
        return self._producer

    def consumer(self):
        return Consumer(self.batches)


def started_copy(tmp_path, monkeypatch, poll, producer):
    """The flow primary->secondary's copy, started, with one poll of `poll` to copy into `producer`."""
    monkeypatch.setattr(replicator_module.time, "sleep", lambda _s: None)
    path = tmp_path / "mm2.properties"
    path.write_text(PROPERTIES)
    flow = next(f for f in load(str(path), None, (3, 9, 0)).flows if f.enabled)
    target = Cluster(producer=producer)
    source = Cluster({tp.topic: max(p.partition for p in poll) + 1 for tp in poll}, [poll], RefusingProducer({}))
    copy = SourceReplicator(flow, source, target, Cluster(producer=RefusingProducer({})), ConnectWorker(flow, target))
    copy.start()
    return copy


def copy_one_poll(tmp_path, monkeypatch, refuse):
    producer = RefusingProducer(refuse)
    poll = {TopicPartition("orders", 0): [Record(o) for o in range(0, 4)], TopicPartition("orders", 1): [Record(o) for o in range(10, 13)]}
    copy = started_copy(tmp_path, monkeypatch, poll, producer)
    producer.sends = 0  # count the sends of the copy only (start() may write Connect's offsets topic)
    copied = copy.step(10, now=copy.next_flush - 1)
    return copied, producer.log


def test_a_partition_refused_by_a_rebuilt_target_is_sent_again_from_the_refused_record(tmp_path, monkeypatch):
    # Sends 1-4: orders-0 offsets 0-3, sends 5-7: orders-1 offsets 10-12. The third record of orders-0 is refused.
    copied, log = copy_one_poll(tmp_path, monkeypatch, {3: OutOfOrderSequenceNumberError()})
    assert copied == 7
    # From the refused record on, orders-0 is sent again, the record after it too (it had landed: there twice, none lost).
    assert log[("primary.orders", 0)] == [b"k0", b"k1", b"k3", b"k2", b"k3"]
    assert log[("primary.orders", 1)] == [b"k10", b"k11", b"k12"]


def test_a_retriable_error_is_sent_again_too(tmp_path, monkeypatch):
    _copied, log = copy_one_poll(tmp_path, monkeypatch, {5: UnknownTopicOrPartitionError()})
    assert log[("primary.orders", 1)] == [b"k11", b"k12", b"k10", b"k11", b"k12"]


def test_other_errors_still_end_the_task(tmp_path, monkeypatch):
    with pytest.raises(InvalidTopicError):
        copy_one_poll(tmp_path, monkeypatch, {2: InvalidTopicError()})


class OffsetsTopicGone(RefusingProducer):
    """Takes the copy; a send to Connect's offsets topic fails as kafka-python fails it for a partition the topic lacks."""

    def __init__(self):
        super().__init__({})
        self.gone = True

    def send(self, topic, key=None, value=None, headers=None, partition=0, timestamp_ms=None):
        if self.gone and topic.startswith("mm2-offsets."):
            raise ValueError(f"Unrecognized partition {partition} for topic {topic}")
        return super().send(topic, key, value, headers, partition, timestamp_ms)


def test_a_failed_offset_commit_is_logged_and_kept_for_the_next_commit(tmp_path, monkeypatch, caplog):
    producer = OffsetsTopicGone()
    copy = started_copy(tmp_path, monkeypatch, {TopicPartition("orders", 0): [Record(o) for o in range(0, 4)]}, producer)
    assert copy.step(10, now=copy.next_flush - 1) == 4
    copy.commit_offsets()  # the target lost the offsets topic's partition: the task copies on
    assert "failed to commit offsets" in caplog.text and copy.copied == {("orders", 0): 3} and ("orders", 0) not in copy.committed
    producer.gone = False
    copy.commit_offsets()
    assert copy.committed[("orders", 0)] == 3 and copy.copied == {}
    assert any(topic.startswith("mm2-offsets.") for topic, _partition in producer.log)
