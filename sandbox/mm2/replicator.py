# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorSourceConnector and MirrorSourceTask for one flow: remote topics, record copies, offset syncs, Connect offsets.

Written from MirrorSourceConnector / MirrorSourceTask (2.4.1 - 3.9) and Connect's WorkerSourceTask: records are
copied partition to partition with key, value, headers and timestamp; the task's position is Connect's source
offset, committed to `mm2-offsets.<source>.internal` on the target every offset.flush.interval.ms (and at a
clean stop), so a process killed with -9 copies again what it copied since the last commit, as real
MirrorMaker 2 does (at least once). With exactly-once (3.5+, `<target>.exactly.once.source.support=enabled`)
each poll's records and their source offsets go to the target in one transaction (transaction.boundary=poll),
whose commit marker takes an offset in every partition it touched.
"""
from __future__ import annotations

import json
import logging
import time

from kafka import TopicPartition
from kafka.errors import KafkaError, OutOfOrderSequenceNumberError, UnknownProducerIdError

from sandbox.mm2.connect import offset_key, source_partition
from sandbox.mm2.sync_emitter import OffsetSyncEmitter
from sandbox.mm2.topic_configs import TopicConfigSync

LOG = logging.getLogger("sandbox.mm2")
COMPACT = {"cleanup.policy": "compact"}
POLL_MAX_RECORDS = 5000
IDLE_SLEEP_MIN_S, IDLE_SLEEP_MAX_S = 0.05, 1.0
SOURCE_CONNECTOR = "MirrorSourceConnector"
RESEND_FOR_S = 60.0  # how long records the target refused with a retriable error are sent again before the task fails


def progress_topic(source_alias):
    """Connect's offsets topic of a dedicated MirrorMaker 2 herder by default (MirrorMakerConfig.workerConfig), on the target."""
    return "mm2-offsets.%s.internal" % source_alias


def progress_key(source_alias, topic, partition):
    # Connect's JsonConverter (schemas off) key for a MirrorSourceConnector source partition (MirrorUtils.wrapPartition).
    return offset_key(SOURCE_CONNECTOR, source_partition(source_alias, topic, partition))


