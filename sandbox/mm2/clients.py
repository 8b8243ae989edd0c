# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kafka-python clients for one cluster of the stand-in, with the sandbox brokers' quirks handled here."""
from __future__ import annotations

import logging
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import TopicAlreadyExistsError

LOG = logging.getLogger("sandbox.mm2")

# Quirk (noida-db): a fetch returns everything from the fetch offset to the end of the partition in
# one reply, ignoring fetch size limits; kafka-python's default 100 MB receive cap then fails with
# InvalidReceiveError. Raise the cap well above any sandbox topic.
RECEIVE_MESSAGE_MAX_BYTES = 1024 * 1024 * 1024
# Quirk (noida-db 0.2.3 + kafka-python 3.0.12): DescribeCluster v0 raises KeyError 'endpoint_type' and
# CreateTopics v0/v1 drop the connection; pinning the protocol level to Kafka 2.7 avoids both.
API_VERSION = (2, 7)


class TrackingProducer(KafkaProducer):
    """A KafkaProducer that keeps the metadata of every topic it writes.

    Quirk (kafka-python 3.0.12): send() only adds a topic to the topics whose metadata the producer refreshes when the
    topic is missing from its cache, and the bootstrap caches every topic. Once one topic is added (a remote topic
    created after the producer started), each refresh asks for the added topics alone and the cache drops the others: a
    batch for a dropped topic waits for a leader until delivery.timeout.ms (seen for primary.heartbeats-0 after the
    stand-in had created primary.mst-events: flush blocked 120 s, then the process ended and its restart copied again).
    Real MirrorMaker 2's Java producer tracks every topic it sends to."""

    def __init__(self, **configs):
        super().__init__(**configs)
        self._written = set()

    def send(self, topic, *args, **kwargs):
        if topic not in self._written:
            self._sender.add_topic(topic)  # what KafkaProducer._wait_on_metadata skips for a cached topic
            self._written.add(topic)
        return super().send(topic, *args, **kwargs)


