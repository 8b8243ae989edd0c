"""The per-partition comparison on small in-memory mirrors (Spark local[2])."""
import pytest

from mirror_validation import compare
from frames import records_and_bounds, rows_of

pytestmark = pytest.mark.spark
COUNTS = ["partition", "source_count", "target_count", "missing", "duplicates", "unexpected", "order_violations", "expired"]


def run(spark, source, target, **begins):
    records, bounds = records_and_bounds(spark, source, target, **begins)
    return _results(records, bounds)


def _results(records, bounds):
    classified = compare.match_copies(records).transform(lambda matched: compare.classify(matched, bounds)).cache()
    violations = compare.order_violations(classified)
    counts = rows_of(compare.partition_counts(classified, violations, bounds), ["pair"] + COUNTS)
    samples = {tuple(row[:3]): row[3] for row in
               rows_of(compare.defect_samples(classified, violations, 10), ["pair", "partition", "kind", "offsets"])}
    return [row[1:] for row in counts], samples, classified


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
]


@pytest.fixture(scope="module", params=[None, 2, 3], ids=["one block", "blocks of 2", "blocks of 3"])
def single_partition_results(spark, request):
    """Every case of CASES as its own topic pair, compared in one Spark run (a JVM round trip per case is slow);
    also with order blocks so small that every reorder case crosses a block edge."""
    frames = [records_and_bounds(spark, {0: source}, {0: target}, pair=index) for index, (_name, source, target, _counts, _samples) in enumerate(CASES)]
    records, bounds = frames[0]
    for more_records, more_bounds in frames[1:]:
        records, bounds = records.unionByName(more_records), bounds.unionByName(more_bounds)
    block = request.param or compare.ORDER_BLOCK_OFFSETS
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compare, "ORDER_BLOCK_OFFSETS", block)
        counts, samples, _rest = _results(records, bounds)
    return counts, samples


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case[0] for case in CASES])
def test_single_partition_classes(single_partition_results, index):
    _name, _source, _target, counts, samples = CASES[index]
    got_counts, got_samples = single_partition_results
    assert got_counts[index] == (0,) + counts
    assert {kind: offsets for (pair, _partition, kind), offsets in got_samples.items() if pair == index} == samples


def test_record_in_the_wrong_partition_is_missing_there_and_unexpected_here(spark):
    counts, samples, classified = run(spark, {0: "AB", 1: "CD"}, {0: "A", 1: "CDB"})
    assert counts == [(0, 2, 1, 1, 0, 0, 0, 0), (1, 2, 3, 0, 0, 1, 0, 0)]
    assert samples == {(0, 0, "missing"): [1], (0, 1, "unexpected"): [2]}
    assert rows_of(compare.misplaced_samples(classified, 10)) == [(0, 0, 1, 1, 2)]


def test_records_deleted_by_source_retention_are_expired_not_unexpected(spark):
    counts, samples, _rest = run(spark, {0: "CD"}, {0: "ABCD"}, source_begin={0: 2})
    assert counts == [(0, 2, 4, 0, 0, 0, 0, 2)]
    assert samples == {(0, 0, "expired"): [0, 1]}


def test_records_deleted_by_target_retention_are_expired_not_missing(spark):
    counts, samples, _rest = run(spark, {0: "ABCD"}, {0: "CD"}, target_begin={0: 2})
    assert counts == [(0, 4, 2, 0, 0, 0, 0, 2)]
    assert samples == {(0, 0, "expired_on_target"): [0, 1]}


def test_junk_before_the_first_match_is_unexpected_when_nothing_expired(spark):
    counts, _samples, _rest = run(spark, {0: "CD"}, {0: "XCD"})
    assert counts == [(0, 2, 3, 0, 0, 1, 0, 0)]


def test_a_target_behind_the_snapshot_has_its_tail_pending_and_its_gaps_missing(spark):
    """MM2 copies in order: a gap before a copied record is lost; after the last copied one it may be on its way."""
    records, bounds = records_and_bounds(spark, {0: "ABCDEF", 1: "ABCD", 2: "AB"}, {0: "ABD", 1: "AB", 2: ""},
                                         target_behind={0, 2})
    classified = compare.classify(compare.match_copies(records), bounds).cache()
    counts = compare.partition_counts(classified, compare.order_violations(classified), bounds)
    assert rows_of(counts, ["partition", "source_count", "target_count", "missing", "pending"]) == [
        (0, 6, 3, 1, 2), (1, 4, 2, 2, 0), (2, 2, 0, 0, 2)]
    samples = rows_of(compare.defect_samples(classified, compare.order_violations(classified), 10), ["partition", "kind", "offsets"])
    assert samples == [(0, "missing", [2]), (0, "pending", [4, 5]), (1, "missing", [2, 3]), (2, "pending", [0, 1])]
