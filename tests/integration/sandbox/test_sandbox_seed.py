# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`sandbox seed`: topics, keyed records with headers and a part-consumed group on primary; idempotent.
Everything is read back with kafka-python, not the confluent-kafka client the seed uses."""
from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from sandbox import seed

pytestmark = pytest.mark.integration


def end_offsets(state: dict, topic: str, partitions: int) -> list:
    consumer = KafkaConsumer(bootstrap_servers=state["clusters"]["primary"]["bootstrap_servers"], api_version=(2, 7),
                             # Quirk (noida-db 0.2.3): fetch replies ignore size limits.
                             receive_message_max_bytes=200 * 1024 * 1024)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        return [consumer.end_offsets(tps)[tp] for tp in tps]
    finally:
        consumer.close()


def first_records(state: dict, topic: str, partition: int, count: int) -> list:
    consumer = KafkaConsumer(bootstrap_servers=state["clusters"]["primary"]["bootstrap_servers"], api_version=(2, 7), enable_auto_commit=False,
                             receive_message_max_bytes=200 * 1024 * 1024, consumer_timeout_ms=5000)
    try:
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        records = []
        for message in consumer:
            records.append(message)
            if len(records) == count:
                break
        return records
    finally:
        consumer.close()


def test_seed_creates_data_and_group_once(fresh_sandbox, kafka_admin):
    state = fresh_sandbox("noida")
    first = seed.seed(state["dir"])
    assert sorted(first["created_topics"]) == sorted(t.name for t in seed.TOPICS)
    assert first["produced"] == {t.name: t.records for t in seed.TOPICS}

    admin = kafka_admin(state, "primary")
    described = {t["name"]: t for t in admin.describe_topics([t.name for t in seed.TOPICS])}
    for topic in seed.TOPICS:
        assert len(described[topic.name]["partitions"]) == topic.partitions
        assert end_offsets(state, topic.name, topic.partitions) == seed.per_partition(topic)
    assert admin.list_topics() and "orders" not in kafka_admin(state, "secondary").list_topics()

    group_offsets = admin.list_group_offsets(seed.GROUP)[seed.GROUP]
    assert {tp.partition: meta.offset for tp, meta in group_offsets.items() if tp.topic == "orders"} == dict(enumerate(seed.group_targets()))
    assert all(0 < target < count for target, count in zip(seed.group_targets(), seed.per_partition(seed.TOPICS[0])))

    orders = next(t for t in seed.TOPICS if t.name == "orders")
    for message in first_records(state, "orders", 3, 5):
        key, value, headers = seed.record(orders, 3, message.offset)
        assert (message.key, message.value) == (key, value)
        assert list(message.headers) == headers

    again = seed.seed(state["dir"])
    assert again["created_topics"] == [] and set(again["produced"].values()) == {0} and again["group"]["consumed"] == 0
    assert again["beyond_seed"] == {}
    for topic in seed.TOPICS:
        assert end_offsets(state, topic.name, topic.partitions) == seed.per_partition(topic)

    # A user produced to a seeded partition (make demo, then their own records, then make demo again): the seed leaves it.
    producer = KafkaProducer(bootstrap_servers=state["clusters"]["primary"]["bootstrap_servers"], api_version=(2, 7))
    producer.send("orders", key=b"mine", value=b"a user's record", partition=2).get(timeout=30)
    producer.close()
    expected = seed.per_partition(orders)
    expected[2] += 1
    third = seed.seed(state["dir"])
    assert third["beyond_seed"] == {"orders": [2]} and set(third["produced"].values()) == {0}
    assert end_offsets(state, "orders", orders.partitions) == expected


def test_seed_without_a_running_sandbox_fails_clearly(tmp_path):
    with pytest.raises(seed.api.SandboxError, match="no running sandbox"):
        seed.seed(tmp_path)
