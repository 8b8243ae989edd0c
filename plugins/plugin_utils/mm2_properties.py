# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Java .properties rendering (sorted, deterministic) and parsing, as Kafka's tools read them."""
from __future__ import annotations

HEADER = "# Managed by Ansible (kafkaops.mirror.mirrormaker2). Derived from the role's model; local edits are overwritten.\n"

_KEY_ESCAPES = {"\\": "\\\\", "=": "\\=", ":": "\\:", " ": "\\ ", "#": "\\#", "!": "\\!"}
_VALUE_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {"n": "\n", "r": "\r", "t": "\t", "f": "\f"}


def format_value(value):
    """Kafka reads booleans as lower-case true/false and lists as comma-separated strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(format_value(item) for item in value)
    return str(value)


def _escape(text, table):
    escaped = "".join(table.get(char, char) for char in text)
    return escaped


def render(properties, header=HEADER):
    """One `key=value` line per property, sorted by key, so the same model always gives the same bytes."""
    lines = [header] if header else []
    for key in sorted(properties):
        value = _escape(format_value(properties[key]), _VALUE_ESCAPES)
        if value.startswith(" "):
            value = "\\" + value
        lines.append("%s=%s\n" % (_escape(key, _KEY_ESCAPES), value))
    return "".join(lines)


def _logical_lines(text):
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if not pending else raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def _unescape(text):
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            index += 1
            out.append(_UNESCAPES.get(text[index], text[index]))
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _split_key(line):
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if char in "=: \t":
            rest = line[index:].lstrip(" \t")
            if rest[:1] in ("=", ":") and char in " \t":
                rest = rest[1:]
            elif char in "=:":
                rest = rest[1:]
            return line[:index], rest.lstrip(" \t")
        index += 1
    return line, ""


def parse(text):
    """Parse .properties text into a dict (later keys win, like java.util.Properties)."""
    result = {}
    for line in _logical_lines(text):
        key, value = _split_key(line)
        result[_unescape(key)] = _unescape(value)
    return result
