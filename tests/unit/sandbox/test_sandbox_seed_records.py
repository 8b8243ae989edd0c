# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seed's records are deterministic, so seeding twice cannot duplicate them (pure logic)."""
from __future__ import annotations

from sandbox import seed


def test_partition_counts_add_up():
    for topic in seed.TOPICS:
        counts = seed.per_partition(topic)
        assert len(counts) == topic.partitions and sum(counts) == topic.records


def test_records_are_stable_and_keyed_with_headers():
    orders = seed.TOPICS[0]
    assert seed.record(orders, 2, 5) == seed.record(orders, 2, 5)
    assert seed.record(orders, 2, 5) != seed.record(orders, 3, 5)
    key, value, headers = seed.record(orders, 2, 5)
    assert key == b"orders-key-042" and b'"n": 42' in value
    assert headers == [("seed-source", b"kafkaops-sandbox"), ("seed-n", b"42")]


def test_group_is_part_way_through_every_partition():
    counts = seed.per_partition(next(t for t in seed.TOPICS if t.name == seed.GROUP_TOPIC))
    assert all(0 < target < count for target, count in zip(seed.group_targets(), counts))
