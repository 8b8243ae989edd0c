"""Checks against MirrorMaker 2's own bookkeeping: offset-sync anchors and consumer-group checkpoints."""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from .compare import KEYS


def _in_range(column, begin, end):
    return (F.col(column) >= F.col(begin)) & (F.col(column) < F.col(end))


def anchor_results(classified, syncs, bounds):
    """Every offset sync (upstream u -> downstream d) whose offsets are both still readable, with `mismatch`.

    A sync claims that source record u was written as target record d: their fingerprints must be equal.
    `classified` (compare.classify) holds every read offset of either side once, with its fingerprint.
    """
    source = (classified.filter(F.col("source_offset").isNotNull())
              .select(*KEYS, F.col("source_offset").alias("upstream"), F.col("fp").alias("source_fp")))
    target = (classified.filter(F.col("target_offset").isNotNull())
              .select(*KEYS, F.col("target_offset").alias("downstream"), F.col("fp").alias("target_fp")))
    checkable = (
        syncs.select(*KEYS, "upstream", "downstream").distinct()
        .join(F.broadcast(bounds), KEYS)
        .filter(_in_range("upstream", "source_begin", "source_end") & _in_range("downstream", "target_begin", "target_end"))
        .select(*KEYS, "upstream", "downstream")
    )
    mismatch = F.col("source_fp").isNull() | F.col("target_fp").isNull() | (F.col("source_fp") != F.col("target_fp"))
    return (
        checkable.join(source, KEYS + ["upstream"], "left")
        .join(target, KEYS + ["downstream"], "left")
        .withColumn("mismatch", mismatch)
        .select(*KEYS, "upstream", "downstream", "mismatch")
    )


def anchor_counts(anchors, limit):
    """Per (pair, partition): anchors_checked, anchor_mismatches and the first mismatching syncs."""
    first = Window.partitionBy(*KEYS).orderBy("upstream")
    mismatches = (
        anchors.filter("mismatch")
        .withColumn("rank", F.row_number().over(first))
        .filter(F.col("rank") <= limit)
        .groupBy(*KEYS)
        .agg(F.sort_array(F.collect_list(F.struct("upstream", "downstream"))).alias("mismatch_samples"))
    )
    counts = anchors.groupBy(*KEYS).agg(
        F.count("*").alias("anchors_checked"), F.sum(F.col("mismatch").cast("long")).alias("anchor_mismatches")
    )
    return counts.join(mismatches, KEYS, "left")


def latest_checkpoints(checkpoints):
    """The newest checkpoint per (group, pair, partition): the topic is compacted on that key."""
    newest_first = Window.partitionBy("group", *KEYS).orderBy(F.col("record_offset").desc())
    return checkpoints.withColumn("rank", F.row_number().over(newest_first)).filter(F.col("rank") == 1).drop("rank", "record_offset")


def checkpoint_results(classified, checkpoints, bounds):
    """Every latest checkpoint with `limit` (highest safe downstream offset) and `violation` (null when fine).

    A group resuming on the target at the checkpoint's downstream offset must not skip the copy of any
    source record at or after its upstream offset, and cannot start beyond the target's end.
    """
    latest = latest_checkpoints(checkpoints)
    matched = classified.filter(F.col("kind") == "matched").select(*KEYS, "source_offset", "target_offset")
    first_copy_after = (
        latest.alias("c")
        .join(matched.alias("m"), [F.col("c.pair") == F.col("m.pair"), F.col("c.partition") == F.col("m.partition"),
                                   F.col("m.source_offset") >= F.col("c.upstream")])
        .groupBy("c.group", "c.pair", "c.partition")
        .agg(F.min("m.target_offset").alias("first_copy_after"))
    )
    violation = (
        F.when(F.col("downstream") > F.col("target_end"), F.lit("beyond the target end offset"))
        .when(F.col("downstream") > F.col("first_copy_after"), F.lit("skips records on the target"))
    )
    return (
        latest.join(first_copy_after, ["group"] + KEYS, "left")
        .join(F.broadcast(bounds.select(*KEYS, "target_end")), KEYS)
        .withColumn("limit", F.least(F.coalesce(F.col("first_copy_after"), F.col("target_end")), F.col("target_end")))
        .withColumn("violation", violation)
        .select("group", *KEYS, "upstream", "downstream", "limit", "violation")
    )
