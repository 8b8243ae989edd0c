# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offset syncs and checkpoints as the driver reads them from MM2's internal topics (byte layouts: test_job_mm2_records.py)."""
import struct
from collections import namedtuple

from mirror_validation.kafka_reader import RawRecord
from mirror_validation.mm2_checks import latest_checkpoints, latest_syncs, offset_syncs, undecodable_note


def _string(text):
    return struct.pack(">h", len(text)) + text.encode()


Part = namedtuple("Part", "topic partition")


def records(pairs, topic="mm2-offset-syncs.secondary.internal", partition=0):
    return [(Part(topic, partition), RawRecord(offset, key, value, (), None)) for offset, (key, value) in enumerate(pairs)]


def sync(topic, partition, upstream, downstream):
    return _string(topic) + struct.pack(">i", partition), struct.pack(">qq", upstream, downstream)


def checkpoint(group, topic, partition, upstream, downstream):
    return _string(group) + _string(topic) + struct.pack(">i", partition), struct.pack(">hqq", 0, upstream, downstream) + _string("")


def test_syncs_of_validated_topics_the_highest_per_partition_wins():
    read = records([sync("orders", 0, 0, 0), sync("orders", 0, 100, 98), sync("orders", 0, 100, 98), sync("other", 0, 500, 500),
                    (b"not a sync", None), sync("orders", 1, 7, 7), sync("orders", 0, 50, 49)])
    syncs, undecodable = offset_syncs(read, {"orders": 3})
    assert syncs == {(3, 0, 0, 0), (3, 0, 100, 98), (3, 1, 7, 7), (3, 0, 50, 49)}
    assert undecodable == []  # (b"not a sync", None) is a tombstone: skipped, not reported
    assert latest_syncs(syncs) == {(3, 0): (100, 98), (3, 1): (7, 7)}


def test_only_the_newest_checkpoint_of_a_group_and_partition_counts():
    read = records([checkpoint("ok", "primary.orders", 0, 2, 3), checkpoint("superseded", "primary.orders", 0, 2, 4),
                    checkpoint("superseded", "primary.orders", 0, 2, 3), checkpoint("superseded", "primary.orders", 1, 5, 5),
                    checkpoint("ok", "primary.other", 0, 9, 9), (b"\x00\x01", b"")], topic="primary.checkpoints.internal", partition=2)
    newest, undecodable = latest_checkpoints(read, {"primary.orders": 0})
    assert undecodable == ["primary.checkpoints.internal[2]@5: checkpoint key: truncated at byte 2 (needs 1 more, 0 left)"]
    assert newest == [
        {"group": "ok", "pair": 0, "partition": 0, "upstream": 2, "downstream": 3},
        {"group": "superseded", "pair": 0, "partition": 0, "upstream": 2, "downstream": 3},
        {"group": "superseded", "pair": 0, "partition": 1, "upstream": 5, "downstream": 5},
    ]


def test_a_tombstone_is_skipped_silently_and_a_garbage_record_is_reported_with_its_offset():
    """The collection's rule (_mm2/internal_records.decode_records, vendored): MirrorMaker never writes a tombstone there."""
    key, value = sync("orders", 0, 10, 10)
    read = records([(key, None), (key, value), (key, b"\x00" * 3), (b"\xff\xff", value)])
    syncs, undecodable = offset_syncs(read, {"orders": 0})
    assert syncs == {(0, 0, 10, 10)}
    assert undecodable == ["mm2-offset-syncs.secondary.internal[0]@2: offset-sync value: truncated at byte 0 (needs 8 more, 3 left)",
                           "mm2-offset-syncs.secondary.internal[0]@3: offset-sync key: negative string length -1"]
    assert undecodable_note(undecodable) == "; 2 undecodable record(s) skipped: " + ", ".join(undecodable)
    assert undecodable_note([]) == ""


def test_the_note_names_the_first_records_and_counts_the_rest():
    _syncs, undecodable = offset_syncs(records([(b"", b"")] * 8), {})
    note = undecodable_note(undecodable)
    assert note.startswith("; 8 undecodable record(s) skipped: mm2-offset-syncs.secondary.internal[0]@0: ")
    assert "[0]@4: " in note and "[0]@5: " not in note and note.endswith(" and 3 more")
