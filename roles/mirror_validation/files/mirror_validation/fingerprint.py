"""Record fingerprints: what must survive mirroring unchanged."""
from __future__ import annotations

import hashlib
import struct

DIGEST_SIZE = 16
_LENGTH = struct.Struct(">I").pack
_TIMESTAMP = struct.Struct(">q").pack
_NO_HEADERS = _LENGTH(0)


def _absent_or_sized(data):
    # Length-prefix every field so that (key=b"ab", value=b"c") and (key=b"a", value=b"bc") differ,
    # and a null key differs from an empty one.
    if data is None:
        return b"\x00"
    return b"\x01" + _LENGTH(len(data)) + data


def _as_bytes(text_or_bytes):
    if text_or_bytes is None or isinstance(text_or_bytes, bytes):
        return text_or_bytes
    return str(text_or_bytes).encode("utf-8")


def _header_order(header):
    name, data = header
    return name, data is not None, data or b""


def record_fingerprint(key, value, headers=None, timestamp=None):
    """blake2b over key, value, the headers sorted by (name, value) and, when given, the timestamp.

    Header order is not guaranteed to be kept by every client, so it is not part of the identity.
    The fields are joined and hashed in one call: this runs once per record read.
    """
    parts = [_absent_or_sized(key), _absent_or_sized(value)]
    if headers:
        normalized = sorted(((_as_bytes(name), _as_bytes(data)) for name, data in headers), key=_header_order)
        parts.append(_LENGTH(len(normalized)))
        for name, data in normalized:
            parts.append(_absent_or_sized(name))
            parts.append(_absent_or_sized(data))
    else:
        parts.append(_NO_HEADERS)
    parts.append(b"\x00" if timestamp is None else b"\x01" + _TIMESTAMP(timestamp))
    return hashlib.blake2b(b"".join(parts), digest_size=DIGEST_SIZE).digest()
