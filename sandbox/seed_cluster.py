# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The demo data set and writing it into one cluster: `python seed_cluster.py --bootstrap HOST:PORT`.

Topics with keyed records and headers and a consumer group `orders-app` that has consumed part of `orders` and
committed. Idempotent: record k of partition p is always the same record, and each partition is filled only up to its
target count, so seeding again adds nothing and an interrupted seed resumes where it stopped.

Self-contained (the standard library and confluent-kafka only), so that it runs wherever the brokers' advertised names
resolve: `python -m sandbox seed` runs it as the sandbox primary's head node (sandbox/seed.py), the docker molecule
scenario's prepare copies it into the MirrorMaker container and runs it with the mirror_host virtualenv's Python.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class TopicSeed:
    name: str
    partitions: int
    records: int
    configs: tuple = ()


TOPICS = (
    TopicSeed("orders", 8, 20000, (("retention.ms", "604800000"),)),
    TopicSeed("payments", 3, 3000),
    TopicSeed("clickstream", 4, 8000, (("retention.ms", "86400000"),)),
    TopicSeed("tmp.scratch", 1, 100),  # looks like something a mirror should exclude
)
GROUP = "orders-app"
GROUP_TOPIC = "orders"
GROUP_SHARE = (2, 5)  # the group has consumed 2/5 of every partition of orders
TIMEOUT_S = 60.0


def per_partition(topic: TopicSeed) -> list:
    """How many records partition p gets (record i of the topic goes to partition i % partitions)."""
    return [len(range(p, topic.records, topic.partitions)) for p in range(topic.partitions)]


def record(topic: TopicSeed, partition: int, index: int) -> tuple:
    """(key, value, headers) of the record at `index` in `partition`: the same bytes every time."""
    number = index * topic.partitions + partition
    key = f"{topic.name}-key-{number % 997:03d}"
    value = json.dumps({"topic": topic.name, "n": number, "amount_cents": (number * 7919) % 100000, "note": "sandbox seed"}, sort_keys=True)
    headers = [("seed-source", b"kafkaops-sandbox"), ("seed-n", str(number).encode())]
    return key.encode(), value.encode(), headers


def _high_watermarks(bootstrap: str, topic: str, partitions: int) -> list:
    """End offsets from fetch responses (a fetch's high watermark).

    Quirk (tansu 0.6.0): ListOffsets(latest) is wrong after multi-record batches while the fetch high
    watermark is right, so this reads one fetch per partition instead of asking ListOffsets.
    """
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kafkaops-sandbox-seed-probe", "enable.auto.commit": False,
                         "enable.partition.eof": True, "fetch.max.bytes": 1048576, "max.partition.fetch.bytes": 65536,
                         # Quirk (noida-db 0.2.3): it ignores fetch size limits and answers with everything to the end.
                         "receive.message.max.bytes": 200 * 1024 * 1024})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        seen = set()
        deadline = time.monotonic() + TIMEOUT_S
        while len(seen) < partitions and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() and message.error().code() != KafkaError._PARTITION_EOF:
                raise RuntimeError(f"reading {topic}[{message.partition()}] from {bootstrap} failed: {message.error()}")
            if message.partition() not in seen:
                seen.add(message.partition())
                consumer.pause([TopicPartition(topic, message.partition())])
        if len(seen) < partitions:
            raise RuntimeError(f"no fetch answer for {topic} partitions {sorted(set(range(partitions)) - seen)} from {bootstrap} within {TIMEOUT_S}s")
        return [consumer.get_watermark_offsets(TopicPartition(topic, p), cached=True)[1] for p in range(partitions)]
    finally:
        consumer.close()


def _ensure_topics(bootstrap: str) -> list:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    metadata = admin.list_topics(timeout=10)
    existing = metadata.topics
    # HDInsight's replication factor 3 where the cluster has three brokers (real Kafka, whose stock min.insync.replicas 2
    # refuses acks=all writes to a single replica), 1 on the single-broker stand-ins.
    replicas = min(3, len(metadata.brokers))
    missing = [t for t in TOPICS if t.name not in existing]
    wrong = [f"{t.name} has {len(existing[t.name].partitions)} partitions, seed wants {t.partitions}"
             for t in TOPICS if t.name in existing and len(existing[t.name].partitions) != t.partitions]
    if wrong:
        raise RuntimeError("cannot seed over differently shaped topics: " + "; ".join(wrong) + " (delete them or start a fresh sandbox)")
    futures = admin.create_topics([NewTopic(t.name, t.partitions, replicas, config=dict(t.configs)) for t in missing], operation_timeout=10) if missing else {}
    for name, future in futures.items():
        future.result()
    return [t.name for t in missing]


