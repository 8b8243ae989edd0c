# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kafka_mirror_status's lag on targets MirrorMaker 2 writes in transactions (exactly-once, 3.5+), worked out by hand.

With `<target>.exactly.once.source.support = enabled` (MirrorSourceConnector.exactlyOnceSupport, new in 3.5.0) Connect's
ExactlyOnceWorkerSourceTask writes each batch in a transaction: its commit marker takes one offset in every partition it
touched, and an aborted attempt leaves its records in the log, skipped by read_committed consumers. The offset sync
(OffsetSyncWriter.PartitionState.update in 3.9) names the real downstream offset of a record, so the records after it are
what must be counted, not the offsets.
"""
from __future__ import annotations

import pytest
from kafka import TopicPartition
from kafka.protocol.consumer import OffsetSpec
from kafka.structs import OffsetAndTimestamp

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import (
    FlowStatus,
    MirrorStatusError,
    RecordCounter,
    flow_options,
    may_write_transactions,
    partition_lag,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint, OffsetSync
from tests.support.fake_consumer import PositionedConsumer

# Ten source records 0..9 copied one transaction each: data at 0, 2, ..., 18, commit markers at 1, 3, ..., 19. With
# offset.lag.max 100 the only sync is the first record's, (0, 0) (noPreviousSyncThisLifetime); 18 - (0 + 1) < 100.
TEN_IN_TEN_TRANSACTIONS = [2 * upstream for upstream in range(10)]


@pytest.mark.parametrize("source_end, target_end, sync, counted, lag", [
    # Caught up: nine records after downstream 0, so upstream 0 + 1 + 9 = 10 = source end.
    (10, 20, (0, 0), 9, 0),
    # Five more source records, two of them copied (data at 20 and 22, markers at 21 and 23): 3 missing. Offsets alone say
    # 0 + 24 >= 15, lag 0: the bug.
    (15, 24, (0, 0), 11, 3),
    # An aborted attempt: upstream 5..7 written at 6..8 and aborted (abort marker at 9), then copied again at 10..12 and
    # committed (marker at 13). Counted after the sync (0, 0): 1..4 and 10..12, 7 records: 8 of 10 source records are there.
    (10, 14, (0, 0), 7, 2),
    # No sync yet: records on both sides compared (10 source records, 9 committed on a target whose end is 20).
    (10, 20, None, 9, 1),
    # The sync's record is not on the target (it was truncated): nothing after upstream 0 counts as replicated.
    (10, 0, (0, 0), 0, 10),
    # An empty source partition has no lag.
    (0, 20, (0, 0), 9, 0),
])
def test_lag_counts_records_after_the_sync_not_offsets(source_end, target_end, sync, counted, lag):
    assert partition_lag(0, source_end, 0, target_end, sync, target_records=counted) == lag


def test_offsets_alone_hide_missing_records_behind_markers():
    """The reason for counting: the same partition as the second case above, by offsets, reads no lag."""
    assert partition_lag(0, 15, 0, 24, (0, 0)) == 0
    assert partition_lag(0, 15, 0, 24, (0, 0), target_records=11) == 3


@pytest.mark.parametrize("version, counts", [((3, 4, 1), False), ((3, 5, 0), True), ((3, 9, 0), True), (None, True)])
def test_targets_are_counted_from_the_release_that_can_write_transactions(version, counts):
    """MirrorSourceConnector.exactlyOnceSupport and validateExactlyOnceConfigs first appear at the 3.5.0 tag."""
    assert may_write_transactions(version) is counts


class Record:
    def __init__(self, offset, key=b"k", value=b"v"):
        self.offset, self.key, self.value, self.partition, self.timestamp = offset, key, value, 0, 0


class Partition:
    """A log as a read_committed consumer sees it: the committed records, and the last stable offset (end)."""

    def __init__(self, offsets, end):
        self.records, self.end = [Record(offset) for offset in offsets], end


class Consumer(PositionedConsumer):
    def __init__(self, cluster, options):
        self.cluster, self.options, self.positions, self.fetched = cluster, options, {}, 0

    def partitions_for_topic(self, topic):
        return set(range(len(self.cluster.topics[topic]))) if topic in self.cluster.topics else None

    def _partition(self, tp):
        return self.cluster.topics[tp.topic][tp.partition]

    def end_offsets(self, tps):
        return {tp: self._partition(tp).end for tp in tps}

    def poll(self, timeout_ms=0):
        out = {}
        for tp, position in self.positions.items():
            partition = self._partition(tp)
            batch = [record for record in partition.records if record.offset >= position]
            if batch:
                out[tp] = batch
                self.fetched += len(batch)
            self.positions[tp] = max(position, partition.end)  # past trailing markers, as the fetcher moves past control batches
        return out


class Cluster:
    """A connection (admin() and consumer()) and its own admin client, over {topic: [Partition]}."""

    def __init__(self, topics):
        self.topics, self.consumers = topics, []

    def admin(self):
        return self

    def consumer(self, **options):
        self.consumers.append(Consumer(self, options))
        return self.consumers[-1]

    def list_topics(self):
        return list(self.topics)

    def list_partition_offsets(self, specs, isolation_level=None):
        """ListOffsets: 0 for EARLIEST, the last stable offset for LATEST (no transaction is left open here)."""
        return {tp: OffsetAndTimestamp(0 if spec == OffsetSpec.EARLIEST else self.topics[tp.topic][tp.partition].end, -1, None)
                for tp, spec in specs.items()}

    def describe_topics(self, names):
        return [{"name": name, "error_code": 0, "partitions": [{"partition_index": index} for index in range(len(self.topics[name]))]}
                for name in names]


def params(**overrides):
    base = {"source": {"bootstrap_servers": ["127.0.0.1:9092"]}, "source_alias": "primary", "target_alias": "secondary",
            "replication_policy": "default", "replication_policy_separator": ".", "offset_syncs_topic_location": "target",
            "mirrormaker_version": "3.9.0", "topics": [".*"], "topics_exclude": None, "groups": [".*"], "groups_exclude": None,
            "max_lag": 0, "max_heartbeat_age": 60, "timeout": 10, "poll_interval": 1}
    base.update(overrides)
    return base


def exactly_once_mirror(copied_transactions):
    """Source `orders` with 15 records; the target holds the first `copied_transactions` of them, one transaction each."""
    source = Cluster({"orders": [Partition(range(15), 15)]})
    sync = OffsetSync("orders", 0, 0, 0)
    syncs = Partition([0], 1)
    syncs.records[0].key, syncs.records[0].value = sync.encode_key(), sync.encode_value()
    target = Cluster({"primary.orders": [Partition([2 * upstream for upstream in range(copied_transactions)], 2 * copied_transactions)],
                      "mm2-offset-syncs.primary.internal": [syncs]})
    return source, target


def test_flow_status_counts_committed_records_on_a_3_9_target():
    source, target = exactly_once_mirror(12)
    status = FlowStatus(source, target, flow_options(params()))
    [partition] = status.read(now_ms=0)["partitions"]
    assert partition["target_end_offset"] == 24 and partition["last_offset_sync"] == {"upstream": 0, "downstream": 0}
    assert partition["lag"] == 3
    counting = [consumer for consumer in target.consumers if consumer.options.get("isolation_level") == "read_committed"]
    assert len(counting) == 1 and counting[0].fetched == 11

    # Two more transactions: the next read counts only the two new records, and the lag drops to 1.
    target.topics["primary.orders"][0] = Partition([2 * upstream for upstream in range(14)], 28)
    [partition] = status.read(now_ms=0)["partitions"]
    assert partition["lag"] == 1 and counting[0].fetched == 13


def test_flow_status_reads_no_target_records_before_3_5():
    """Before 3.5 MirrorMaker 2 writes no transactions: offsets are records, and no record of the remote topic is read."""
    source, target = exactly_once_mirror(0)
    target.topics["primary.orders"][0] = Partition(range(12), 12)
    status = FlowStatus(source, target, flow_options(params(mirrormaker_version="3.4.1")))
    [partition] = status.read(now_ms=0)["partitions"]
    assert partition["lag"] == 3
    assert not any(consumer.options.get("isolation_level") for consumer in target.consumers)


def test_record_counter_counts_from_a_new_start_when_the_sync_moves():
    target = Cluster({"t": [Partition(TEN_IN_TEN_TRANSACTIONS, 20)]})
    counter = RecordCounter(target)
    tp = TopicPartition("t", 0)
    assert counter.count({tp: 1}) == {tp: 9}
    assert counter.count({tp: 11}) == {tp: 4}  # a newer sync (5, 10): records at 12, 14, 16, 18
    assert counter.count({}) == {}


class StuckConsumer(Consumer):
    def poll(self, timeout_ms=0):
        return {}


class StuckCluster(Cluster):
    def consumer(self, **options):
        self.consumers.append(StuckConsumer(self, options))
        return self.consumers[-1]


def test_a_tail_that_cannot_be_read_in_time_names_the_way_out():
    """A long tail means MirrorMaker 2 older than 3.4.1 (about one sync per partition) when no release was given."""
    counter = RecordCounter(StuckCluster({"t": [Partition(TEN_IN_TEN_TRANSACTIONS, 20)]}), timeout_s=0.01)
    with pytest.raises(MirrorStatusError, match="t-0 on the target after the last offset sync took more than 0 s.*set mirrormaker_version"):
        counter.count({TopicPartition("t", 0): 1})


def test_flow_status_reports_each_groups_newest_checkpoint_age():
    """checkpoint_age_s: from the newest checkpoint record of each replicated group (its record timestamp), at read time."""
    source, target = exactly_once_mirror(12)
    checkpoints = Partition([0, 1, 2], 3)
    for record, (group, written_ms) in zip(checkpoints.records, (("app", 1000), ("app", 4000), ("other", 2500))):
        checkpoint = Checkpoint(group, "primary.orders", 0, 5, 5, "")
        record.key, record.value, record.timestamp = checkpoint.encode_key(), checkpoint.encode_value(), written_ms
    target.topics["primary.checkpoints.internal"] = [checkpoints]
    status = FlowStatus(source, target, flow_options(params(groups=["app"]))).read(now_ms=10000)
    assert status["checkpoint_age_s"] == {"app": 6.0} and status["checkpoints"] == {"app": 1}
