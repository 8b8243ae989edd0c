# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules of a comparison per topic, for a mirror that does not keep partitions (MirrorMaker 1): its producer
partitions every record again by key on the target, whose partition count may differ, so a record is looked for in the
whole target topic, by its fingerprint.

Each record read becomes a row (pair, fingerprint, side, partition, offset, key digest). The rows of one fingerprint of
one topic pair are combined into its Copies: per side the number of copies, their number per partition, the first copy
and the last `limit` copies, in (partition, offset) order. What a fingerprint's Copies hold is bounded by the partition
count and `limit`, however often the record occurs, so the combination needs no group of rows held whole (Spark combines
them before and after its shuffle, topic_compare.py). From a fingerprint's Copies:

- source copies beyond the target's are `missing` (the last ones in (partition, offset) order are named: the earlier ones
  are taken as copied, first in first out, as the comparison per partition matches them);
- target copies beyond the source's are `duplicate` when the source has the record (MirrorMaker 1 is at least once:
  after a restart it copies again from its group's last commit), else `unexpected`.

Order, per key: a producer that partitions by key keeps a key's records of one source partition in one target partition,
in the order it sent them, and MirrorMaker 1 sends a source partition's records in their order (one stream reads a
partition). So the first copies on the target of a key's records from one source partition must follow those records'
order on the source. Each fingerprint with a key and copies on both sides gives one order row, (pair, key digest,
source partition, target partition) with the target and the source offset of its first copies; sorted by target offset
within their group, a row whose source offset is below the previous row's breaks the order. Later copies of a record
(a restart's redelivery) are left out: they follow the order of the first ones by design. Records with a null key have
no order to check: MirrorMaker 1's producer spreads them over the target's partitions.
"""
from __future__ import annotations

import heapq

from .slices import SOURCE

MISSING, DUPLICATE, UNEXPECTED, ORDER_VIOLATION = "missing", "duplicate", "unexpected", "order_violation"


def side_copies(partition, offset):
    """The copies of one record on its side: (count, {partition: count}, first position, last positions)."""
    position = (partition, offset)
    return 1, {partition: 1}, position, [position]


def copies_of_row(row):
    """A row (pair, fp, side, partition, offset, key digest) as the Copies of its fingerprint: (key digest, source side,
    target side), a side None where the row is not."""
    _pair, _fp, side, partition, offset, key = row
    return (key, side_copies(partition, offset), None) if side == SOURCE else (key, None, side_copies(partition, offset))


def _merge_side(left, right, limit):
    if left is None or right is None:
        return left if right is None else right
    per_partition = dict(left[1])
    for partition, count in right[1].items():
        per_partition[partition] = per_partition.get(partition, 0) + count
    return (left[0] + right[0], per_partition, min(left[2], right[2]), sorted(heapq.nlargest(limit, left[3] + right[3])))


def merge_copies(left, right, limit):
    """The Copies of one fingerprint from two parts of its rows; `limit`: last positions kept per side (samples)."""
    return left[0], _merge_side(left[1], right[1], limit), _merge_side(left[2], right[2], limit)


def _last(side, count):
    """{partition: (count, [offsets of up to the kept last positions])} of the last `count` copies of `side`."""
    taken, left = {}, count
    for partition in sorted(side[1], reverse=True):
        if not left:
            break
        here = min(left, side[1][partition])
        taken[partition] = (here, [])
        left -= here
    for partition, offset in side[3][-count:]:
        taken[partition][1].append(offset)
    return taken


def outcomes(pair, copies):
    """((pair, partition, kind), (count, [sample offsets])) of one fingerprint's Copies: its missing source copies
    (attributed to their source partitions), its duplicate or unexpected target copies (to their target partitions)."""
    _key, source, target = copies
    source_count, target_count = source[0] if source else 0, target[0] if target else 0
    if source_count > target_count:
        side, kind, count = source, MISSING, source_count - target_count
    elif target_count > source_count:
        side, kind, count = target, DUPLICATE if source_count else UNEXPECTED, target_count - source_count
    else:
        return
    for partition, found in sorted(_last(side, count).items()):
        yield (pair, partition, kind), found


def order_row(pair, copies):
    """((pair, key digest, source partition, target partition), target offset, source offset) of the first copies of a
    keyed record found on both sides, else None."""
    key, source, target = copies
    if key is None or source is None or target is None:
        return None
    return (pair, key, source[2][0], target[2][0]), target[2][1], source[2][1]


def order_violations(sorted_rows):
    """((pair, target partition, ORDER_VIOLATION), (1, [target offset])) per order row that breaks its key's order.
    `sorted_rows`: ((group, target offset), source offset) of order_row, each group's rows together in target order."""
    group = previous = None
    for (row_group, target_offset), source_offset in sorted_rows:
        if row_group == group and source_offset < previous:
            yield (row_group[0], row_group[3], ORDER_VIOLATION), (1, [target_offset])
        group, previous = row_group, source_offset


def add_found(left, right, limit):
    """Two (count, [sample offsets]) of one outcome added up, the `limit` least offsets kept."""
    return left[0] + right[0], heapq.nsmallest(limit, left[1] + right[1])


# The report's count of each outcome (report.COUNT_FIELDS) and the name of its samples (report.SAMPLE_KINDS' keys).
COUNTED_AS = {MISSING: "missing", DUPLICATE: "duplicates", UNEXPECTED: "unexpected", ORDER_VIOLATION: "order_violations"}


def partition_tables(records_read, found):
    """The report's per-partition counts and samples ({(pair, partition): ...}, as report.topic_entry takes them per pair).
    `records_read`: {(pair, side, partition): records read}; `found`: {(pair, partition, kind): (count, samples)}."""
    counts, samples = {}, {}
    for (pair, side, partition), count in records_read.items():
        counts.setdefault((pair, partition), {})["source_count" if side == SOURCE else "target_count"] = count
    for (pair, partition, kind), (count, first) in found.items():
        counts.setdefault((pair, partition), {})[COUNTED_AS[kind]] = count
        samples.setdefault((pair, partition), {})[kind] = sorted(first)
    return counts, samples
