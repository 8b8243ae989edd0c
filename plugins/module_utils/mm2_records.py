# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 2 internal records, offset translation and remote-topic naming.

Byte formats follow Apache Kafka's Checkpoint, OffsetSync and Heartbeat classes (all integers
big-endian, STRING = INT16 length + UTF-8 bytes). This is the one place that knows them; the
kafka_mirror_status and kafka_mirror_offsets modules, the failover role and the sandbox stand-in
all import from here.

Public API:
- Checkpoint, OffsetSync, Heartbeat: named tuples with encode_key()/encode_value() and
  decode(key_bytes, value_bytes) class methods.
- translate_downstream(syncs, upstream_offset): the OffsetSyncStore.translateDownstream rule.
- ReplicationPolicy(kind, separator): remote_topic(), source_alias(), upstream_topic(), is_internal().
- Internal topic names: heartbeats_topic(), checkpoints_topic(source), offset_syncs_topic(target).
"""
from __future__ import annotations

import struct
from collections import namedtuple

HEARTBEATS_TOPIC = "heartbeats"
DEFAULT_SEPARATOR = "."
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


def translate_downstream(syncs, upstream_offset):
    """Translate a group's upstream offset to the target, or return None when no sync allows it.

    `syncs` is an iterable of OffsetSync (or (upstream, downstream) pairs) for one topic-partition.
    With the latest sync (u, d) at or before the offset g: g == u gives d, g > u gives d + 1 (the
    consumer re-reads rather than skips). No sync at or before g gives no translation: never guess.
    """
    best = None
    for sync in syncs:
        upstream, downstream = (sync.upstream_offset, sync.downstream_offset) if isinstance(sync, OffsetSync) else sync
        if upstream <= upstream_offset and (best is None or upstream >= best[0]):
            best = (upstream, downstream)
    if best is None:
        return None
    return best[1] if upstream_offset == best[0] else best[1] + 1


def heartbeats_topic():
    return HEARTBEATS_TOPIC


def checkpoints_topic(source_alias):
    return "%s.checkpoints.internal" % source_alias


def offset_syncs_topic(target_alias):
    return "mm2-offset-syncs.%s.internal" % target_alias


class ReplicationPolicy:
    """DefaultReplicationPolicy (`default`, `<source><separator><topic>`) or IdentityReplicationPolicy (`identity`).

    Identity keeps topic names, except heartbeats, which it still prefixes like the default policy so
    that heartbeats of several flows do not collide (as IdentityReplicationPolicy does).
    """

    KINDS = ("default", "identity")

    def __init__(self, kind="default", separator=DEFAULT_SEPARATOR):
        if kind not in self.KINDS:
            raise ValueError("replication policy %r is not one of %s" % (kind, ", ".join(self.KINDS)))
        if not separator:
            raise ValueError("replication policy separator must not be empty")
        self.kind = kind
        self.separator = separator

    def _prefixes(self, topic):
        return self.kind == "default" or topic == HEARTBEATS_TOPIC or topic.endswith(self.separator + HEARTBEATS_TOPIC)

    def remote_topic(self, source_alias, topic):
        """Name on the target of `topic` replicated from the cluster `source_alias`."""
        if self._prefixes(topic):
            return "%s%s%s" % (source_alias, self.separator, topic)
        return topic

    def source_alias(self, remote_topic):
        """The alias a remote topic came from under the default policy, or None (identity names carry none)."""
        if self.kind == "identity" and not remote_topic.endswith(HEARTBEATS_TOPIC):
            return None
        alias, sep, _rest = remote_topic.partition(self.separator)
        return alias if sep and alias else None

    def upstream_topic(self, remote_topic):
        """The topic name on the source cluster, or None when the name is not a remote topic."""
        if self.kind == "identity" and not remote_topic.endswith(HEARTBEATS_TOPIC):
            return remote_topic
        _alias, sep, rest = remote_topic.partition(self.separator)
        return rest if sep and rest else None

    def is_cycle(self, topic, target_alias):
        """True when replicating `topic` to `target_alias` would send it back where it came from (default policy)."""
        current = topic
        while True:
            alias = self.source_alias(current)
            if alias is None:
                return False
            if alias == target_alias:
                return True
            current = self.upstream_topic(current)

    @staticmethod
    def is_internal(topic):
        """MM2 and Kafka internal topics, never replicated (DefaultReplicationPolicy.isInternalTopic)."""
        return topic.startswith("__") or topic.startswith(".") or topic.endswith(".internal")
