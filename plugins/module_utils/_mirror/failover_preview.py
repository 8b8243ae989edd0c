# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failover preview (pure, no I/O): from the records themselves, how many records a group resumed at a target offset
reads again, and how many it skips.

MirrorMaker copies key, value and headers unchanged, so a record's fingerprint names its source record; offsets and
timestamps may differ. The target records from the resume position on are aligned to the source records around the
group's source offset g, in order (a re-copy after a MirrorMaker crash starts again at an earlier source offset):
- read again: target records from the position on whose source record is before g (duplicates of a re-copy included);
- skipped: source records at or after g, up to the furthest one the target records reach, that none of them holds;
- missing: when the target was read to its end, source records after the last one it holds (not mirrored yet).
Records are counted, never offsets: transaction markers (exactly-once MirrorMaker 3.5+, transactional producers on the
source) and compacted gaps take offsets but are no records, so a lag that offsets show as 0 still shows here.

The exact position: a target copy of a source record at or after g, from which the group skips nothing that the resume
position would have delivered. It is proven when every target record before it (from the resume position on) is the copy
of a source record before g and of none at or after g (a fingerprint shared with a record at or after g proves nothing),
or the copy of one later source record that MirrorMaker copied again after it (a re-copy). Of the positions proven, the
one from which the fewest records are read again is taken (_exact_position).
"""
from __future__ import annotations

import hashlib
from collections import namedtuple

# exact_offset: the proven exact position (see above), else None; re_read_at_exact: records read again from it.
Preview = namedtuple("Preview", "status re_read skipped missing complete detail exact_offset re_read_at_exact", defaults=(None, None))

EXACT = "exact"
RE_READ = "re_read"
SKIP = "skip"
AT_END = "at_end"
NOT_MIRRORED = "not_mirrored"
UNVERIFIED = "unverified"
# Statuses whose figures are known.
COUNTED = (EXACT, RE_READ, SKIP, AT_END)


def fingerprint(key, value, headers=None):
    """A digest of what MirrorMaker copies unchanged: key, value and headers."""
    digest = hashlib.sha256()
    for part in (key, value):
        digest.update(b"\x00" if part is None else b"\x01" + len(part).to_bytes(4, "big") + bytes(part))
    for name, data in headers or []:
        digest.update(name.encode("utf-8") + b"\x00" + (data or b""))
    return digest.hexdigest()[:32]


def _align(target_records, by_fingerprint, start):
    """[(target offset, source offset or None)] in target order; each record takes the source offset with its
    fingerprint nearest after the previous one (MirrorMaker copies in order), else the nearest at all (a re-copy)."""
    aligned = []
    expected = start
    for offset, digest in target_records:
        candidates = by_fingerprint.get(digest, [])
        if not candidates:
            aligned.append((offset, None))
            continue
        onward = [source for source in candidates if source >= expected]
        source = onward[0] if onward else min(candidates, key=lambda candidate: (abs(candidate - expected), candidate))
        aligned.append((offset, source))
        expected = source + 1
    return aligned


def preview(source_offset, target_offset, source_records, target_records, target_end, source_end, scanned_to_end,
            later_rewind=False, previous_target=None):
    """Preview of a group at source offset g resumed at `target_offset` on the target.

    source_records: [(offset, fingerprint)] of the source partition around g (sorted), records only.
    target_records: [(offset, fingerprint)] of the target partition from `target_offset` on (sorted), records only.
    scanned_to_end: target_records run to the end of the partition (else they stop after the window).
    previous_target: fingerprint of the last target record before `target_offset` (None when none was read).
    later_rewind: an offset sync after the scanned records rewinds below g (a re-copy there: more records are re-read).
    """
    g = source_offset
    by_fingerprint = {}
    for offset, digest in source_records:
        by_fingerprint.setdefault(digest, []).append(offset)
    source_after = [offset for offset, _digest in source_records if offset >= g]
    if not target_records:
        if source_after and source_end > g:
            return Preview(NOT_MIRRORED, None, None, len(source_after), False,
                           f"the target ends at {target_end} but the source has {len(source_after)} record(s) from offset {g} on: "
                           f"the mirror has not copied them")
        if previous_target is not None and previous_target not in by_fingerprint:
            return Preview(UNVERIFIED, None, None, None, False,
                           f"the target record before offset {target_offset} matches no source record near offset {g}")
        return Preview(AT_END, 0, 0, 0, True,
                       f"target offset {target_offset} is the end of the partition, as the group is at the end on the source: "
                       f"nothing is read again or skipped", target_offset, 0)
    aligned = _align(target_records, by_fingerprint, g)
    first_new = next((index for index, (_offset, source) in enumerate(aligned) if source is not None and source >= g), None)
    unknown = [offset for offset, source in aligned[:first_new] if source is None]
    if unknown:
        return Preview(UNVERIFIED, None, None, None, False,
                       f"target record at offset {unknown[0]} matches no source record read around offset {g}")
    re_read = sum(1 for _offset, source in aligned if source is not None and source < g)
    if first_new is None:
        return Preview(UNVERIFIED, re_read, None, None, False,
                       f"the {len(aligned)} target records from offset {target_offset} on are all before source offset {g} "
                       f"(at least {re_read} read again)")
    furthest = max(source for _offset, source in aligned if source is not None)
    held = {source for _offset, source in aligned if source is not None}
    skipped = sorted(offset for offset in source_after if offset < furthest and offset not in held)
    complete = scanned_to_end and not later_rewind
    new_offset = aligned[first_new][0]
    missing = [offset for offset in source_after if offset > furthest] if scanned_to_end else []
    if skipped:
        return Preview(SKIP, re_read, len(skipped), len(missing), complete,
                       f"from target offset {target_offset} the group would skip {len(skipped)} record(s) from source offset "
                       f"{skipped[0]} on (the first new record it reads is source offset {aligned[first_new][1]} at target offset {new_offset})")
    if missing:
        return Preview(NOT_MIRRORED, re_read, 0, len(missing), complete,
                       f"the target ends after source record {furthest}, the source has {len(missing)} more record(s) from "
                       f"offset {missing[0]} on: the mirror has not copied them")
    scope = "" if complete else f" within the {len(aligned)} target records read (more after them if MirrorMaker re-copied there)"
    if re_read == 0:
        return Preview(EXACT, 0, 0, 0, complete, f"target offset {target_offset} resumes at source record {g}: nothing read again{scope}",
                       target_offset, 0)
    detail = (f"from target offset {target_offset} the group reads {re_read} record(s) again that it consumed on the source "
              f"(its next record, source offset {aligned[first_new][1]}, is at target offset {new_offset}){scope}")
    best, again, blocker = _exact_position(target_records, aligned, by_fingerprint, g)
    if best is None:
        return Preview(RE_READ, re_read, 0, 0, complete,
                       detail + f"; no later position is proven exact: the record at target offset {blocker} has the fingerprint of "
                                f"a source record at or after {g} as well")
    exact_offset = target_records[best][0]
    return Preview(RE_READ, re_read, 0, 0, complete, detail + f"; from target offset {exact_offset} (source record {aligned[best][1]}) "
                                                              f"it reads {again} again", exact_offset, again)


def _re_read_from(aligned, g):
    """[records before g from index i on, for each i] (the last entry, past the end, 0)."""
    counts = [0] * (len(aligned) + 1)
    for index in range(len(aligned) - 1, -1, -1):
        source = aligned[index][1]
        counts[index] = counts[index + 1] + (1 if source is not None and source < g else 0)
    return counts


def _exact_position(target_records, aligned, by_fingerprint, g):
    """(index of the exact position in target_records or None, the records read again from it, the target offset of the
    record the proof stopped at or None).

    A target record can be passed over when it is the copy of a record the group consumed (every source record with its
    fingerprint is before g), or of one later source record that is copied again further on (a re-copy). The exact position
    is, among the copies of source records at or after g reachable that way, the one from which the fewest records are read
    again, the earliest on a tie."""
    last_copy = {}
    for index, (_offset, source) in enumerate(aligned):
        if source is not None and source >= g:
            last_copy[source] = index
    again = _re_read_from(aligned, g)
    best, reach, blocker = None, len(aligned), None
    for index, ((offset, digest), (_offset, source)) in enumerate(zip(target_records, aligned)):
        if index > reach:
            blocker = offset
            break
        if source is not None and source >= g and (best is None or again[index] < again[best]):
            best = index
        candidates = by_fingerprint.get(digest, [])
        if source is None or (max(candidates) >= g and len(candidates) > 1):
            blocker = offset  # an unknown record, or one that may be the copy of a record at or after g
            break
        if source >= g:
            reach = min(reach, last_copy[source])  # passed over only up to its last copy
    return best, None if best is None else again[best], blocker
