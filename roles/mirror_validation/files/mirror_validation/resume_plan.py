# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where an incremental run starts in each partition pair: at the offsets the state says a passed run validated, or at
the log starts (in full) when there are none or they no longer describe these logs.

A stored pair (S, T) says: target offsets below T hold a complete copy of source offsets below S. The next run compares
source [S, end) with target [T, end), with three rules that keep MirrorMaker 2's behaviour from looking like defects:

- at-least-once: a MirrorMaker that restarts before committing its source offsets copies records below S again, after T
  (after copies of records from S on too, when it copied them before the restart). Such target records, wherever they lie
  in the range, are duplicates when a source record just below S has their fingerprint (residue.py, with the
  fingerprints comparison.py reads back), else unexpected;
- retention: a log start above the stored offset starts the range there; the report says which offsets were deleted
  before this job saw them, and records missing their counterpart at the range's start are then expired, as in full runs;
- a log that is not the one validated (its end below the stored offset, or the last record validated below the stored
  offset no longer there or different: a topic deleted and recreated, compacted past it) makes the state stale: that
  partition is validated in full and the report says why.
"""
from __future__ import annotations

from collections import namedtuple

# source_start, target_start: where the comparison starts. resumed_source / resumed_target: it starts at the stored offset
# on that side (no retention gap), so the range's start is a proven boundary. how: "resumed" or "full". reason: why full,
# notes: what the report adds (retention gaps). stored: the state entry, or None.
PartitionPlan = namedtuple("PartitionPlan", "source_start target_start resumed_source resumed_target how reason notes stored")

NO_STATE = "no validated offsets in the state (first incremental run, new topic or new partition)"


def full(source_range, target_range, reason, stored=None):
    """The plan that compares the whole of both logs."""
    return PartitionPlan(source_range[0], target_range[0], False, False, "full", reason, (), stored)


def last_records_to_check(stored):
    """[(side, offset)] of the last records the state says were validated, to read back before plan() judges them."""
    return [(side, stored[side + "_last"][0]) for side in ("source", "target") if stored[side + "_last"] is not None]


def plan(stored, source_range, target_range, last_records_now):
    """The PartitionPlan of one partition pair. `stored`: its state entry or None; `*_range`: (log start, end) now;
    `last_records_now`: {(side, offset): fingerprint in hex of the record there now, None when none is there} for the
    offsets of last_records_to_check(stored)."""
    if stored is None:
        return full(source_range, target_range, NO_STATE)
    for side, (start, end) in (("source", source_range), ("target", target_range)):
        validated = stored[side + "_offset"]
        if end < validated:
            return full(source_range, target_range,
                        "stale state: the %s partition ends at offset %d, below the %d validated before (the topic was deleted and"
                        " recreated, or truncated)" % (side, end, validated), stored)
        last = stored[side + "_last"]
        if last is not None and last[0] >= start:
            now = last_records_now.get((side, last[0]))
            if now != last[1]:
                return full(source_range, target_range,
                            "stale state: the %s record at offset %d is %s (the topic was deleted and recreated, or compacted)"
                            % (side, last[0], "gone" if now is None else "not the one validated"), stored)
    source_start, target_start = max(stored["source_offset"], source_range[0]), max(stored["target_offset"], target_range[0])
    notes = []
    for side, validated, start in (("source", stored["source_offset"], source_start), ("target", stored["target_offset"], target_start)):
        if start > validated:
            notes.append("%s offsets %d to %d were deleted by retention before they were validated" % (side, validated, start - 1))
    return PartitionPlan(source_start, target_start, source_start == stored["source_offset"], target_start == stored["target_offset"],
                         "resumed", None, tuple(notes), stored)
