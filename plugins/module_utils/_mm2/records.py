# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 2's record formats: the keys and values of its checkpoints, offset-syncs and heartbeats topics.

Byte formats follow Apache Kafka's Checkpoint, OffsetSync and Heartbeat classes (all integers big-endian, STRING = INT16
length + UTF-8 bytes). This wire-format codec is the one piece the sandbox's MirrorMaker 2 stand-in shares with the
product; what the records mean (names, selection, translation) is defined elsewhere (module_utils/_mm2 and the offsets modules).

Checkpoint, OffsetSync, Heartbeat: named tuples with encode_key()/encode_value() and decode(key_bytes, value_bytes).
"""
from __future__ import annotations

import struct
from collections import namedtuple

RECORD_VERSION = 0

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


class MirrorRecordError(ValueError):
    """A record's bytes do not match the MirrorMaker 2 format."""


class _Reader:
    def __init__(self, data, what):
        if data is None:
            raise MirrorRecordError("%s: record has no bytes (null key or value)" % what)
        self._data = bytes(data)
        self._pos = 0
        self._what = what

    def _take(self, size):
        end = self._pos + size
        if end > len(self._data):
            raise MirrorRecordError("%s: truncated at byte %d (needs %d more, %d left)" % (self._what, self._pos, size, len(self._data) - self._pos))
        chunk = self._data[self._pos:end]
        self._pos = end
        return chunk

    def int16(self):
        return _INT16.unpack(self._take(2))[0]

    def int32(self):
        return _INT32.unpack(self._take(4))[0]

    def int64(self):
        return _INT64.unpack(self._take(8))[0]

    def string(self):
        length = self.int16()
        if length < 0:
            raise MirrorRecordError("%s: negative string length %d" % (self._what, length))
        return self._take(length).decode("utf-8")

    def version(self):
        version = self.int16()
        if version != RECORD_VERSION:
            raise MirrorRecordError("%s: unsupported version %d (expected %d)" % (self._what, version, RECORD_VERSION))
        return version


def _string(value):
    data = value.encode("utf-8")
    return _INT16.pack(len(data)) + data


class Checkpoint(namedtuple("Checkpoint", "group topic partition upstream_offset downstream_offset metadata")):
    """A consumer group's offset translated to the target cluster; `topic` is the target-side (remote) name."""

    __slots__ = ()

    def encode_key(self):
        return _string(self.group) + _string(self.topic) + _INT32.pack(self.partition)

    def encode_value(self):
        return _INT16.pack(RECORD_VERSION) + _INT64.pack(self.upstream_offset) + _INT64.pack(self.downstream_offset) + _string(self.metadata or "")

    @classmethod
    def decode(cls, key, value):
        key_reader = _Reader(key, "checkpoint key")
        group, topic, partition = key_reader.string(), key_reader.string(), key_reader.int32()
        value_reader = _Reader(value, "checkpoint value")
        value_reader.version()
        return cls(group, topic, partition, value_reader.int64(), value_reader.int64(), value_reader.string())


class OffsetSync(namedtuple("OffsetSync", "topic partition upstream_offset downstream_offset")):
    """Upstream offset u of a source topic-partition corresponds to downstream offset d; `topic` is the source name."""

    __slots__ = ()

    def encode_key(self):
        return _string(self.topic) + _INT32.pack(self.partition)

    def encode_value(self):
        return _INT64.pack(self.upstream_offset) + _INT64.pack(self.downstream_offset)

    @classmethod
    def decode(cls, key, value):
        key_reader = _Reader(key, "offset-sync key")
        topic, partition = key_reader.string(), key_reader.int32()
        value_reader = _Reader(value, "offset-sync value")
        return cls(topic, partition, value_reader.int64(), value_reader.int64())


class Heartbeat(namedtuple("Heartbeat", "source_alias target_alias timestamp_ms")):
    """Emitted by the heartbeat connector of the flow source -> target."""

    __slots__ = ()

    def encode_key(self):
        return _string(self.source_alias) + _string(self.target_alias)

    def encode_value(self):
        return _INT16.pack(RECORD_VERSION) + _INT64.pack(self.timestamp_ms)

    @classmethod
    def decode(cls, key, value):
        key_reader = _Reader(key, "heartbeat key")
        source, target = key_reader.string(), key_reader.string()
        value_reader = _Reader(value, "heartbeat value")
        value_reader.version()
        return cls(source, target, value_reader.int64())