class ClusterClients:
    """Lazily built admin client and producers for one cluster alias; close() closes what was built."""

    def __init__(self, alias, client_settings):
        self.alias = alias
        self.options = {
            "bootstrap_servers": [s.strip() for s in client_settings["bootstrap.servers"].split(",") if s.strip()],
            "security_protocol": client_settings.get("security.protocol", "PLAINTEXT"),
            "api_version": API_VERSION,
            "client_id": "mm2-standin-%s" % alias,
        }
        if self.options["security_protocol"] != "PLAINTEXT":
            raise ValueError("%s: security.protocol %s is not modeled by the stand-in (the sandbox brokers have no TLS/SASL)"
                             % (alias, self.options["security_protocol"]))
        self._admin = None
        self._producer = None
        self._offset_store_producer = None
        self._consumers = []
        self._transactional = []

    def admin(self):
        if self._admin is None:
            self._admin = KafkaAdminClient(request_timeout_ms=15000, **self.options)
        return self._admin

    def producer(self):
        if self._producer is None:
            self._producer = TrackingProducer(acks="all", linger_ms=5, retries=5, max_in_flight_requests_per_connection=1, **self.options)
        return self._producer

    def offset_store_producer(self):
        """The producer of Connect's offsets topic, apart from the tasks': KafkaOffsetBackingStore writes through a
        KafkaBasedLog of its own. A record stuck for a partition the topic has lost (the target rebuilt under a running
        MirrorMaker, the topic auto-created again with fewer partitions) then delays only the offsets' flush, which gives up
        after offset.flush.timeout.ms, never the records, checkpoints or heartbeats: with one shared producer each of their
        flushes waited out that record's delivery timeout (120 s), and test_stale_state's checkpoints starved."""
        if self._offset_store_producer is None:
            self._offset_store_producer = TrackingProducer(acks="all", linger_ms=5, retries=5, max_in_flight_requests_per_connection=1,
                                                           **self.options)
        return self._offset_store_producer

    def consumer(self):
        """A group-less consumer (partitions are assigned, never subscribed: no group coordination)."""
        consumer = KafkaConsumer(enable_auto_commit=False, group_id=None, auto_offset_reset="earliest",
                                 receive_message_max_bytes=RECEIVE_MESSAGE_MAX_BYTES, max_partition_fetch_bytes=16 * 1024 * 1024,
                                 fetch_max_bytes=64 * 1024 * 1024, **self.options)
        self._consumers.append(consumer)
        return consumer

    def ensure_topic(self, name, partitions, replication_factor, configs=None):
        """Create the topic unless it exists; returns True when this call created it."""
        try:
            self.admin().create_topics({name: {"num_partitions": partitions, "replication_factor": replication_factor,
                                               "configs": {k: str(v) for k, v in (configs or {}).items()}}})
        except TopicAlreadyExistsError:
            return False
        LOG.info("created topic %s on %s (%d partitions, replication factor %d%s)", name, self.alias, partitions, replication_factor,
                 ", configs %s" % configs if configs else "")
        return True

    def partition_counts(self, topics=None):
        described = self.admin().describe_topics(topics)
        return {t["name"]: len(t["partitions"]) for t in described if t.get("error_code", 0) == 0}

    def transactional_producer(self, transactional_id):
        """A producer whose sends between begin_transaction() and commit_transaction() land atomically, with commit markers."""
        producer = TrackingProducer(acks="all", linger_ms=5, transactional_id=transactional_id, enable_idempotence=True, **self.options)
        producer.init_transactions()
        self._transactional.append(producer)
        return producer

    def tail(self, topic):
        return TopicTail(self, topic)

    def read_all(self, topic, deadline_s=30.0):
        """Every record of a single-partition topic, oldest first (empty when the topic does not exist yet)."""
        tail = self.tail(topic)
        try:
            return tail.read_new(deadline_s)
        finally:
            tail.close()

    def read_partitions(self, topic, deadline_s=30.0):
        """Every record of every partition of `topic` (partition by partition, each oldest first); empty when it does not exist."""
        count = self.partition_counts([topic]).get(topic)
        if not count:
            return []
        consumer = self.consumer()
        try:
            partitions = [TopicPartition(topic, p) for p in range(count)]
            consumer.assign(partitions)
            consumer.seek_to_beginning(*partitions)
            ends = consumer.end_offsets(partitions)
            records, deadline = {tp: [] for tp in partitions}, time.monotonic() + deadline_s
            while time.monotonic() < deadline and any(consumer.position(tp) < ends[tp] for tp in partitions):
                for tp, batch in consumer.poll(timeout_ms=200).items():
                    records[tp].extend(batch)
            return [record for tp in partitions for record in records[tp]]
        finally:
            self.release(consumer)

    def release(self, consumer):
        consumer.close()
        self._consumers.remove(consumer)

    def close(self):
        for consumer in self._consumers:
            consumer.close()
        for producer in self._transactional + [p for p in (self._producer, self._offset_store_producer) if p is not None]:
            producer.flush()
            producer.close()
        if self._admin is not None:
            self._admin.close()


class TopicTail:
    """Reads a single-partition topic from its start, then on each read_new() what was added since the last one."""

    def __init__(self, clients, topic):
        self.clients, self.topic = clients, topic
        self.partition = TopicPartition(topic, 0)
        self.consumer = None

    def read_new(self, deadline_s=30.0):
        if self.consumer is None:
            if self.topic not in self.clients.partition_counts([self.topic]):
                return []
            self.consumer = self.clients.consumer()
            self.consumer.assign([self.partition])
            self.consumer.seek_to_beginning(self.partition)
        records, deadline = [], time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            # Quirk (noida-db 0.2.3): an empty fetch is answered at once, whatever fetch_max_wait_ms says, so a poll
            # spins on fetches for all of its timeout; short polls, and a pause while the first fetch is still out.
            batch = self.consumer.poll(timeout_ms=50).get(self.partition, [])
            records.extend(batch)
            if batch:
                continue
            # The fetch high watermark, not ListOffsets: tansu's end offsets are wrong with multi-record batches.
            highwater = self.consumer.highwater(self.partition)
            if highwater is not None and self.consumer.position(self.partition) >= highwater:
                break
            time.sleep(0.05)
        return records

    def close(self):
        if self.consumer is not None:
            self.clients.release(self.consumer)
            self.consumer = None
