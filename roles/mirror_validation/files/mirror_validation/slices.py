"""Offset ranges and partition pairs, and how they are packed into Spark tasks."""
from __future__ import annotations

from collections import namedtuple

SOURCE = 0
TARGET = 1

# side: SOURCE or TARGET; pair: index of the (source topic, target topic) pair; [start, end) offsets.
Slice = namedtuple("Slice", "side pair topic partition start end with_timestamp")
# A source partition and its target partition (Slices), compared in one task. shift: target offset minus source
# offset where reading both in step starts; syncs: MM2 offset syncs (upstream, downstream) within both ranges;
# checkpoint_upstreams: upstream offsets of the partition's latest consumer-group checkpoints.
PartitionWork = namedtuple("PartitionWork", "source target shift syncs checkpoint_upstreams")


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
