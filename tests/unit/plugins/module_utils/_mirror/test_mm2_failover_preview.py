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


@pytest.mark.parametrize("t, status, re_read, skipped", [(10, "exact", 0, 0), (7, "re_read", 3, 0), (12, "skip", 0, 2)])
def test_position_against_the_next_record(t, status, re_read, skipped):
    got = run(10, t, SAME)
    assert (got.status, got.re_read, got.skipped, got.complete) == (status, re_read, skipped, True)
    assert got.detail


def test_transaction_markers_take_offsets_but_are_not_records():
    """Exactly-once MirrorMaker (3.5+) commits a transaction after every 4 records here: source i is at target offset
    i + i // 4, offsets 4, 9, 14... are markers. Translated 9 (sync (7, 8) plus one) is a marker: the group reads
    source 8 and 9 again (target 10 and 11), 2 records, although 12 - 9 = 3 offsets lie before source 10."""
    target = [(i + i // 4, S[i]) for i in range(20)]
    got = run(10, 9, target)
    assert (got.status, got.re_read, got.skipped) == ("re_read", 2, 0)


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


def test_figures_are_incomplete_when_the_scan_stops_or_a_later_sync_rewinds():
    got = run(10, 7, SAME, scanned_to_end=False)
    assert (got.re_read, got.complete) == (3, False) and "within the" in got.detail
    assert not run(10, 7, SAME, later_rewind=True).complete


def test_at_the_end_and_not_mirrored():
    source = [(i, S[i]) for i in range(10)]
    at_end = run(10, 10, [], source=source, end=10, source_end=10, previous_target=S[9])
    assert (at_end.status, at_end.re_read, at_end.skipped) == ("at_end", 0, 0)
    lagging = run(10, 10, [], end=10, source_end=20, previous_target=S[9])
    assert lagging.status == "not_mirrored" and lagging.re_read is None


def test_unknown_records_are_unverified():
    foreign = [(i, fingerprint(b"x", b"%d" % i)) for i in range(20)]
    unverified = run(10, 5, foreign)
    assert unverified.status == "unverified" and "raise verify_window (failover_verify_window) towards 5" in unverified.detail
    # every record read is before g: the window is too small to count them all
    short = run(19, 2, [(i, S[i]) for i in range(2, 10)], scanned_to_end=False)
    assert short.status == "unverified" and short.re_read == 8


def test_fingerprint_distinguishes_null_and_empty_and_headers():
    assert fingerprint(None, b"") != fingerprint(b"", b"")
    assert fingerprint(b"a", b"b") != fingerprint(b"ab", b"")
    assert fingerprint(b"a", b"b", [("h", b"1")]) != fingerprint(b"a", b"b")
