# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small in-memory MirrorMaker 1 mirrors compared per topic by the job's own rules (mirror_validation.topic_match), without
Kafka or Spark: records are (key, value) texts per partition, a key None for a null key.

rows() makes the rows the job's read tasks make (spark_io.record_rows), match_on_lists() combines and sorts them on lists
where topic_compare.match_rows does it in Spark, so that a Spark test can hold both to the same result.
"""
from __future__ import annotations

from collections import Counter

from mirror_validation.fingerprint import fingerprints, key_digests
from mirror_validation.kafka_reader import Batch
from mirror_validation.slices import SOURCE, TARGET
from mirror_validation.topic_match import add_found, copies_of_row, merge_copies, order_row, order_violations, outcomes, partition_tables


def _encoded(text):
    return None if text is None else text.encode()


def rows(source, target, pair=0):
    """The rows (pair, fingerprint, side, partition, offset, key digest) of `source` and `target`: {partition: [(key, value)]},
    offsets from 0."""
    found = []
    for side, partitions in ((SOURCE, source), (TARGET, target)):
        for partition, records in sorted(partitions.items()):
            if not records:
                continue
            batch = Batch(list(range(len(records))), [_encoded(key) for key, _value in records],
                          [_encoded(value) for _key, value in records], [None] * len(records), [None] * len(records))
            for offset, fp, key in zip(batch.offsets, fingerprints(batch, False), key_digests(batch)):
                found.append((pair, fp, side, partition, offset, key))
    return found


def match_on_lists(found_rows, limit):
    """What topic_compare.match_rows gives for the RDD of `found_rows`, computed on lists."""
    records_read = dict(Counter((row[0], row[2], row[3]) for row in found_rows))
    copies = {}
    for row in found_rows:
        key = (row[0], row[1])
        copies[key] = merge_copies(copies[key], copies_of_row(row), limit) if key in copies else copies_of_row(row)
    found = [item for (pair, _fp), item_copies in copies.items() for item in outcomes(pair, item_copies)]
    ordered = sorted(((row[0], row[1]), row[2]) for row in (order_row(pair, item_copies) for (pair, _fp), item_copies in copies.items())
                     if row is not None)
    found += list(order_violations(ordered))
    totals = {}
    for key, value in found:
        totals[key] = add_found(totals[key], value, limit) if key in totals else value
    return records_read, totals


def compare_topic(source, target, limit=10):
    """(counts, samples) per (pair, partition) of one topic, as job.py hands them to report.topic_entry."""
    return partition_tables(*match_on_lists(rows(source, target), limit))
