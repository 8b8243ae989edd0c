# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-partition comparison on small in-memory mirrors, by the job's task code and residue rules.

Every case is also compared with a window of one and two records and with each side read to its end before
the other: records then wait longer than the window, leave as residue and their partitions are read again,
and the result must not change.
"""
import pytest

from mirror_validation.job import partition_work, syncs_in_range
from mirror_validation.mm2_checks import checkpoint_verdict

from tests.support.mirrors import SOURCE_FIRST, TARGET_FIRST, compare_mirror, count_rows, topic_pair

WAYS = [dict(), dict(window=1), dict(window=2), dict(shift=SOURCE_FIRST), dict(shift=TARGET_FIRST),
        dict(window=2, shift=SOURCE_FIRST), dict(window=3, shift=TARGET_FIRST)]
WAY_IDS = ["in step", "window 1", "window 2", "source first", "target first", "window 2 source first", "window 3 target first"]

CASES = [
    ("clean", "ABCD", "ABCD", (4, 4, 0, 0, 0, 0, 0), {}),
    ("loss", "ABCD", "ABD", (4, 3, 1, 0, 0, 0, 0), {"missing": [2]}),
    ("duplicate", "ABCD", "ABCCD", (4, 5, 0, 1, 0, 0, 0), {"duplicate": [3]}),
    ("at-least-once redelivery", "ABCD", "ABCDBCD", (4, 7, 0, 3, 0, 0, 0), {"duplicate": [4, 5, 6]}),
    ("reorder", "ABCD", "ABDC", (4, 4, 0, 0, 0, 1, 0), {"order_violation": [3]}),
    ("one record moved far", "ABCDEF", "FABCDE", (6, 6, 0, 0, 0, 1, 0), {"order_violation": [1]}),
    ("one record moved back", "ABCDEF", "BCDEFA", (6, 6, 0, 0, 0, 1, 0), {"order_violation": [5]}),
    ("two swaps", "ABCDEFGH", "BADCEFHG", (8, 8, 0, 0, 0, 3, 0), {"order_violation": [1, 3, 7]}),
    ("corrupted value", "ABCD", "ABXD", (4, 4, 1, 0, 1, 0, 0), {"missing": [2], "unexpected": [2]}),
    ("identical records on the source are not duplicates", "AAB", "AAB", (3, 3, 0, 0, 0, 0, 0), {}),
    ("losing one of two identical records", "AAB", "AB", (3, 2, 1, 0, 0, 0, 0), {"missing": [1]}),
    ("empty partition", "", "", (0, 0, 0, 0, 0, 0, 0), {}),
    # A redelivered run longer than the windows above: its copies wait past the window's edge.
    ("duplicate burst at the window's edge", "ABCDEFGHIJ", "ABCDEFGCDEFGHIJ", (10, 15, 0, 5, 0, 0, 0), {"duplicate": [7, 8, 9, 10, 11]}),
    ("a duplicate of a record matched long before", "ABCDEFGH", "ABCDEFGHA", (8, 9, 0, 1, 0, 0, 0), {"duplicate": [8]}),
    ("identical records, one copy lost, one duplicated", "AABAAB", "AABABB", (6, 6, 1, 1, 0, 0, 0), {"missing": [4], "duplicate": [5]}),
]


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_single_partition_classes(case, way):
    _name, source, target, counts, samples = case
    got_counts, got_samples, _misplaced, _anchors, _summaries, _stats = compare_mirror({0: source}, {0: target}, **way)
    assert count_rows(got_counts) == [(0,) + counts]
    assert got_samples.get((0, 0), {}) == samples


def test_a_healthy_mirror_read_in_step_leaves_no_residue_and_is_read_once():
    source = "".join(chr(65 + i % 26) + chr(97 + i // 26 % 26) for i in range(300))
    _counts, _samples, _misplaced, _anchors, summaries, stats = compare_mirror({0: source, 1: source}, {0: source, 1: source}, window=4)
    assert [summary["residue"] for summary in summaries.values()] == [0, 0] and stats["partitions_read_again"] == 0


def test_only_records_that_waited_too_long_make_a_partition_be_read_again():
    """Records copied further from their place than the window lets records wait are matched by the second read, held whole."""
    counts, samples, _misplaced, _anchors, _summaries, stats = compare_mirror({0: "ABCDEFGHIJ", 1: "ABCD"}, {0: "DEFGHIJABC", 1: "ABCD"},
                                                                              window=2)
    assert stats["partitions_read_again"] == 1
    assert count_rows(counts) == [(0, 10, 10, 0, 0, 0, 1, 0), (1, 4, 4, 0, 0, 0, 0, 0)]
    assert samples == {(0, 0): {"order_violation": [7]}}


def test_one_record_moved_far_is_matched_in_the_first_read():
    """Only records waiting count against the window, not the runs matched meanwhile."""
    counts, samples, _misplaced, _anchors, _summaries, stats = compare_mirror({0: "ABCDEFGHIJ"}, {0: "BCDEFGHIJA"}, window=2)
    assert stats["partitions_read_again"] == 0
    assert count_rows(counts) == [(0, 10, 10, 0, 0, 0, 1, 0)] and samples == {(0, 0): {"order_violation": [9]}}


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
def test_record_in_the_wrong_partition_is_missing_there_and_unexpected_here(way):
    counts, samples, misplaced, _anchors, _summaries, _stats = compare_mirror({0: "AB", 1: "CD"}, {0: "A", 1: "CDB"}, **way)
    assert count_rows(counts) == [(0, 2, 1, 1, 0, 0, 0, 0), (1, 2, 3, 0, 0, 1, 0, 0)]
    assert samples == {(0, 0): {"missing": [1]}, (0, 1): {"unexpected": [2]}}
    assert misplaced == {(0, 0): [{"source_offset": 1, "target_partition": 1, "target_offset": 2}]}


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
def test_records_deleted_by_source_retention_are_expired_not_unexpected(way):
    counts, samples, *_rest = compare_mirror({0: "CD"}, {0: "ABCD"}, source_begin={0: 2}, **way)
    assert count_rows(counts) == [(0, 2, 4, 0, 0, 0, 0, 2)]
    assert samples == {(0, 0): {"expired": [0, 1]}}


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
def test_records_deleted_by_target_retention_are_expired_not_missing(way):
    counts, samples, *_rest = compare_mirror({0: "ABCD"}, {0: "CD"}, target_begin={0: 2}, **way)
    assert count_rows(counts) == [(0, 4, 2, 0, 0, 0, 0, 2)]
    assert samples == {(0, 0): {"expired_on_target": [0, 1]}}


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
def test_retention_expired_heads_on_both_sides(way):
    """Both logs start above 0: partition 0's target kept one copy whose source record is gone (B), partition 1's
    source kept two records whose copies the target deleted (A, B); a loss after the first match is still a loss."""
    counts, samples, *_rest = compare_mirror({0: "CDEF", 1: "ABCDE"}, {0: "BCDF", 1: "CDE"}, source_begin={0: 2, 1: 3},
                                             target_begin={0: 1, 1: 5}, **way)
    assert count_rows(counts) == [(0, 4, 4, 1, 0, 0, 0, 1), (1, 5, 3, 0, 0, 0, 0, 2)]
    assert samples == {(0, 0): {"expired": [1], "missing": [4]}, (0, 1): {"expired_on_target": [3, 4]}}


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
def test_junk_before_the_first_match_is_unexpected_when_nothing_expired(way):
    counts, *_rest = compare_mirror({0: "CD"}, {0: "XCD"}, **way)
    assert count_rows(counts) == [(0, 2, 3, 0, 0, 1, 0, 0)]


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
def test_a_target_behind_the_snapshot_has_its_tail_pending_and_its_gaps_missing(way):
    """MM2 copies in order: a gap before a copied record is lost; after the last copied one it may be on its way."""
    counts, samples, *_rest = compare_mirror({0: "ABCDEF", 1: "ABCD", 2: "AB"}, {0: "ABD", 1: "AB", 2: ""}, target_behind={0, 2}, **way)
    assert count_rows(counts, ("source_count", "target_count", "missing", "pending")) == [(0, 6, 3, 1, 2), (1, 4, 2, 2, 0), (2, 2, 0, 0, 2)]
    assert samples == {(0, 0): {"missing": [2], "pending": [4, 5]}, (0, 1): {"missing": [2, 3]}, (0, 2): {"pending": [0, 1]}}


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
def test_anchor_must_point_at_the_same_record_on_both_sides(way):
    _counts, _samples, _misplaced, anchors, *_rest = compare_mirror(
        {0: "ABCD"}, {0: "ABCD"}, syncs={0: [(0, 0), (2, 2), (3, 2), (10, 10), (2, 2)]}, **way)
    assert anchors == {(0, 0): {"anchors_checked": 3, "anchor_mismatches": 1, "mismatch_samples": [{"upstream": 3, "downstream": 2}]}}


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
def test_a_partition_with_no_offset_syncs_is_read_in_step_from_its_ends(way):
    """Partition 1 has no sync: reading starts with the ends aligned, and its copy lost a record and repeated two."""
    counts, samples, _misplaced, anchors, *_rest = compare_mirror({0: "ABCD", 1: "ABCDEFGH"}, {0: "ABCD", 1: "ABDEFGEFH"},
                                                                  syncs={0: [(0, 0)]}, **way)
    assert count_rows(counts) == [(0, 4, 4, 0, 0, 0, 0, 0), (1, 8, 9, 1, 2, 0, 0, 0)]
    assert samples == {(0, 1): {"missing": [2], "duplicate": [6, 7]}}
    assert list(anchors) == [(0, 0)]


def test_syncs_out_of_either_range_are_not_checkable():
    bounds = {(0, 0): (2, 10, 0, 5, False)}
    assert syncs_in_range([(0, 0, 2, 0), (0, 0, 1, 0), (0, 0, 3, 5), (0, 0, 2, 0), (0, 1, 2, 0), (0, 0, 9, 4)], bounds) == {
        (0, 0): [(2, 0), (9, 4)]}


def test_reading_starts_at_the_first_sync_else_with_the_ends_aligned():
    pair = topic_pair({0: "ABCD"}, {0: "ABCDEF"}, target_begin={0: 10})
    assert partition_work(pair, 0, [(1, 12), (3, 14)], ()).shift == 11
    assert partition_work(pair, 0, [], ()).shift == 16 - 4


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
def test_checkpoints_must_not_skip_records_or_pass_the_end(way):
    # target = source shifted by one: source offset u is target offset u + 1
    upstreams = [2, 4]
    *_tables, summaries, _stats = compare_mirror({0: "ABCD"}, {0: "ZABCD"}, checkpoints={0: upstreams}, **way)
    first_copies = summaries[(0, 0)]["first_copies_after"]
    assert first_copies == {2: 3, 4: None}
    verdicts = [(downstream,) + checkpoint_verdict(downstream, first_copies[upstream], 5)
                for upstream, downstream in [(2, 3), (2, 1), (2, 4), (4, 6), (4, 5)]]
    assert verdicts == [(3, 3, None), (1, 3, None), (4, 3, "skips records on the target"), (6, 5, "beyond the target end offset"),
                        (5, 5, None)]
