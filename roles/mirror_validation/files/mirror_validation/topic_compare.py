# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The comparison per topic (MirrorMaker 1) in Spark, by topic_match.py's rules.

Why it scales: every record is read in a Spark task (spark_io.record_rows) and becomes one small row (about 60 bytes:
a 16-byte fingerprint, an 8-byte key digest, numbers); nothing per record reaches the driver. The rows are combined per
(topic pair, fingerprint) with reduceByKey, which combines before the shuffle and holds at most a bounded Copies per
fingerprint after it, so a record repeated a million times costs no more than one. The order check sorts one row per
keyed record with repartitionAndSortWithinPartitions (Spark's external sort, which spills to disk) and reads each key's
rows as a stream, keeping one previous row: a hot key needs time in one task, never its records in memory. The driver
collects the records read per partition and, per (partition, outcome), a count and `limit` sample offsets.
"""
from __future__ import annotations

from operator import add

from pyspark import StorageLevel
from pyspark.rdd import portable_hash

from .slices import SOURCE, TARGET, pack, slice_partitions
from .spark_io import record_rows
from .topic_match import add_found, copies_of_row, merge_copies, order_row, order_violations, outcomes


def _group_partition(key):
    """Where an order row goes: by its group (pair, key digest, source partition, target partition), so that a group's
    rows meet in one partition, where the sort puts them in target order."""
    return portable_hash(key[0])


def match_rows(rows, limit, partitions):
    """({(pair, side, partition): records read}, {(pair, partition, kind): (count, [sample offsets])}) of the RDD `rows`
    (topic_match's rows), in `partitions` shuffle partitions."""
    records_read = rows.map(lambda row: ((row[0], row[2], row[3]), 1)).reduceByKey(add, partitions).collectAsMap()
    copies = (rows.map(lambda row: ((row[0], row[1]), copies_of_row(row)))
              .reduceByKey(lambda left, right: merge_copies(left, right, limit), partitions)
              .persist(StorageLevel.MEMORY_AND_DISK))
    try:
        found = copies.flatMap(lambda item: outcomes(item[0][0], item[1]))
        ordered = (copies.map(lambda item: order_row(item[0][0], item[1])).filter(lambda row: row is not None)
                   .map(lambda row: ((row[0], row[1]), row[2]))
                   .repartitionAndSortWithinPartitions(partitions, _group_partition)
                   .mapPartitions(order_violations))
        totals = found.union(ordered).reduceByKey(lambda left, right: add_found(left, right, limit), partitions).collectAsMap()
    finally:
        copies.unpersist()
    return records_read, totals


def compare_topics(context, settings, pairs, budget, limit):
    """(records read, outcomes: as match_rows gives them, Spark tasks that read) of the topic pairs `pairs` whose targets
    exist, every partition of each side read in slices of about `budget` offsets packed into tasks of about as many."""
    slices = [part for pair in pairs for side, offsets in ((SOURCE, pair.source_offsets), (TARGET, pair.target_offsets))
              for part in slice_partitions(side, pair.index, pair.source_topic if side == SOURCE else pair.target_topic, offsets, budget,
                                           pair.with_timestamp)]
    tasks = pack(slices, budget)
    rows = record_rows(context, settings, tasks).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        records_read, found = match_rows(rows, limit, context.defaultParallelism)
    finally:
        rows.unpersist()
    return records_read, found, len(tasks)
