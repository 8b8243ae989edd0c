"""Checks against MirrorMaker 2's own bookkeeping: consumer-group checkpoints (offset-sync anchors are checked
where the records are read, partition_match.py)."""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

KEYS = ["pair", "partition"]


def latest_checkpoints(checkpoints):
    """The newest checkpoint per (group, pair, partition): the topic is compacted on that key."""
    newest_first = Window.partitionBy("group", *KEYS).orderBy(F.col("record_offset").desc())
    return checkpoints.withColumn("rank", F.row_number().over(newest_first)).filter(F.col("rank") == 1).drop("rank", "record_offset")


def checkpoint_verdict(downstream, first_copy_after, target_end):
    """(highest safe downstream offset, violation or None) of a checkpoint.

    A group resuming on the target at the checkpoint's downstream offset must not skip the copy of any source
    record at or after its upstream offset (`first_copy_after`: the least target offset of such a copy, None when
    none was copied), and cannot start beyond the target's end.
    """
    limit = target_end if first_copy_after is None else min(first_copy_after, target_end)
    if downstream > target_end:
        return limit, "beyond the target end offset"
    if first_copy_after is not None and downstream > first_copy_after:
        return limit, "skips records on the target"
    return limit, None
