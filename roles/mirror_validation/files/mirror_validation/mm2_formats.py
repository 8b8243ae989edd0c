"""Decoders for the MirrorMaker 2 records the job checks against: offset syncs and checkpoints.

The formats are those of Apache Kafka's OffsetSync.java and Checkpoint.java, the same ones that
plugins/module_utils/mm2_records.py of the kafkaops.mirror collection reads. This job carries its own
copy because it runs on Spark executors where the collection is not installed.
All integers are big-endian; STRING is an INT16 length followed by UTF-8 bytes.
"""
from __future__ import annotations

import struct
from collections import namedtuple

OffsetSync = namedtuple("OffsetSync", "topic partition upstream_offset downstream_offset")
Checkpoint = namedtuple("Checkpoint", "group topic partition upstream_offset downstream_offset metadata")


class RecordFormatError(ValueError):
    """A record on an MM2 internal topic does not have the documented layout."""


class _Cursor:
    def __init__(self, data, what):
        if data is None:
            raise RecordFormatError("%s is null" % what)
        self.data = data
        self.pos = 0
        self.what = what

    def take(self, fmt):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise RecordFormatError("%s is truncated at byte %d" % (self.what, self.pos))
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value

    def string(self):
        length = self.take(">h")
        if length < 0 or self.pos + length > len(self.data):
            raise RecordFormatError("%s has a bad string length %d at byte %d" % (self.what, length, self.pos - 2))
        text = self.data[self.pos:self.pos + length].decode("utf-8")
        self.pos += length
        return text


def decode_offset_sync(key, value):
    """OffsetSync: key topic STRING + partition INT32; value upstream INT64 + downstream INT64."""
    key_cursor = _Cursor(key, "offset-sync key")
    topic = key_cursor.string()
    partition = key_cursor.take(">i")
    value_cursor = _Cursor(value, "offset-sync value")
    return OffsetSync(topic, partition, value_cursor.take(">q"), value_cursor.take(">q"))


def decode_checkpoint(key, value):
    """Checkpoint: key group, topic (target-side name), partition; value version, upstream, downstream, metadata."""
    key_cursor = _Cursor(key, "checkpoint key")
    group = key_cursor.string()
    topic = key_cursor.string()
    partition = key_cursor.take(">i")
    value_cursor = _Cursor(value, "checkpoint value")
    version = value_cursor.take(">h")
    if version != 0:
        raise RecordFormatError("checkpoint value has unknown version %d" % version)
    upstream = value_cursor.take(">q")
    downstream = value_cursor.take(">q")
    return Checkpoint(group, topic, partition, upstream, downstream, value_cursor.string())
