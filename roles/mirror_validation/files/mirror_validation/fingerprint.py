"""Record fingerprints: what must survive mirroring unchanged."""
from __future__ import annotations

import hashlib
import struct

DIGEST_SIZE = 16


def _absent_or_sized(digest, data):
    # Length-prefix every field so that (key=b"ab", value=b"c") and (key=b"a", value=b"bc") differ,
    # and a null key differs from an empty one.
    if data is None:
        digest.update(b"\x00")
    else:
        digest.update(b"\x01" + struct.pack(">I", len(data)))
        digest.update(data)


def _as_bytes(text_or_bytes):
    if text_or_bytes is None or isinstance(text_or_bytes, bytes):
        return text_or_bytes
    return str(text_or_bytes).encode("utf-8")


def record_fingerprint(key, value, headers=None, timestamp=None):
    """blake2b over key, value, the headers sorted by (name, value) and, when given, the timestamp.

    Header order is not guaranteed to be kept by every client, so it is not part of the identity.
    """
    digest = hashlib.blake2b(digest_size=DIGEST_SIZE)
    _absent_or_sized(digest, key)
    _absent_or_sized(digest, value)
    normalized = sorted(
        ((_as_bytes(name), _as_bytes(data)) for name, data in (headers or ())),
        key=lambda pair: (pair[0], pair[1] is not None, pair[1] or b""),
    )
    digest.update(struct.pack(">I", len(normalized)))
    for name, data in normalized:
        _absent_or_sized(digest, name)
        _absent_or_sized(digest, data)
    if timestamp is None:
        digest.update(b"\x00")
    else:
        digest.update(b"\x01" + struct.pack(">q", timestamp))
    return digest.digest()
