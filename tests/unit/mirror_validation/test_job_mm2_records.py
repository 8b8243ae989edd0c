# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job's record codec (vendored_mm2_records.py, generated from the collection's _mm2/records.py) against the test vectors
of docs/reference/mm2-records.md (Apache Kafka's byte layouts)."""
import pytest

from mirror_validation.vendored_mm2_records import Checkpoint, MirrorRecordError, OffsetSync


def test_offset_sync_vector():
    sync = OffsetSync.decode(bytes.fromhex("00066f726465727300000003"), bytes.fromhex("00000000000005dc00000000000005da"))
    assert sync == ("orders", 3, 1500, 1498)


def test_checkpoint_vector():
    checkpoint = Checkpoint.decode(
        bytes.fromhex("000a6f72646572732d617070000e7072696d6172792e6f726465727300000003"),
        bytes.fromhex("000000000000000005dc00000000000005da0000"),
    )
    assert checkpoint == ("orders-app", "primary.orders", 3, 1500, 1498, "")


@pytest.mark.parametrize("key, value, message", [
    (bytes.fromhex("00066f7264657273000000"), bytes(16), "truncated"),
    (bytes.fromhex("00066f726465727300000003"), None, "null"),
    (bytes.fromhex("ffff00000003"), bytes(16), "negative string length"),
])
def test_malformed_offset_sync_is_rejected_with_a_reason(key, value, message):
    with pytest.raises(MirrorRecordError, match=message):
        OffsetSync.decode(key, value)


def test_checkpoint_with_unknown_version_is_rejected():
    key = bytes.fromhex("000a6f72646572732d617070000e7072696d6172792e6f726465727300000003")
    with pytest.raises(MirrorRecordError, match="version 1"):
        Checkpoint.decode(key, bytes.fromhex("000100000000000005dc00000000000005da0000"))
