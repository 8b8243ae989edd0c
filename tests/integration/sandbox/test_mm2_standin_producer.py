# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in's producer against a sandbox broker: a batch for a topic the producer found in its bootstrap metadata
is delivered although a topic created later made the producer refresh metadata (kafka-python 3.0.12's quirk)."""
from __future__ import annotations

import uuid

import pytest
from kafka import KafkaProducer
from kafka.errors import KafkaTimeoutError

from sandbox.mm2.clients import API_VERSION, TrackingProducer
from tests.support import mm2_kafka_io as kafka_io

pytestmark = pytest.mark.integration
# Long enough that the first topic's batch is still waiting when the metadata for the created topic arrives.
LINGER_MS = 1500
# kafka-python wants delivery_timeout_ms >= linger_ms + request_timeout_ms; an undelivered batch fails after it.
REQUEST_TIMEOUT_MS, DELIVERY_TIMEOUT_MS = 5000, 8000


def delivered(future):
    return future.is_done and future.succeeded()


def send_to_cached_then_created(producer_class, bootstrap):
    """The first record goes to a topic that existed when the producer started, the second to one created after it."""
    warm_up, cached, created = (f"standin-producer-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("warm-up", "cached", "created"))
    kafka_io.create(bootstrap, warm_up, 1)
    kafka_io.create(bootstrap, cached, 1)
    producer = producer_class(bootstrap_servers=bootstrap, api_version=API_VERSION, linger_ms=LINGER_MS,
                              request_timeout_ms=REQUEST_TIMEOUT_MS, delivery_timeout_ms=DELIVERY_TIMEOUT_MS)
    try:
        # As in the stand-in, the producer has written before (here to another topic): its bootstrap has cached every
        # topic's metadata, the cached topic's too.
        producer.partitions_for(warm_up)
        first = producer.send(cached, key=b"k", value=b"to the cached topic")
        kafka_io.create(bootstrap, created, 1)
        second = producer.send(created, key=b"k", value=b"to the created topic")
        try:
            producer.flush(timeout=(LINGER_MS + REQUEST_TIMEOUT_MS) / 1000)
        except KafkaTimeoutError:
            pass  # a batch still waits for its partition's leader: its future says so below
        return cached, created, delivered(first), delivered(second)
    finally:
        producer.close(timeout=2 * DELIVERY_TIMEOUT_MS / 1000)  # an undelivered batch fails at DELIVERY_TIMEOUT_MS


def test_the_quirk_a_plain_producer_loses_the_cached_topic(sandbox):
    """Shows the quirk the stand-in works around; when a kafka-python release fixes it, this fails and TrackingProducer can go."""
    bootstrap = sandbox["clusters"]["secondary"]["bootstrap_servers"]
    _cached, created, first_delivered, second_delivered = send_to_cached_then_created(KafkaProducer, bootstrap)
    assert second_delivered and not first_delivered, "kafka-python delivered the cached topic's batch: its metadata quirk is gone"
    assert kafka_io.end_offsets(bootstrap, created) == {0: 1}


def test_tracking_producer_delivers_to_both_topics(sandbox):
    bootstrap = sandbox["clusters"]["secondary"]["bootstrap_servers"]
    cached, created, first_delivered, second_delivered = send_to_cached_then_created(TrackingProducer, bootstrap)
    assert first_delivered and second_delivered
    # Read back with a separate client.
    assert kafka_io.end_offsets(bootstrap, cached) == {0: 1} and kafka_io.end_offsets(bootstrap, created) == {0: 1}
