# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in's MirrorSourceTask loop against fake clients: what reaches the target, the offset-syncs topic and
Connect's offsets topic, and when (WorkerSourceTask commits every offset.flush.interval.ms; exactly-once commits a
transaction per poll, whose marker takes an offset)."""
import json
from collections import defaultdict
from pathlib import Path

from kafka import TopicPartition
from kafka.errors import KafkaTimeoutError

from sandbox.mm2.records import MirrorRecords
from sandbox.mm2.connect import ConnectWorker
from sandbox.mm2.replicator import SourceReplicator, progress_topic
from sandbox.mm2.settings import load
from tests.support.standin_cluster import PROPERTIES, StandInClusterFake


class Record:
    def __init__(self, offset):
        self.offset, self.key, self.value, self.headers, self.timestamp = offset, b"k", b"v%d" % offset, [], 1000 + offset


class FakeConsumer:
    def __init__(self, batches):
        self.batches, self.positions = list(batches), {}

    def assign(self, partitions):
        self.assigned = partitions

    def seek(self, tp, offset):
        self.positions[tp] = offset

    def poll(self, timeout_ms, max_records):
        return self.batches.pop(0) if self.batches else {}


class Future:
    def __init__(self, offset):
        self.offset = offset

    def get(self, timeout):
        return self


class FakeProducer:
    def __init__(self, log):
        self.log, self.in_transaction = log, set()

    def send(self, topic, key=None, value=None, headers=None, partition=0, timestamp_ms=None):
        offset = self.log.append(topic, partition, key, value)
        self.in_transaction.add((topic, partition))
        return Future(offset)

    def flush(self, timeout=None):
        pass

    def begin_transaction(self):
        self.in_transaction = set()

    def commit_transaction(self):
        for topic, partition in self.in_transaction:  # the commit marker
            self.log.append(topic, partition, None, None, marker=True)


class Log:
    """Every partition of one fake cluster: [(offset, key, value)], markers taking offsets but not listed."""

    def __init__(self):
        self.records, self.next = defaultdict(list), defaultdict(int)

    def append(self, topic, partition, key, value, marker=False):
        offset = self.next[(topic, partition)]
        self.next[(topic, partition)] += 1
        if not marker:
            self.records[topic].append((offset, key, value))
        return offset


class StuckProducer(FakeProducer):
    """The offsets topic lost the partition a record went to: each flush gives up at its timeout, as kafka-python's does."""

    def __init__(self, log):
        super().__init__(log)
        self.flush_timeouts = []

    def flush(self, timeout=None):
        self.flush_timeouts.append(timeout)
        raise KafkaTimeoutError(f"Timeout after waiting for {timeout} secs.")


class FakeCluster(StandInClusterFake):
    def __init__(self, topics=None, batches=()):
        super().__init__(topics, batches)
        self.log = Log()
        self.offset_store = FakeProducer(self.log)

    def producer(self):
        return FakeProducer(self.log)

    def offset_store_producer(self):
        return self.offset_store

    def transactional_producer(self, _transactional_id):
        return FakeProducer(self.log)

    def consumer(self):
        return FakeConsumer(self.batches)


def replicator(tmp_path: Path, extra="", batches=()):
    path = tmp_path / "mm2.properties"
    path.write_text(PROPERTIES + extra)
    flow = next(f for f in load(str(path), None, (3, 9, 0)).flows if f.enabled)
    source, target = FakeCluster({"orders": 1}, batches), FakeCluster()
    copy = SourceReplicator(flow, source, target, target if flow.offset_syncs_cluster == "secondary" else source, ConnectWorker(flow, target))
    copy.start()
    return copy, source, target


def batch(first, count):
    return {TopicPartition("orders", 0): [Record(o) for o in range(first, first + count)]}


def syncs(cluster, topic):
    return [MirrorRecords.read_offset_sync(key, value)[2:] for _offset, key, value in cluster.log.records[topic]]


def progress(cluster):
    return [json.loads(value)["offset"] for _offset, _key, value in cluster.log.records[progress_topic("primary")]]


def test_connect_offsets_are_committed_only_every_flush_interval(tmp_path):
    """WorkerSourceTask commits every offset.flush.interval.ms (default 60000): a kill -9 before that copies again."""
    copy, source, target = replicator(tmp_path, batches=[batch(0, 150)])
    copy.step(10, now=copy.next_flush - 1)
    assert [o for o, _k, _v in target.log.records["primary.orders"]] == list(range(150))
    assert progress(target) == []
    # 3.4.1+ emission on the source cluster (offset-syncs.topic.location=source): first record, then stale by 100.
    assert syncs(source, "mm2-offset-syncs.secondary.internal") == [(0, 0), (101, 101)]
    copy.commit_offsets()
    assert progress(target) == [149]
    # 3.7+: the delayed sync of the partition goes out with the commit (OffsetSyncWriter.promoteDelayedOffsetSyncs).
    assert syncs(source, "mm2-offset-syncs.secondary.internal")[-1] == (149, 149)


def test_a_stuck_offsets_flush_gives_up_at_its_timeout_and_the_copy_goes_on(tmp_path):
    """KafkaOffsetBackingStore writes through a producer of its own and WorkerSourceTask waits offset.flush.timeout.ms
    (5000) for it: a commit whose record cannot be delivered (the offsets topic lost its partition in a target rebuild)
    keeps the offsets for the next commit, and the records go on being copied meanwhile."""
    copy, _source, target = replicator(tmp_path, batches=[batch(0, 150), batch(150, 10)])
    target.offset_store = StuckProducer(target.log)
    copy.step(10, now=copy.next_flush - 1)
    copy.commit_offsets()
    assert target.offset_store.flush_timeouts == [5.0]
    assert copy.committed == {} and copy.copied == {("orders", 0): 149}
    copy.step(10, now=copy.next_flush - 1)
    assert [o for o, _k, _v in target.log.records["primary.orders"]] == list(range(160))
    target.offset_store = FakeProducer(target.log)
    copy.commit_offsets()
    assert copy.committed == {("orders", 0): 159} and progress(target)[-1] == 159


def test_exactly_once_commits_records_and_offsets_in_one_transaction(tmp_path):
    """exactly.once.source.support=enabled (3.5+): one transaction per poll, source offsets inside it; each commit marker
    takes an offset, so the second batch starts at 151 downstream while upstream is at 150."""
    extra = "secondary.exactly.once.source.support = enabled\noffset-syncs.topic.location = target\n"
    copy, _source, target = replicator(tmp_path, extra, batches=[batch(0, 150), batch(150, 10)])
    copy.step(10, now=copy.next_flush - 1)
    assert progress(target) == [149]
    copy.step(10, now=copy.next_flush - 1)
    assert progress(target) == [149, 159]
    copied = [o for o, _k, _v in target.log.records["primary.orders"]]
    assert copied == list(range(150)) + list(range(151, 161))
    assert syncs(target, "mm2-offset-syncs.primary.internal") == [(0, 0), (101, 101)]
