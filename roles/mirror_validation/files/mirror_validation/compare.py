"""Per topic-partition comparison of source and target fingerprints, as DataFrame -> DataFrame steps.

MM2 keeps partition numbers and the order within a partition, so every check is per (pair, partition).
Identical records may legitimately occur several times on the source; the k-th copy of a fingerprint
on the source is matched with the k-th copy on the target (both in offset order), so only copies
beyond the source's count are duplicates.

Input columns: side, pair, partition, offset, fp (see spark_io.RECORD_SCHEMA);
bounds columns: pair, partition, source_begin, source_end, target_begin, target_end, target_behind.
"""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from .slices import SOURCE, TARGET

KINDS = ("matched", "missing", "pending", "duplicate", "unexpected", "expired", "expired_on_target")
KEYS = ["pair", "partition"]


def match_copies(records):
    """One row per fingerprint copy: source_offset and/or target_offset (null where that side lacks it), and fp.

    One shuffle: every copy of a fingerprint in a partition meets in one group, where both sides' offsets are
    sorted and zipped (arrays_zip pads the shorter side with nulls). `in_source` says the source has the fingerprint.
    """
    def offsets_of(side):
        return F.sort_array(F.collect_list(F.when(F.col("side") == side, F.col("offset")))).alias(
            "source" if side == SOURCE else "target")

    copies = F.explode(F.arrays_zip("source", "target")).alias("copy")
    return (
        records.groupBy(*KEYS, "fp").agg(offsets_of(SOURCE), offsets_of(TARGET))
        .select(*KEYS, "fp", (F.size("source") > 0).alias("in_source"), copies)
        .select(*KEYS, "fp", "in_source", F.col("copy.source").alias("source_offset"), F.col("copy.target").alias("target_offset"))
    )


def classify(matched, bounds):
    """Add `kind` (one of KINDS) to every matched-copies row.

    Retention is the only excuse for a one-sided record: a target record that precedes the first
    matched one while the source log start is above 0 lost its source copy to retention (`expired`),
    and likewise a source record before the first match when the target log start is above 0
    (`expired_on_target`). In a partition whose target had not caught up with the source snapshot
    (`target_behind`), source records after the last matched one may still be on their way (`pending`);
    MM2 copies in order, so a record missing before a matched one is lost.
    """
    both = F.col("source_offset").isNotNull() & F.col("target_offset").isNotNull()
    match_range = (
        matched.filter(both).groupBy(*KEYS)
        .agg(F.min("source_offset").alias("first_matched_source"), F.min("target_offset").alias("first_matched_target"),
             F.max("source_offset").alias("last_matched_source"))
    )
    # A partition without any match: every one-sided record counts as "before the first match".
    beyond_any_offset = F.lit(2 ** 62)
    before_first_source_match = F.col("source_offset") < F.coalesce(F.col("first_matched_source"), beyond_any_offset)
    before_first_target_match = F.col("target_offset") < F.coalesce(F.col("first_matched_target"), beyond_any_offset)
    after_last_source_match = F.col("source_offset") > F.coalesce(F.col("last_matched_source"), F.lit(-1))
    kind = (
        F.when(both, F.lit("matched"))
        .when(
            F.col("target_offset").isNull(),
            F.when((F.col("target_begin") > 0) & before_first_source_match, F.lit("expired_on_target"))
            .when(F.col("target_behind") & after_last_source_match, F.lit("pending"))
            .otherwise(F.lit("missing")),
        )
        .when((F.col("source_begin") > 0) & before_first_target_match, F.lit("expired"))
        .when(F.col("in_source"), F.lit("duplicate"))
        .otherwise(F.lit("unexpected"))
    )
    return (
        matched.join(F.broadcast(match_range), KEYS, "left")
        .join(F.broadcast(bounds.select(*KEYS, "source_begin", "target_begin", "target_behind")), KEYS, "left")
        .withColumn("kind", kind)
        .select(*KEYS, "fp", "source_offset", "target_offset", "kind")
    )


# Order is checked in blocks of this many target offsets, then across block edges: a window over a whole
# partition buffers all its rows in one task, and Spark spills a window partition of more than 4096 rows
# to disk (spark.sql.windowExec.buffer.in.memory.threshold).
ORDER_BLOCK_OFFSETS = 4096


