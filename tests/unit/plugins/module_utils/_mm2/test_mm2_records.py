# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 2 record codec against the reference test vectors (docs/reference/mm2-records.md)."""
import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import (
    Checkpoint,
    Heartbeat,
    MirrorRecordError,
    OffsetSync,
)

CHECKPOINT = Checkpoint("orders-app", "primary.orders", 3, 1500, 1498, "")
CHECKPOINT_KEY = "000a6f72646572732d617070000e7072696d6172792e6f726465727300000003"
CHECKPOINT_VALUE = "000000000000000005dc00000000000005da0000"
OFFSET_SYNC = OffsetSync("orders", 3, 1500, 1498)
OFFSET_SYNC_KEY = "00066f726465727300000003"
OFFSET_SYNC_VALUE = "00000000000005dc00000000000005da"
HEARTBEAT = Heartbeat("primary", "secondary", 1795300498304)
HEARTBEAT_KEY = "00077072696d61727900097365636f6e64617279"
HEARTBEAT_VALUE = "0000000001a2003f9b80"

VECTORS = [
    (CHECKPOINT, CHECKPOINT_KEY, CHECKPOINT_VALUE),
    (OFFSET_SYNC, OFFSET_SYNC_KEY, OFFSET_SYNC_VALUE),
    (HEARTBEAT, HEARTBEAT_KEY, HEARTBEAT_VALUE),
]


@pytest.mark.parametrize("record,key_hex,value_hex", VECTORS, ids=["checkpoint", "offset-sync", "heartbeat"])
def test_encode_matches_reference_vector(record, key_hex, value_hex):
    assert record.encode_key().hex() == key_hex
    assert record.encode_value().hex() == value_hex


@pytest.mark.parametrize("record,key_hex,value_hex", VECTORS, ids=["checkpoint", "offset-sync", "heartbeat"])
def test_decode_matches_reference_vector(record, key_hex, value_hex):
    assert type(record).decode(bytes.fromhex(key_hex), bytes.fromhex(value_hex)) == record


def test_checkpoint_metadata_and_unicode_round_trip():
    record = Checkpoint("grüppe", "primary.töpic", 0, 7, 5, "meta")
    assert Checkpoint.decode(record.encode_key(), record.encode_value()) == record


@pytest.mark.parametrize(
    "cls,key,value,message",
    [
        (Checkpoint, CHECKPOINT_KEY, "0001" + CHECKPOINT_VALUE[4:], "unsupported version 1"),
        (Heartbeat, HEARTBEAT_KEY, HEARTBEAT_VALUE[:-2], "heartbeat value: truncated"),
        (OffsetSync, OFFSET_SYNC_KEY[:-2], OFFSET_SYNC_VALUE, "offset-sync key: truncated"),
    ],
)
def test_decode_rejects_malformed_bytes(cls, key, value, message):
    with pytest.raises(MirrorRecordError, match=message):
        cls.decode(bytes.fromhex(key), bytes.fromhex(value))


def test_decode_rejects_null_value():
    with pytest.raises(MirrorRecordError, match="null key or value"):
        OffsetSync.decode(bytes.fromhex(OFFSET_SYNC_KEY), None)
