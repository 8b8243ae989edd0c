# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offset syncs and checkpoints as the driver reads them from MM2's internal topics (byte layouts: test_mm2_records.py)."""
import struct

from mirror_validation.kafka_reader import RawRecord
from mirror_validation.mm2_checks import latest_checkpoints, latest_syncs, offset_syncs


def _string(text):
    return struct.pack(">h", len(text)) + text.encode()


def records(pairs):
    return [(None, RawRecord(offset, key, value, (), None)) for offset, (key, value) in enumerate(pairs)]


def sync(topic, partition, upstream, downstream):
    return _string(topic) + struct.pack(">i", partition), struct.pack(">qq", upstream, downstream)


def checkpoint(group, topic, partition, upstream, downstream):
    return _string(group) + _string(topic) + struct.pack(">i", partition), struct.pack(">hqq", 0, upstream, downstream) + _string("")


def test_syncs_of_validated_topics_the_highest_per_partition_wins():
    read = records([sync("orders", 0, 0, 0), sync("orders", 0, 100, 98), sync("orders", 0, 100, 98), sync("other", 0, 500, 500),
                    (b"not a sync", None), sync("orders", 1, 7, 7), sync("orders", 0, 50, 49)])
    syncs = offset_syncs(read, {"orders": 3})
    assert syncs == {(3, 0, 0, 0), (3, 0, 100, 98), (3, 1, 7, 7), (3, 0, 50, 49)}
    assert latest_syncs(syncs) == {(3, 0): (100, 98), (3, 1): (7, 7)}


def test_only_the_newest_checkpoint_of_a_group_and_partition_counts():
    read = records([checkpoint("ok", "primary.orders", 0, 2, 3), checkpoint("superseded", "primary.orders", 0, 2, 4),
                    checkpoint("superseded", "primary.orders", 0, 2, 3), checkpoint("superseded", "primary.orders", 1, 5, 5),
                    checkpoint("ok", "primary.other", 0, 9, 9), (b"\x00\x01", b"")])
    assert latest_checkpoints(read, {"primary.orders": 0}) == [
        {"group": "ok", "pair": 0, "partition": 0, "upstream": 2, "downstream": 3},
        {"group": "superseded", "pair": 0, "partition": 0, "upstream": 2, "downstream": 3},
        {"group": "superseded", "pair": 0, "partition": 1, "upstream": 5, "downstream": 5},
    ]
