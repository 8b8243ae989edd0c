# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failover preview from the records themselves (plugins/module_utils/_mirror/failover_preview.py)."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.failover_preview import fingerprint, preview

S = {i: fingerprint(b"k%d" % i, b"v%d" % i, [("n", b"%d" % i)]) for i in range(40)}
SOURCE = [(i, S[i]) for i in range(20)]
SAME = [(i, S[i]) for i in range(20)]  # a copy where target offsets equal source offsets


def run(g, t, target, source=SOURCE, end=None, source_end=20, scanned_to_end=True, **extra):
    end = (target[-1][0] + 1 if target else t) if end is None else end
    return preview(g, t, source, [item for item in target if item[0] >= t], end, source_end, scanned_to_end, **extra)


@pytest.mark.parametrize("t, status, re_read, skipped, exact", [(10, "exact", 0, 0, 10), (7, "re_read", 3, 0, 10), (12, "skip", 0, 2, None)])
def test_position_against_the_next_record(t, status, re_read, skipped, exact):
    got = run(10, t, SAME)
    assert (got.status, got.re_read, got.skipped, got.complete) == (status, re_read, skipped, True)
    assert (got.exact_offset, got.re_read_at_exact) == (exact, None if exact is None else 0)
    assert got.detail


def test_after_a_burst_the_exact_position_is_the_copy_of_the_next_record():
    """MirrorMaker's translation after a burst (few offset syncs) lands 7 records early: the records prove target offset 10
    holds the group's next record, and that every record before it is one the group consumed."""
    got = run(10, 3, SAME)
    assert (got.status, got.re_read, got.exact_offset, got.re_read_at_exact) == ("re_read", 7, 10, 0)
    assert got.detail.endswith("; from target offset 10 (source record 10) it reads 0 again")


