# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Record fingerprints: what must survive mirroring unchanged."""
from __future__ import annotations

import hashlib
import struct

DIGEST_SIZE = 16
_LENGTH = struct.Struct(">I").pack
_PRESENT_AND_LENGTH = struct.Struct(">BI").pack
_PRESENT_TIMESTAMP = struct.Struct(">Bq").pack
_NO_HEADERS = _LENGTH(0)
_ONE_HEADER = _LENGTH(1)
_ABSENT = b"\x00"
_EMPTY = b""
_blake2b = hashlib.blake2b


def _as_bytes(text_or_bytes):
    if text_or_bytes is None or type(text_or_bytes) is bytes:  # pylint: disable=unidiomatic-typecheck  # the common case, fast
        return text_or_bytes
    return str(text_or_bytes).encode("utf-8")


def _header_order(header):
    name, data = header
    return name, data is not None, data or b""


def _headers_part(headers):
    """The headers, sorted by (name, value): header order is not guaranteed to be kept by every client."""
    if len(headers) == 1:  # the common case, without a list and a sort
        name, data = headers[0]
        name, data = _as_bytes(name), _as_bytes(data)
        return b"".join((_ONE_HEADER, _ABSENT if name is None else _PRESENT_AND_LENGTH(1, len(name)), name or _EMPTY,
                         _ABSENT if data is None else _PRESENT_AND_LENGTH(1, len(data)), data or _EMPTY))
    normalized = sorted(((_as_bytes(name), _as_bytes(data)) for name, data in headers), key=_header_order)
    parts = [_LENGTH(len(normalized))]
    for name, data in normalized:
        parts.append(_ABSENT if name is None else _PRESENT_AND_LENGTH(1, len(name)) + name)
        parts.append(_ABSENT if data is None else _PRESENT_AND_LENGTH(1, len(data)) + data)
    return b"".join(parts)


def record_fingerprint(key, value, headers=None, timestamp=None):
    """blake2b over key, value, the headers sorted by (name, value) and, when given, the timestamp.

    Every field is length-prefixed after a presence byte, so that (key=b"ab", value=b"c") and (key=b"a",
    value=b"bc") differ and a null key differs from an empty one. Header order is not part of the identity.
    This runs once per record read: the fields are joined and hashed in one call.
    """
    return _blake2b(b"".join((
        _ABSENT if key is None else _PRESENT_AND_LENGTH(1, len(key)), key or _EMPTY,
        _ABSENT if value is None else _PRESENT_AND_LENGTH(1, len(value)), value or _EMPTY,
        _headers_part(headers) if headers else _NO_HEADERS,
        _ABSENT if timestamp is None else _PRESENT_TIMESTAMP(1, timestamp))), digest_size=DIGEST_SIZE).digest()


# Bytes of a key's digest: a key's records are grouped by it (topic_match.py); a collision merges two keys' order checks only
# when their records also share a source and a target partition, at about n**2 / 2**65 for n keys.
KEY_DIGEST_SIZE = 8


def key_digests(batch, start=0, end=None):
    """The digests of the keys of records start..end of `batch`, None for a null key (such a record has no key order)."""
    return [None if key is None else _blake2b(_as_bytes(key), digest_size=KEY_DIGEST_SIZE).digest() for key in batch.keys[start:end]]


def fingerprints(batch, with_timestamp, start=0, end=None):
    """The fingerprints of records start..end of `batch` (kafka_reader.Batch), the timestamp counted when `with_timestamp`."""
    columns = [batch.keys[start:end], batch.values[start:end], batch.headers[start:end]]
    if with_timestamp:
        columns.append(batch.timestamps[start:end])
    return list(map(record_fingerprint, *columns))
