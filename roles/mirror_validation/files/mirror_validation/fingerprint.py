"""Record fingerprints: what must survive mirroring unchanged."""
from __future__ import annotations

import hashlib
import struct

DIGEST_SIZE = 16
_LENGTH = struct.Struct(">I").pack
_PRESENT_AND_LENGTH = struct.Struct(">BI").pack
_TIMESTAMP = struct.Struct(">q").pack
_NO_HEADERS = _LENGTH(0)
_ABSENT = b"\x00"
_blake2b = hashlib.blake2b


def _as_bytes(text_or_bytes):
    if text_or_bytes is None or type(text_or_bytes) is bytes:  # pylint: disable=unidiomatic-typecheck  # the common case, fast
        return text_or_bytes
    return str(text_or_bytes).encode("utf-8")


def _header_order(header):
    name, data = header
    return name, data is not None, data or b""


def record_fingerprint(key, value, headers=None, timestamp=None):
    """blake2b over key, value, the headers sorted by (name, value) and, when given, the timestamp.

    Every field is length-prefixed after a presence byte, so that (key=b"ab", value=b"c") and (key=b"a",
    value=b"bc") differ and a null key differs from an empty one. Header order is not guaranteed to be kept by
    every client, so it is not part of the identity. This runs once per record read: the fields are joined and
    hashed in one call, without a function call per field.
    """
    parts = [_ABSENT if key is None else _PRESENT_AND_LENGTH(1, len(key)) + key,
             _ABSENT if value is None else _PRESENT_AND_LENGTH(1, len(value)) + value]
    if headers:
        normalized = [(_as_bytes(name), _as_bytes(data)) for name, data in headers]
        if len(normalized) > 1:
            normalized.sort(key=_header_order)
        parts.append(_LENGTH(len(normalized)))
        for name, data in normalized:
            parts.append(_ABSENT if name is None else _PRESENT_AND_LENGTH(1, len(name)) + name)
            parts.append(_ABSENT if data is None else _PRESENT_AND_LENGTH(1, len(data)) + data)
    else:
        parts.append(_NO_HEADERS)
    parts.append(_ABSENT if timestamp is None else b"\x01" + _TIMESTAMP(timestamp))
    return _blake2b(b"".join(parts), digest_size=DIGEST_SIZE).digest()
