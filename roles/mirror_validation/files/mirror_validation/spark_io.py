"""Spark stages that touch Kafka: every record is read, fingerprinted and compared inside a Spark task.

Only per-partition summaries and the records left without a counterpart (the residue) leave the tasks.
"""
from __future__ import annotations

from itertools import islice

from .fingerprint import record_fingerprint
from .kafka_reader import open_reader
from .partition_match import PartitionMatch
from .slices import SOURCE, TARGET

SUMMARY, RESIDUE = 0, 1
# Records read from one side before the reader looks whether the other side is behind (with a window of
# `window` records, at most a quarter of it).
STEP_RECORDS = 256


class ReadSettings:
    """What a Spark task needs to open a reader: plain data, pickled into the task."""

    def __init__(self, connections, client, timeout_s):
        self.connections = connections  # {side: Connection}
        self.client = client
        self.timeout_s = timeout_s


class _TaskReaders:
    """One reader per side for the whole task, however many slices it reads."""

    def __init__(self, settings):
        self.settings = settings
        self.open = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for reader in self.open.values():
            reader.close()

    def reader(self, side):
        if side not in self.open:
            self.open[side] = open_reader(self.settings.connections[side], self.settings.client, self.settings.timeout_s)
        return self.open[side]


def _read_in_step(readers, work, matcher, step):
    """Feed both sides of `work` to `matcher`, reading `step` records at a time from the side that is behind.

    Behind means: at an earlier position once the target is shifted onto the source numbering, by the latest
    match, else by the first offset sync, else by aligning the ends. Read in step like this, a healthy mirror's
    records wait for their counterpart only for a step.
    """
    source, target = work.source, work.target
    streams = [readers.reader(SOURCE).read_ranges([source]), readers.reader(TARGET).read_ranges([target])]
    positions = [source.start, target.start]
    reading = [source.start < source.end, target.start < target.end]
    add, with_timestamp = matcher.add, source.with_timestamp
    while reading[SOURCE] or reading[TARGET]:
        if reading[SOURCE] and reading[TARGET]:
            shift = work.shift if matcher.shift is None else matcher.shift
            side = TARGET if positions[TARGET] - shift < positions[SOURCE] else SOURCE
        else:
            side = SOURCE if reading[SOURCE] else TARGET
        taken, last = 0, None
        for _part, (last, key, value, headers, timestamp, _create_time) in islice(streams[side], step):
            taken += 1
            add(side, last, record_fingerprint(key, value, headers, timestamp if with_timestamp else None))
        if taken < step:
            reading[side] = False
        else:
            positions[side] = last + 1


def compare_works(readers, works, window, sample_limit):
    """Per partition pair of `works`: (SUMMARY, summary dict), then (RESIDUE, row) per record left without a counterpart.

    `readers.reader(side)` gives each side's reader (kafka_reader).
    """
    step = max(1, min(STEP_RECORDS, window // 4)) if window else STEP_RECORDS
    for work in works:
        source, target = work.source, work.target
        matcher = PartitionMatch(window, sample_limit, work.syncs, work.checkpoint_upstreams,
                                 (source.end - source.start) + (target.end - target.start))
        _read_in_step(readers, work, matcher, step)
        matcher.finish()
        checked, mismatches, mismatch_samples = matcher.anchor_results()
        yield SUMMARY, {
            "pair": source.pair, "partition": source.partition,
            "source_count": matcher.counts[SOURCE], "target_count": matcher.counts[TARGET], "matched": matcher.matched,
            "first_matched_source": matcher.first_matched_source, "first_matched_target": matcher.first_matched_target,
            "last_matched_source": matcher.last_matched_source,
            "order_violations": matcher.order_violations, "order_violation_samples": matcher.violation_samples,
            "anchors_checked": checked, "anchor_mismatches": mismatches, "anchor_mismatch_samples": mismatch_samples,
            "first_copies_after": matcher.first_copies_after(), "residue": len(matcher.residue),
        }
        for side, offset, fp, seen in matcher.residue:
            yield RESIDUE, (source.pair, source.partition, side, offset, fp, seen)


def compare_partitions(spark, settings, tasks, window, sample_limit):
    """RDD of (SUMMARY, summary) and (RESIDUE, row): one Spark task per entry of `tasks` (lists of PartitionWork, see slices.pack)."""
    def task(entries):
        with _TaskReaders(settings) as readers:
            yield from compare_works(readers, [work for entry in entries for work in entry], window, sample_limit)

    return spark.sparkContext.parallelize(tasks, max(len(tasks), 1)).mapPartitions(task)