class SourceReplicator:
    def __init__(self, flow, source, target, syncs_cluster, worker):
        self.flow, self.worker = flow, worker
        self.source, self.target, self.syncs_cluster = source, target, syncs_cluster
        self.consumer = None
        self.assigned = {}  # TopicPartition -> remote topic name
        self.committed = {}  # (topic, partition) -> last upstream offset in Connect's offsets topic
        self.copied = {}  # (topic, partition) -> last upstream offset acknowledged by the target, not yet committed
        self.syncs = OffsetSyncEmitter(flow.behaviour, flow.number("offset.lag.max"))
        self.emit_syncs = flow.flag("emit.offset-syncs.enabled")
        self.configs = TopicConfigSync(flow, source, target)
        self.flush_interval_s = int(flow.worker["offset.flush.interval.ms"]) / 1000.0
        self.flush_timeout_s = int(flow.worker["offset.flush.timeout.ms"]) / 1000.0
        self.next_flush = 0.0
        self.idle_s = 0.0  # the last sleep after an empty poll; 0 while records flow
        self.producer = None

    def start(self):
        flow = self.flow
        if self.emit_syncs:
            self.syncs_cluster.ensure_topic(flow.records.offset_syncs_topic, 1, flow.number("offset-syncs.topic.replication.factor"), COMPACT)
        for raw_key, value in self.worker.read_offsets(SOURCE_CONNECTOR).items():
            key = json.loads(raw_key)
            if key[1].get("cluster") == flow.source and value:
                self.committed[(key[1]["topic"], key[1]["partition"])] = value["offset"]
        LOG.info("%s: resuming %d partitions from %s", flow.name, len(self.committed), self.worker.offsets_topic)
        if flow.exactly_once:
            self.producer = self.target.transactional_producer("%s-%s" % (flow.name, "MirrorSourceConnector"))
            LOG.info("%s: exactly-once: records and source offsets are written in transactions", flow.name)
        else:
            self.producer = self.target.producer()
        self.consumer = self.source.consumer()
        self.next_flush = time.monotonic() + self.flush_interval_s
        self.refresh_topics()

    def topics_being_replicated(self):
        remote = set(self.target.partition_counts())
        return {tp.topic for tp, name in self.assigned.items() if name in remote}

    def refresh_topics(self):
        flow = self.flow
        counts = {topic: n for topic, n in self.source.partition_counts().items() if flow.topics.replicates(topic)}
        remote_counts = self.target.partition_counts()
        wanted = {}
        for topic, partitions in sorted(counts.items()):
            remote = flow.records.remote_topic(topic)
            if remote not in remote_counts:
                self.target.ensure_topic(remote, partitions, flow.number("replication.factor"), self.configs.for_new_topic(topic))
            elif remote_counts[remote] < partitions:
                self.target.admin().create_partitions({remote: partitions})  # kafka-python 3: {topic: total count}
                LOG.info("%s: grew %s to %d partitions like %s", flow.name, remote, partitions, topic)
            for partition in range(partitions):
                wanted[TopicPartition(topic, partition)] = remote
        if set(wanted) != set(self.assigned):
            self.consumer.assign(list(wanted))
            for tp in wanted:
                if tp not in self.assigned:
                    # MirrorSourceTask.loadOffset: the committed offset + 1, or 0 (-1 + 1) for a partition never committed.
                    self.consumer.seek(tp, self.committed.get((tp.topic, tp.partition), -1) + 1)
            LOG.info("%s: replicating %d topics (%d partitions): %s", flow.name, len(counts), len(wanted), ", ".join(sorted(counts)) or "none")
            self.assigned = wanted

    def _send_syncs(self, syncs):
        if not syncs or not self.emit_syncs:
            return
        producer = self.syncs_cluster.producer()
        for topic, partition, upstream, downstream in syncs:
            record = self.flow.records.offset_sync(topic, partition, upstream, downstream)
            producer.send(record.topic, key=record.key, value=record.value, partition=0)
        producer.flush()

    def _progress_records(self, offsets):
        """(key, value) in the offsets topic: KafkaOffsetBackingStore's producer places a key by murmur2 (connect.py)."""
        return self.worker.records(SOURCE_CONNECTOR, [(tuple(source_partition(self.flow.source, topic, partition).items()), {"offset": upstream})
                                                      for (topic, partition), upstream in sorted(offsets.items())])

    def commit_offsets(self, now=None):
        """WorkerSourceTask's offset commit (every offset.flush.interval.ms and at a clean stop); 3.7+ also sends delayed syncs."""
        self.next_flush = (now or time.monotonic()) + self.flush_interval_s
        if self.copied and not self.flow.exactly_once:
            try:
                self.worker.commit(self._progress_records(self.copied), self.flush_timeout_s)
            except (KafkaError, ValueError) as exc:
                # WorkerSourceTask.commitOffsets: a failed flush is logged, its offsets are kept for the next commit and the
                # task copies on (nor are delayed syncs sent), as when the target was rebuilt under a running MirrorMaker and
                # its offsets topic is not back yet.
                LOG.error("%s: failed to commit offsets to %s: %s; kept for the next commit", self.flow.name, self.worker.offsets_topic, exc)
                return
            self.committed.update(self.copied)
            self.copied = {}
        self._send_syncs(self.syncs.committed())

    def step(self, timeout_ms, now=None):
        """Copy one poll's worth of records; returns how many were copied."""
        now = now or time.monotonic()
        if now >= self.next_flush:
            self.commit_offsets(now)
        if not self.assigned:
            time.sleep(timeout_ms / 1000.0)
            return 0
        try:
            batches = self.consumer.poll(timeout_ms=0, max_records=POLL_MAX_RECORDS)
        except KafkaError as exc:
            # MirrorSourceTask.poll: a KafkaException is logged ("Failure during poll.") and the task polls again.
            LOG.warning("%s: failure during poll: %s", self.flow.name, exc)
            time.sleep(timeout_ms / 1000.0)
            return 0
        if not batches:
            # Quirk (noida-db 0.2.3): an empty fetch is answered at once, whatever fetch_max_wait_ms says, so a poll with a
            # timeout spins on fetches for all of it. kafka-python's network thread fetches in the background, so the
            # stand-in polls without waiting and sleeps between polls instead, longer after each empty one, up to
            # IDLE_SLEEP_MAX_S. (A 200 ms poll after every batch cost 6% of a core per idle stand-in, measured, since
            # heartbeats arrive every second.)
            self.idle_s = min(IDLE_SLEEP_MAX_S, 2 * self.idle_s or IDLE_SLEEP_MIN_S)
            time.sleep(self.idle_s)
            return 0
        self.idle_s = 0.0
        if self.flow.exactly_once:
            self.producer.begin_transaction()
        sent, last = [], {}
        for tp, records in batches.items():
            for record in records:
                sent.append((tp, record, self._send(tp, record)))
                last[(tp.topic, tp.partition)] = record.offset
        if self.flow.exactly_once:
            for key, value in self._progress_records(last):
                self.producer.send(self.worker.offsets_topic, key=key, value=value)
            self.producer.commit_transaction()
            self.committed.update(last)
        else:
            self.producer.flush()
            self.copied.update(last)
        syncs = []
        for tp, upstream, downstream in self._acknowledged(sent):
            syncs.extend(self.syncs.copied(tp.topic, tp.partition, upstream, downstream))
        self._send_syncs(syncs)
        return len(sent)

    def _send(self, tp, record):
        return self.producer.send(self.assigned[tp], key=record.key, value=record.value, headers=list(record.headers or []),
                                  partition=tp.partition, timestamp_ms=record.timestamp)

    def _acknowledged(self, sent):
        """(source partition, upstream offset, downstream offset) of every record of `sent` once the target has it, in order.

        Quirk (kafka-python 3.0.12): its idempotent producer fails a batch with OutOfOrderSequenceNumberError when the broker
        lost the producer's state (a target cluster rebuilt under a running MirrorMaker, `python -m sandbox rebuild`), and
        gives up on retriable errors after `retries`. Real MirrorMaker 2's Java producer bumps the epoch and sends such a
        batch again (KIP-360), and Connect's producer retries retriable errors without end, so the task goes on. Here a
        partition with a record refused so is sent again from that record on, the later records of the poll included (one
        that landed meanwhile is then there twice, once before the refused record: at least once, no record lost), for up to
        RESEND_FOR_S; an exactly-once flow's transaction is not sent again (its failure ends the task, as before).
        """
        deadline = time.monotonic() + RESEND_FOR_S
        acknowledged, pending = [], sent
        while pending:
            again, refused = [], set()
            for tp, record, future in pending:
                if tp in refused:
                    again.append((tp, record))
                    continue
                try:
                    acknowledged.append((tp, record.offset, future.get(timeout=30).offset))
                except KafkaError as exc:
                    resendable = isinstance(exc, (OutOfOrderSequenceNumberError, UnknownProducerIdError)) or exc.retriable
                    if self.flow.exactly_once or not resendable or time.monotonic() >= deadline:
                        raise
                    LOG.warning("%s: the target refused %s-%d at source offset %d (%s); sending the partition again from there",
                                self.flow.name, self.assigned[tp], tp.partition, record.offset, exc)
                    refused.add(tp)
                    again.append((tp, record))
            if again:
                time.sleep(0.2)
            pending = [(tp, record, self._send(tp, record)) for tp, record in again]
            if pending:
                self.producer.flush()
        return acknowledged
