"""Offset-sync anchors and checkpoint checks on small in-memory mirrors (Spark local[2])."""
import pytest

from mirror_validation import compare, mm2_checks
from mirror_validation.spark_io import CHECKPOINT_SCHEMA, OFFSET_SYNC_SCHEMA
from frames import records_and_bounds, rows_of

pytestmark = pytest.mark.spark


def test_anchor_must_point_at_the_same_record_on_both_sides(spark):
    records, bounds = records_and_bounds(spark, {0: "ABCD"}, {0: "ABCD"})
    syncs = spark.createDataFrame([(0, 0, 0, 0), (0, 0, 2, 2), (0, 0, 3, 2), (0, 0, 10, 10), (0, 0, 2, 2)], OFFSET_SYNC_SCHEMA)
    classified = compare.classify(compare.match_copies(records), bounds)
    anchors = mm2_checks.anchor_results(classified, syncs, bounds)
    assert rows_of(anchors, ["upstream", "downstream", "mismatch"]) == [(0, 0, False), (2, 2, False), (3, 2, True)]
    counts = mm2_checks.anchor_counts(anchors, 10).collect()
    assert [(r["anchors_checked"], r["anchor_mismatches"], [tuple(s) for s in r["mismatch_samples"]]) for r in counts] == [(3, 1, [(3, 2)])]


def test_checkpoints_must_not_skip_records_or_pass_the_end(spark):
    # target = source shifted by one: source offset u is target offset u + 1
    records, bounds = records_and_bounds(spark, {0: "ABCD"}, {0: "ZABCD"}, target_begin={0: 0})
    classified = compare.match_copies(records).transform(lambda matched: compare.classify(matched, bounds))
    checkpoints = spark.createDataFrame([
        ("ok", 0, 0, 2, 3, 7),
        ("rereads", 0, 0, 2, 1, 7),
        ("skips", 0, 0, 2, 4, 7),
        ("beyond", 0, 0, 4, 6, 7),
        ("at-end", 0, 0, 4, 5, 7),
        ("superseded", 0, 0, 2, 4, 1),  # an older checkpoint of the same key that skipped ...
        ("superseded", 0, 0, 2, 3, 9),  # ... replaced by a correct one
    ], CHECKPOINT_SCHEMA)
    results = rows_of(mm2_checks.checkpoint_results(classified, checkpoints, bounds), ["group", "downstream", "limit", "violation"])
    assert results == [
        ("at-end", 5, 5, None),
        ("beyond", 6, 5, "beyond the target end offset"),
        ("ok", 3, 3, None),
        ("rereads", 1, 3, None),
        ("skips", 4, 3, "skips records on the target"),
        ("superseded", 3, 3, None),
    ]
