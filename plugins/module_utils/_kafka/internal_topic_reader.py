# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one reader of MirrorMaker 2's internal topics (checkpoints, offset-syncs, heartbeats); its records are decoded by
the one rule of _mm2/internal_records.py (decode_records: tombstones skipped, undecodable records reported).

InternalTopicReader reads such a topic once and then only what was appended (kafka_mirror_status polls it while it waits;
kafka_mirror_offsets reads it once and fails when it is not read to its end in time).
"""
from __future__ import annotations

import time

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.internal_records import decode_records

try:
    from kafka import TopicPartition
except ImportError:
    TopicPartition = None  # _kafka.client.ensure_kafka_python() reports the missing library


class InternalTopicReader:
    """Reads one topic through connection.consumer() (no group): on the first call from its start (or the last `tail` records
    of each partition), then only what was appended since the last call, up to the end offsets each call starts with.

    A call returns what arrived within timeout_s; `behind` then names each partition not read to its end,
    {TopicPartition: (position, end offset)} (empty when the call read everything). The caller checks that the topic exists
    first: asking a broker about a missing topic may create it.
    """

    def __init__(self, connection, topic, tail=None, timeout_s=30.0):
        self.connection, self.topic, self.tail, self.timeout_s = connection, topic, tail, timeout_s
        self.behind = {}
        self._consumer = None
        self._partitions = []

    def _start(self):
        """Assign and place a consumer; kept only once it is placed, so that a start that failed (a leader moving, a timeout)
        is made again by the next call rather than leaving a consumer at no position."""
        consumer = self.connection.consumer()
        try:
            partitions = [TopicPartition(self.topic, p) for p in sorted(consumer.partitions_for_topic(self.topic) or [])]
            consumer.assign(partitions)
            begins, ends = consumer.beginning_offsets(partitions), consumer.end_offsets(partitions)
            for tp in partitions:
                consumer.seek(tp, begins[tp] if self.tail is None else max(begins[tp], ends[tp] - self.tail))
        except Exception:
            consumer.close()
            raise
        self._consumer, self._partitions = consumer, partitions

    def new_records(self):
        """The consumer records appended since the last call (all of them the first time), partition by partition."""
        if self._consumer is None:
            self._start()
        consumer = self._consumer
        ends = consumer.end_offsets(self._partitions)
        read = {tp: [] for tp in self._partitions}
        remaining = {tp for tp in self._partitions if consumer.position(tp) < ends[tp]}
        deadline = time.monotonic() + self.timeout_s
        while remaining and time.monotonic() < deadline:
            for tp, batch in consumer.poll(timeout_ms=500).items():
                read[tp].extend(batch)
            # A partition can reach its end without a record (compacted or aborted tail): its position says so.
            remaining = {tp for tp in remaining if consumer.position(tp) < ends[tp]}
        self.behind = {tp: (consumer.position(tp), ends[tp]) for tp in sorted(remaining)}
        return [record for tp in self._partitions for record in read[tp]]

    def new_decoded(self, codec):
        """([decoded record], [problem message]) of new_records(), by decode_records' rule; codec: Checkpoint, OffsetSync or Heartbeat."""
        return decode_records(self.new_records(), codec, self.topic)

    def new_decoded_timed(self, codec):
        """As new_decoded(), each decoded record paired with its record's timestamp: ([(decoded, timestamp_ms)], [problem])."""
        timed, problems = [], []
        for record in self.new_records():
            decoded, problem = decode_records([record], codec, self.topic)
            timed.extend((item, record.timestamp) for item in decoded)
            problems.extend(problem)
        return timed, problems
