# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Independent produce / read-back for the mirrormaker2 tests: plain kafka-python, none of the collection's code."""
from __future__ import annotations

import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import TopicAlreadyExistsError
from kafka.structs import OffsetAndMetadata

from tests.support.read_back import read_records

# Quirk (noida-db 0.2.3 + kafka-python 3.0.12): DescribeCluster v0 KeyError and CreateTopics v0/v1 drop; pin the level.
API_VERSION = (2, 7)
# Quirk (noida-db 0.2.3): a fetch returns the whole partition regardless of size limits; raise the receive cap.
RECEIVE_MAX = 512 * 1024 * 1024


def _options(bootstrap):
    return {"bootstrap_servers": bootstrap, "request_timeout_ms": 15000, "api_version": API_VERSION}


def topics(bootstrap):
    admin = KafkaAdminClient(**_options(bootstrap))
    try:
        return set(admin.list_topics())
    finally:
        admin.close()


def create(bootstrap, name, partitions, configs=None):
    admin = KafkaAdminClient(**_options(bootstrap))
    try:
        admin.create_topics({name: {"num_partitions": partitions, "replication_factor": 1, "configs": configs or {}}})
    except TopicAlreadyExistsError:
        pass
    finally:
        admin.close()


def produce(bootstrap, topic, count, partitions, start=0):
    """`count` records spread over the partitions, each with a key, a value, a header and an explicit timestamp."""
    producer = KafkaProducer(**_options(bootstrap), linger_ms=5)
    base_ms = int(time.time() * 1000) - 3_600_000  # an hour ago, so a copied timestamp cannot be the copy time
    for index in range(start, start + count):
        producer.send(topic, key=b"key-%d" % index, value=b"value-%d" % index, headers=[("seq", str(index).encode())],
                      partition=index % partitions, timestamp_ms=base_ms + index)
    producer.flush()
    producer.close()


def read_all(bootstrap, topic):
    """{partition: [(key, value, headers, timestamp), ...]} of the whole topic."""
    consumer = KafkaConsumer(**_options(bootstrap), group_id=None, enable_auto_commit=False, receive_message_max_bytes=RECEIVE_MAX)
    try:
        return {partition: [(r.key, r.value, tuple(r.headers), r.timestamp) for r in records]
                for partition, records in read_records(consumer, topic).items()}
    finally:
        consumer.close()


def commit(bootstrap, group, topic, offsets):
    """Commit `offsets` ({partition: offset} of `topic`) for `group`, as a consumer that has read that far would."""
    consumer = KafkaConsumer(**_options(bootstrap), group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1) for partition, offset in offsets.items()})
    finally:
        consumer.close()


def end_offsets(bootstrap, topic):
    consumer = KafkaConsumer(**_options(bootstrap), group_id=None)
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        return {tp.partition: offset for tp, offset in consumer.end_offsets(partitions).items()} if partitions else {}
    finally:
        consumer.close()


def wait_for(predicate, timeout_s, interval_s=0.5):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    return predicate()
