# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A managed block inside a text value (like blockinfile, for Ambari text properties such as kafka-env's content).

Pure functions: the block sits between a BEGIN and an END marker line, is replaced in place when it
exists, appended at the end otherwise, and removed (markers included) with state absent.
"""
from __future__ import annotations

DEFAULT_MARKER = "# {mark} ANSIBLE MANAGED BLOCK kafkaops.mirror"


class BlockError(ValueError):
    pass


def marker_lines(marker):
    if "{mark}" not in marker:
        raise BlockError(f"block marker {marker!r} must contain {{mark}} (replaced by BEGIN and END)")
    return marker.replace("{mark}", "BEGIN"), marker.replace("{mark}", "END")


def find_block(lines, begin, end):
    """(start, stop) line indexes of the block, markers included, or None; errors on broken or repeated blocks."""
    begins = [i for i, line in enumerate(lines) if line.rstrip("\r") == begin]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\r") == end]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise BlockError(
            f"found {len(begins)} {begin!r} and {len(ends)} {end!r} lines in the wrong order or number; "
            "fix the text by hand so that it holds at most one complete block"
        )
    return begins[0], ends[0]


def edit_block(text, content, marker=DEFAULT_MARKER, state="present"):
    """(new_text, old_block_lines, new_block_lines) for putting `content` between the markers (or removing it)."""
    begin, end = marker_lines(marker)
    lines = text.split("\n")
    span = find_block(lines, begin, end)
    old_block = lines[span[0]:span[1] + 1] if span else []
    if state == "absent":
        if span is None:
            return text, [], []
        return "\n".join(lines[:span[0]] + lines[span[1] + 1:]), old_block, []
    new_block = [begin] + content.rstrip("\n").split("\n") + [end] if content.strip() else [begin, end]
    if span is not None:
        return "\n".join(lines[:span[0]] + new_block + lines[span[1] + 1:]), old_block, new_block
    if text and not text.endswith("\n"):
        text += "\n"
    return text + "\n".join(new_block) + "\n", old_block, new_block
