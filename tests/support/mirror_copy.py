# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build small mirrors on the sandbox without MirrorMaker: produce source topics, then copy them to
`primary.<topic>` on the secondary partition by partition, optionally breaking the copy on purpose.

The copy also writes what MM2 would: offset syncs (u -> d) on the source and checkpoints on the
target, through the sandbox's one MirrorMaker 2 record writer (sandbox.mm2.records), so the anchor and
checkpoint checks have something real to read.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer

from sandbox.mm2.records import MirrorRecords
from tests.support.read_back import read_records

SOURCE_ALIAS, TARGET_ALIAS = "primary", "secondary"
MM2_RECORDS = MirrorRecords(SOURCE_ALIAS, TARGET_ALIAS)
# Quirk (noida-db 0.2.3): fetch replies ignore size limits and carry everything to the log end.
RECEIVE_MAX_BYTES = 200 * 1024 * 1024
TIMEOUT_S = 30.0


@dataclass
class Record:
    key: Optional[bytes]
    value: Optional[bytes]
    headers: list
    timestamp: int


# A mutation turns the source partitions {partition: [Record]} into what lands on the target.
Mutation = Callable[[Dict[int, List[Record]]], Dict[int, List[Record]]]


@dataclass
class Scenario:
    name: str
    mutate: Optional[Mutation] = None  # None: a faithful copy
    create_target: bool = True
    expire_before: int = 0  # after copying, delete source records below this offset (as retention would)
    bad_syncs: list = field(default_factory=list)  # extra (partition, upstream, downstream) syncs that lie
    checkpoints: list = field(default_factory=list)  # (group, partition, upstream, downstream)


def source_records(topic: str, partitions: int, per_partition: int) -> Dict[int, List[Record]]:
    # Recent timestamps: time-based retention (7 days by default) deletes records with old ones.
    base = int(time.time() * 1000) - 3_600_000
    return {
        p: [Record(("%s-key-%d" % (topic, i % 17)).encode(), ("%s p%d #%d" % (topic, p, i)).encode() * 3,
                   [("n", str(i).encode()), ("origin", b"mirror-validation-test")], base + i * 10 + p)
            for i in range(per_partition)]
        for p in range(partitions)
    }


def ensure_topic(bootstrap: str, name: str, partitions: int, configs: Optional[dict] = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    if name in admin.list_topics(timeout=10).topics:
        return
    for future in admin.create_topics([NewTopic(name, partitions, 1, config=configs or {})], operation_timeout=10).values():
        future.result()


def produce(bootstrap: str, topic: str, records: Dict[int, List[Record]]) -> None:
    """Write partition by partition, in order; one record per request so offsets follow the list exactly."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": False, "acks": "all",
                         "max.in.flight.requests.per.connection": 1})
    errors = []
    for partition, batch in sorted(records.items()):
        for record in batch:
            producer.produce(topic, key=record.key, value=record.value, headers=record.headers, partition=partition,
                             timestamp=record.timestamp, on_delivery=lambda err, _m: err and errors.append(str(err)))
        producer.flush(TIMEOUT_S)
    if errors:
        raise RuntimeError("producing to %s on %s: %s" % (topic, bootstrap, errors[:3]))


def produce_mm2_records(bootstrap: str, records: list) -> None:
    """Write MirrorRecords records (topic, key, value) into MM2's single-partition internal topics."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for record in records:
        producer.produce(record.topic, key=record.key, value=record.value, partition=0)
    if producer.flush(TIMEOUT_S):
        raise RuntimeError("producing MirrorMaker 2 records on %s did not finish" % bootstrap)


def read_back(bootstrap: str, topic: str) -> Dict[int, List[Record]]:
    """Everything in `topic`, as the copy's input: what the source broker really stored."""
    # Quirk (noida-db 0.2.3 + kafka-python 3.0.12): DescribeCluster v0 KeyError; pin the protocol level.
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, api_version=(2, 7), group_id=None, enable_auto_commit=False,
                             receive_message_max_bytes=RECEIVE_MAX_BYTES, request_timeout_ms=15000)
    try:
        return {partition: [Record(r.key, r.value, list(r.headers or []), r.timestamp) for r in records]
                for partition, records in read_records(consumer, topic, TIMEOUT_S).items()}
    finally:
        consumer.close()