def order_violations(classified):
    """Target offsets of matched records that come after a record that is later on the source.

    Duplicates and one-sided records are left out, so this counts breaks in the order of the
    target sequence with duplicates removed: a swap of two records is one violation.
    """
    matched = (
        classified.filter(F.col("kind") == "matched")
        .select(*KEYS, "source_offset", "target_offset", F.floor(F.col("target_offset") / ORDER_BLOCK_OFFSETS).alias("block"))
    )
    inside = (
        matched.withColumn("previous_source_offset", F.lag("source_offset").over(Window.partitionBy(*KEYS, "block").orderBy("target_offset")))
        .filter(F.col("source_offset") < F.col("previous_source_offset"))
        .select(*KEYS, "target_offset")
    )
    edges = matched.groupBy(*KEYS, "block").agg(
        F.min("target_offset").alias("target_offset"),
        F.min_by("source_offset", "target_offset").alias("first_source_offset"),
        F.max_by("source_offset", "target_offset").alias("last_source_offset"),
    )
    across = (
        edges.withColumn("previous_source_offset", F.lag("last_source_offset").over(Window.partitionBy(*KEYS).orderBy("block")))
        .filter(F.col("first_source_offset") < F.col("previous_source_offset"))
        .select(*KEYS, "target_offset")
    )
    return inside.unionByName(across)


def partition_counts(classified, violations, bounds):
    """One row per (pair, partition) of `bounds` with the record counts and defect counts."""
    def count_kind(*kinds):
        return F.sum(F.col("kind").isin(*kinds).cast("long"))

    counts = classified.groupBy(*KEYS).agg(
        F.count("source_offset").alias("source_count"),
        F.count("target_offset").alias("target_count"),
        count_kind("missing").alias("missing"),
        count_kind("pending").alias("pending"),
        count_kind("duplicate").alias("duplicates"),
        count_kind("unexpected").alias("unexpected"),
        count_kind("expired", "expired_on_target").alias("expired"),
    )
    violation_counts = violations.groupBy(*KEYS).agg(F.count("*").alias("order_violations"))
    zero_filled = ["source_count", "target_count", "missing", "pending", "duplicates", "unexpected", "expired", "order_violations"]
    return (
        bounds.select(*KEYS)
        .join(counts, KEYS, "left")
        .join(violation_counts, KEYS, "left")
        .fillna(0, subset=zero_filled)
    )


def defect_samples(classified, violations, limit):
    """The first `limit` offsets per (pair, partition, kind) of every defect kind.

    Offsets are source offsets for missing, pending and expired_on_target, target offsets for the rest.
    """
    one_sided = classified.filter(F.col("kind") != "matched").select(
        *KEYS, "kind", F.coalesce("target_offset", "source_offset").alias("offset")
    )
    ordered = violations.select(*KEYS, F.lit("order_violation").alias("kind"), F.col("target_offset").alias("offset"))
    first = Window.partitionBy(*KEYS, "kind").orderBy("offset")
    return (
        one_sided.unionByName(ordered)
        .withColumn("rank", F.row_number().over(first))
        .filter(F.col("rank") <= limit)
        .groupBy(*KEYS, "kind")
        .agg(F.sort_array(F.collect_list("offset")).alias("offsets"))
    )


def misplaced_samples(classified, limit):
    """Records missing from their source partition that appear, unexpected, in another target partition."""
    missing = classified.filter(F.col("kind") == "missing").select(
        "pair", "fp", F.col("partition").alias("source_partition"), "source_offset"
    )
    unexpected = classified.filter(F.col("kind") == "unexpected").select(
        "pair", "fp", F.col("partition").alias("target_partition"), "target_offset"
    )
    first = Window.partitionBy("pair", "source_partition").orderBy("source_offset")
    return (
        missing.join(unexpected, ["pair", "fp"])
        .filter(F.col("source_partition") != F.col("target_partition"))
        .withColumn("rank", F.row_number().over(first))
        .filter(F.col("rank") <= limit)
        .select("pair", "source_partition", "source_offset", "target_partition", "target_offset")
    )