def test_transaction_markers_take_offsets_but_are_not_records():
    """Exactly-once MirrorMaker (3.5+) commits a transaction after every 4 records here: source i is at target offset
    i + i // 4, offsets 4, 9, 14... are markers. Translated 9 (sync (7, 8) plus one) is a marker: the group reads
    source 8 and 9 again (target 10 and 11), 2 records, although 12 - 9 = 3 offsets lie before source 10."""
    target = [(i + i // 4, S[i]) for i in range(20)]
    got = run(10, 9, target)
    assert (got.status, got.re_read, got.skipped) == ("re_read", 2, 0)
    assert (got.exact_offset, got.re_read_at_exact) == (12, 0)  # source 10 at 10 + 10 // 4


def test_records_not_on_the_target_with_markers_are_missing():
    """Exactly-once MirrorMaker 3.5+: the target holds source 0..14 at offsets 0..17 plus markers, so its end offset (19)
    minus the last sync's downstream offset makes an offset-based lag read 0 while source 15..19 are not copied."""
    target = [(i + i // 4, S[i]) for i in range(15)]
    got = run(10, 12, target, end=19)
    assert (got.status, got.re_read, got.skipped, got.missing) == ("not_mirrored", 0, 0, 5)
    assert "offset 15 on" in got.detail


def test_re_copied_records_after_the_position_are_read_again():
    """A MirrorMaker crash re-copied source 5..19 after 0..14: from target 10 the group reads 10..14, then 5..19 again;
    5..9 are records it had consumed on the source (re-read), nothing is skipped."""
    target = [(i, S[i]) for i in range(15)] + [(15 + i, S[5 + i]) for i in range(15)]
    got = run(10, 10, target)
    assert (got.status, got.re_read, got.skipped, got.complete) == ("re_read", 5, 0, True)
    # The group's next records are copied twice: passing over their first copies (10..14, copied again at 20..24) to the
    # second copy of source 10 reads nothing again.
    assert (got.exact_offset, got.re_read_at_exact) == (20, 0)
    assert got.detail.endswith("from target offset 20 (source record 10) it reads 0 again")


def test_a_re_copy_before_the_next_record_is_passed_over():
    """A crash re-copied source 6..19 after 0..11 (target 12..25): from the translated position 12, the group would read
    source 6..9 again; the copy of source 10 at target 16 is exact, with nothing after it read again."""
    target = [(i, S[i]) for i in range(12)] + [(12 + i, S[6 + i]) for i in range(14)]
    got = run(10, 12, target)
    assert (got.status, got.re_read, got.exact_offset, got.re_read_at_exact) == ("re_read", 4, 16, 0)
    # From a position in the first copy: the first copy of source 10 would read 6..9 again from the re-copy; passing over
    # 10 and 11 (copied again at 16 and 17) to the second copy reads nothing again.
    earlier = run(10, 5, target)
    assert (earlier.re_read, earlier.exact_offset, earlier.re_read_at_exact) == (9, 16, 0)


def test_a_later_record_copied_once_is_never_passed_over():
    """Source 12 was copied only in the first copy (the re-copy after the crash started at 6 and stopped at 11, the rest
    not yet copied again): the second copy of source 10 would pass over the only copy of 12, so the first copy is the
    exact position, and the re-copy of 6..9 after it is read again."""
    target = [(i, S[i]) for i in range(13)] + [(13 + i, S[6 + i]) for i in range(6)]
    got = run(10, 5, target, source_end=13, source=[(i, S[i]) for i in range(13)])
    assert (got.exact_offset, got.re_read_at_exact) == (10, 4)


def test_a_fingerprint_shared_with_a_later_source_record_proves_nothing():
    """Source 8 and 12 are the same record (key, value, headers): target offset 8 could be the copy of either, so moving past
    it could skip source 12; MirrorMaker's position stays, with the records counted from it."""
    source = [(i, S[12] if i == 8 else S[i]) for i in range(20)]
    got = run(10, 7, list(source), source=source)
    assert (got.status, got.re_read, got.exact_offset, got.re_read_at_exact) == ("re_read", 3, None, None)
    assert "no later position is proven exact: the record at target offset 8 has the fingerprint" in got.detail


def test_a_head_expired_by_retention_on_the_source():
    """Retention removed source 0..4 and the group is at 3, before the source's beginning: the copy of source 5, the first
    record there is, is the exact position."""
    source = [(i, S[i]) for i in range(5, 20)]
    target = [(i - 5, S[i]) for i in range(5, 20)]  # MirrorMaker started after the retention: downstream from 0
    got = run(3, 0, target, source=source)
    assert (got.status, got.exact_offset, got.re_read_at_exact) == ("exact", 0, 0)


def test_figures_are_incomplete_when_the_scan_stops_or_a_later_sync_rewinds():
    got = run(10, 7, SAME, scanned_to_end=False)
    assert (got.re_read, got.complete) == (3, False) and "within the" in got.detail
    assert not run(10, 7, SAME, later_rewind=True).complete


def test_at_the_end_and_not_mirrored():
    source = [(i, S[i]) for i in range(10)]
    at_end = run(10, 10, [], source=source, end=10, source_end=10, previous_target=S[9])
    assert (at_end.status, at_end.re_read, at_end.skipped, at_end.exact_offset) == ("at_end", 0, 0, 10)
    lagging = run(10, 10, [], end=10, source_end=20, previous_target=S[9])
    assert lagging.status == "not_mirrored" and lagging.re_read is None


def test_unknown_records_are_unverified():
    foreign = [(i, fingerprint(b"x", b"%d" % i)) for i in range(20)]
    unverified = run(10, 5, foreign)
    assert unverified.status == "unverified" and unverified.exact_offset is None
    assert unverified.detail == "target record at offset 5 matches no source record read around offset 10"
    # every record read is before g: the window is too small to count them all
    short = run(19, 2, [(i, S[i]) for i in range(2, 10)], scanned_to_end=False)
    assert short.status == "unverified" and short.re_read == 8


def test_fingerprint_distinguishes_null_and_empty_and_headers():
    assert fingerprint(None, b"") != fingerprint(b"", b"")
    assert fingerprint(b"a", b"b") != fingerprint(b"ab", b"")
    assert fingerprint(b"a", b"b", [("h", b"1")]) != fingerprint(b"a", b"b")