def build(source_bootstrap: str, target_bootstrap: str, topic: str, scenario: Scenario, partitions: int = 3, per_partition: int = 100) -> dict:
    """Create `topic` on the source, mirror it as primary.<topic> per `scenario`; returns the names."""
    target_topic = MM2_RECORDS.remote_topic(topic)
    ensure_topic(source_bootstrap, topic, partitions)
    produce(source_bootstrap, topic, source_records(topic, partitions, per_partition))
    stored = read_back(source_bootstrap, topic)
    if scenario.create_target:
        copied = scenario.mutate(stored) if scenario.mutate else stored
        ensure_topic(target_bootstrap, target_topic, partitions)
        produce(target_bootstrap, target_topic, copied)
        # MM2 emits a sync when it starts a partition; the copy starts every partition at offset 0 -> 0.
        syncs = [MM2_RECORDS.offset_sync(topic, p, 0, 0) for p in range(partitions) if stored[p] and copied.get(p)]
        syncs += [MM2_RECORDS.offset_sync(topic, p, u, d) for p, u, d in scenario.bad_syncs]
        produce_mm2_records(source_bootstrap, syncs)
        produce_mm2_records(target_bootstrap, [MM2_RECORDS.checkpoint_record(MM2_RECORDS.checkpoint(g, topic, p, u, d))
                                               for g, p, u, d in scenario.checkpoints])
    if scenario.expire_before:
        delete_records_before(source_bootstrap, topic, partitions, scenario.expire_before)
    return {"source_topic": topic, "target_topic": target_topic}


def delete_records_before(bootstrap: str, topic: str, partitions: int, offset: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.delete_records([TopicPartition(topic, p, offset) for p in range(partitions)], request_timeout=10).values():
        future.result()


def prepare_internal_topics(source_bootstrap: str, target_bootstrap: str) -> None:
    ensure_topic(source_bootstrap, MM2_RECORDS.offset_syncs_topic, 1, {"cleanup.policy": "compact"})
    ensure_topic(target_bootstrap, MM2_RECORDS.checkpoints_topic, 1, {"cleanup.policy": "compact"})


def build_on(state: dict, prefix: str, scenarios: list) -> dict:
    """{scenario name: build()'s names}: every scenario as topics of its own on the sandbox `state`, named
    `<prefix><6 random hex digits>-<scenario>` so that runs and modules never share one, the MirrorMaker internal topics
    prepared first."""
    source = state["clusters"][SOURCE_ALIAS]["bootstrap_servers"]
    target = state["clusters"][TARGET_ALIAS]["bootstrap_servers"]
    prepare_internal_topics(source, target)
    prefix = "%s%s" % (prefix, uuid.uuid4().hex[:6])
    return {scenario.name: build(source, target, "%s-%s" % (prefix, scenario.name), scenario) for scenario in scenarios}


# Ways to break a copy, each the defect one test expects the validator to find.
def drop(partition: int, index: int) -> Mutation:
    def mutate(parts):
        return {p: [r for i, r in enumerate(rs) if not (p == partition and i == index)] for p, rs in parts.items()}
    return mutate


def duplicate(partition: int, indexes: list) -> Mutation:
    def mutate(parts):
        out = {p: list(rs) for p, rs in parts.items()}
        for index in sorted(indexes, reverse=True):
            out[partition].insert(index + 1, parts[partition][index])
        return out
    return mutate


def swap(partition: int, index: int) -> Mutation:
    def mutate(parts):
        out = {p: list(rs) for p, rs in parts.items()}
        out[partition][index], out[partition][index + 1] = out[partition][index + 1], out[partition][index]
        return out
    return mutate


def corrupt(partition: int, index: int) -> Mutation:
    def mutate(parts):
        out = {p: list(rs) for p, rs in parts.items()}
        record = out[partition][index]
        out[partition][index] = Record(record.key, record.value[:-1] + b"!", record.headers, record.timestamp)
        return out
    return mutate


def move(partition: int, index: int, to_partition: int) -> Mutation:
    def mutate(parts):
        out = {p: list(rs) for p, rs in parts.items()}
        record = out[partition].pop(index)
        out[to_partition].insert(index, record)
        return out
    return mutate


def stop_after(partition: int, count: int) -> Mutation:
    """A copy that stopped early: only the first `count` records of `partition` reached the target."""
    def mutate(parts):
        return {p: rs[:count] if p == partition else list(rs) for p, rs in parts.items()}
    return mutate
