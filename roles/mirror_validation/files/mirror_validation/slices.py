# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offset ranges and partition pairs, and how they are packed into Spark tasks."""
from __future__ import annotations

from collections import namedtuple

SOURCE = 0
TARGET = 1

# side: SOURCE or TARGET; pair: index of the (source topic, target topic) pair; [start, end) offsets.
Slice = namedtuple("Slice", "side pair topic partition start end with_timestamp")
# A source range and its target range (Slices) of one partition pair, compared in one task. shift: target offset minus
# source offset where reading both in step starts; syncs: MM2 offset syncs (upstream, downstream) within both ranges;
# checkpoint_upstreams: upstream offsets of the partition's latest consumer-group checkpoints; exempt: fingerprints
# that wait outside the window (partition_match.py).
PartitionWork = namedtuple("PartitionWork", "source target shift syncs checkpoint_upstreams exempt", defaults=(frozenset(),))


def work_size(work):
    """Offsets a PartitionWork reads, or a Slice."""
    if isinstance(work, PartitionWork):
        return work_size(work.source) + work_size(work.target)
    return work.end - work.start


def offset_ranges(start, end, size):
    """[start, end) cut into consecutive ranges of at most `size` offsets."""
    if size < 1:
        raise ValueError("slice size must be at least 1, got %r" % size)
    return [(low, min(low + size, end)) for low in range(start, end, size)]


def slice_partitions(side, pair, topic, offsets, size, with_timestamp=False):
    """Slices for every partition of one topic; `offsets` is {partition: (begin, end)}."""
    return [
        Slice(side, pair, topic, partition, low, high, with_timestamp)
        for partition, (begin, end) in sorted(offsets.items())
        for low, high in offset_ranges(begin, end, size)
    ]


def split_work(work, budget):
    """`work` cut into ranges of about `budget` offsets at MM2 offset syncs: a sync (u, d) says source record u was
    copied as target record d, so the records before u were copied before d, and source range [u, u') is compared with
    target range [d, d') where (u', d') is the next cut. Only syncs that increase on both sides cut (a partition whose
    syncs do not, after MirrorMaker rewound, stays whole), and a work of at most `budget` offsets, or with no sync,
    stays whole. Each range keeps every checkpoint upstream offset: its first copies are combined per partition."""
    if work_size(work) <= budget or not work.syncs:
        return [work]
    syncs = sorted(work.syncs)
    if any(later[1] <= earlier[1] or later[0] == earlier[0] for earlier, later in zip(syncs, syncs[1:])):
        return [work]
    source, target = work.source, work.target
    cuts, last, candidate = [], (source.start, target.start), None
    for sync in syncs:
        if sync[0] <= last[0] or sync[1] <= last[1]:
            continue
        if candidate and (sync[0] - last[0]) + (sync[1] - last[1]) > budget:
            cuts.append(candidate)
            last = candidate
        candidate = sync
    if candidate and (source.end - last[0]) + (target.end - last[1]) > budget:
        cuts.append(candidate)
    if not cuts:
        return [work]
    starts = [(source.start, target.start)] + cuts
    ends = cuts + [(source.end, target.end)]
    ranges = []
    for index, ((source_start, target_start), (source_end, target_end)) in enumerate(zip(starts, ends)):
        ranges.append(work._replace(
            source=source._replace(start=source_start, end=source_end), target=target._replace(start=target_start, end=target_end),
            shift=work.shift if index == 0 else target_start - source_start,
            syncs=tuple(sync for sync in syncs if source_start <= sync[0] < source_end and target_start <= sync[1] < target_end)))
    return ranges


def pack(slices, budget):
    """Group slices (or PartitionWorks) into tasks of about `budget` offsets each, so that many small partitions do not
    each cost a task.

    Greedy in the given order; a slice is never split, so no task exceeds max(budget, largest slice).
    """
    tasks, current, size = [], [], 0
    for part in slices:
        width = work_size(part)
        if current and size + width > budget:
            tasks.append(current)
            current, size = [], 0
        current.append(part)
        size += width
    if current:
        tasks.append(current)
    return tasks
