"""Decoders against the test vectors of docs/reference/mm2-records.md (Apache Kafka's byte layouts)."""
import pytest

from mirror_validation.mm2_formats import RecordFormatError, decode_checkpoint, decode_offset_sync


def test_offset_sync_vector():
    sync = decode_offset_sync(bytes.fromhex("00066f726465727300000003"), bytes.fromhex("00000000000005dc00000000000005da"))
    assert sync == ("orders", 3, 1500, 1498)


def test_checkpoint_vector():
    checkpoint = decode_checkpoint(
        bytes.fromhex("000a6f72646572732d617070000e7072696d6172792e6f726465727300000003"),
        bytes.fromhex("000000000000000005dc00000000000005da0000"),
    )
    assert checkpoint == ("orders-app", "primary.orders", 3, 1500, 1498, "")


@pytest.mark.parametrize("key, value, message", [
    (bytes.fromhex("00066f7264657273000000"), bytes(16), "truncated"),
    (bytes.fromhex("00066f726465727300000003"), None, "null"),
    (bytes.fromhex("ffff00000003"), bytes(16), "bad string length"),
])
def test_malformed_offset_sync_is_rejected_with_a_reason(key, value, message):
    with pytest.raises(RecordFormatError, match=message):
        decode_offset_sync(key, value)


def test_checkpoint_with_unknown_version_is_rejected():
    key = bytes.fromhex("000a6f72646572732d617070000e7072696d6172792e6f726465727300000003")
    with pytest.raises(RecordFormatError, match="version 1"):
        decode_checkpoint(key, bytes.fromhex("000100000000000005dc00000000000005da0000"))
