# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""connect-mirror-maker.properties read as java.util.Properties.load reads it (MirrorMaker.main uses Utils.loadProps).

Written from the java.util.Properties documentation, independently of the collection's properties writer,
which is what the stand-in checks: comment lines start with `#` or `!`, a line ending in an odd number of
backslashes continues on the next (whose leading blanks are dropped), the key ends at the first unescaped
`=`, `:` or blank, and `\\t \\n \\r \\f \\uXXXX` are escapes while any other escaped character is itself.
"""
from __future__ import annotations

BLANKS = " \t\f"
ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text):
    current = None
    for natural in text.splitlines():
        line = natural.lstrip(BLANKS)
        if current is None:
            if not line or line[0] in "#!":
                continue
            current = line
        else:
            current += line
        trailing = len(current) - len(current.rstrip("\\"))
        if trailing % 2:
            current = current[:-1]
            continue
        yield current
        current = None
    if current is not None:
        yield current


def _unescape(text):
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char != "\\" or index + 1 == len(text):
            out.append(char)
            index += 1
            continue
        escaped = text[index + 1]
        if escaped == "u":
            code = text[index + 2:index + 6]
            if len(code) != 4 or any(c not in "0123456789abcdefABCDEF" for c in code):
                raise ValueError("malformed \\uxxxx escape in %r" % text)
            out.append(chr(int(code, 16)))
            index += 6
            continue
        out.append(ESCAPES.get(escaped, escaped))
        index += 2
    return "".join(out)


def _split(line):
    index = 0
    while index < len(line) and line[index] not in "=:" + BLANKS:
        index += 2 if line[index] == "\\" else 1
    key, rest = line[:index], line[index:].lstrip(BLANKS)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(BLANKS)
    return _unescape(key), _unescape(rest)


def load(text):
    """{key: value} of a .properties text; a later line wins over an earlier one with the same key."""
    return dict(_split(line) for line in _logical_lines(text))