def _fill(bootstrap: str, topic: TopicSeed) -> tuple:
    """Top every partition up to the seed's count; returns how many records were produced and the partitions left as
    found because they already hold more than the seed writes (a user produced there: the demo goes on with their data)."""
    from confluent_kafka import Producer

    ends = _high_watermarks(bootstrap, topic.name, topic.partitions)
    targets = per_partition(topic)
    beyond = [p for p in range(topic.partitions) if ends[p] > targets[p]]
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 5000, "acks": "all",
                         "enable.idempotence": False, "compression.type": "none"})
    errors = []

    def delivered(err, _msg):
        if err is not None:
            errors.append(str(err))

    produced = 0
    for partition in range(topic.partitions):
        for index in range(ends[partition], targets[partition]):
            key, value, headers = record(topic, partition, index)
            while True:
                try:
                    producer.produce(topic.name, value=value, key=key, partition=partition, headers=headers, on_delivery=delivered)
                    break
                except BufferError:
                    producer.poll(0.1)
            produced += 1
    left = producer.flush(TIMEOUT_S)
    if left or errors:
        raise RuntimeError(f"producing to {topic.name} on {bootstrap}: {left} records undelivered, errors: {errors[:3]}")
    return produced, beyond


def group_targets() -> list:
    """Where `orders-app` stands after seeding: GROUP_SHARE of every partition of `orders` consumed."""
    topic = next(t for t in TOPICS if t.name == GROUP_TOPIC)
    return [count * GROUP_SHARE[0] // GROUP_SHARE[1] for count in per_partition(topic)]


def _ensure_group(bootstrap: str) -> dict:
    from confluent_kafka import Consumer, TopicPartition

    targets = group_targets()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         # Quirk (tansu 0.6.0): a join takes session_timeout/2; short timeouts keep it quick.
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000,
                         "receive.message.max.bytes": 200 * 1024 * 1024})  # Quirk (noida-db 0.2.3): unbounded fetch replies
    try:
        committed = consumer.committed([TopicPartition(GROUP_TOPIC, p) for p in range(len(targets))], timeout=10)
        if any(tp.offset >= 0 for tp in committed):
            return {"group": GROUP, "consumed": 0, "committed": {tp.partition: tp.offset for tp in committed if tp.offset >= 0}}
        consumer.subscribe([GROUP_TOPIC])
        consumed = 0
        reached = set()
        deadline = time.monotonic() + TIMEOUT_S
        while len(reached) < len(targets) and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=1000, timeout=0.5):
                if message.error():
                    raise RuntimeError(f"group {GROUP} reading {GROUP_TOPIC}: {message.error()}")
                partition = message.partition()
                if partition in reached:
                    continue
                consumed += 1
                if message.offset() + 1 >= targets[partition]:
                    reached.add(partition)
                    consumer.pause([TopicPartition(GROUP_TOPIC, partition)])
        if len(reached) < len(targets):
            raise RuntimeError(f"group {GROUP} reached its offsets on partitions {sorted(reached)} of {GROUP_TOPIC} only, in {TIMEOUT_S}s")
        offsets = consumer.commit(offsets=[TopicPartition(GROUP_TOPIC, p, target) for p, target in enumerate(targets)], asynchronous=False)
        return {"group": GROUP, "consumed": consumed, "committed": {tp.partition: tp.offset for tp in offsets}}
    finally:
        consumer.close()


def seed_cluster(bootstrap: str) -> dict:
    """Do the seeding against `bootstrap` from this process; returns what was created and produced."""
    created = _ensure_topics(bootstrap)
    produced, beyond_seed = {}, {}
    for topic in TOPICS:
        produced[topic.name], beyond = _fill(bootstrap, topic)
        if beyond:
            beyond_seed[topic.name] = beyond
    return {"bootstrap_servers": bootstrap, "created_topics": created, "produced": produced, "beyond_seed": beyond_seed,
            "group": _ensure_group(bootstrap)}


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description="Seed one cluster from this process.")
    parser.add_argument("--bootstrap", required=True)
    args = parser.parse_args(argv)
    try:
        print(json.dumps(seed_cluster(args.bootstrap)))
    except Exception as exc:  # the caller reports it with the cluster and host it ran on
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
