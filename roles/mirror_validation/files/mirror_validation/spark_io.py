# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Spark stages that touch Kafka: every record is read and compared inside a Spark task, and fingerprinted where needed.

Only per-partition summaries and the records left without a counterpart (the residue) leave the tasks.
"""
from __future__ import annotations

import gc
from bisect import bisect_right
from contextlib import contextmanager
from functools import partial

from .fingerprint import fingerprints, key_digests
from .kafka_reader import open_reader
from .partition_match import PartitionMatch, coarse_keys
from .slices import SOURCE, TARGET

SUMMARY, RESIDUE = 0, 1
# Fingerprints compared slice against slice while looking for where two runs part: the first slice is short, as
# a run that parted once tends to part again soon, and each next one longer, so a long run costs few comparisons.
_FIRST_PROBE = 16
_NO_OFFSET = 1 << 62
# Python's cycle collector runs whenever container objects allocated minus those freed pass its first threshold (700 by
# default). A task allocates a batch's records as containers (the client's messages, their header lists) and frees
# them a batch later: at 700 that made some 4,000 collections per million records, the full ones walking every record
# the window holds, a third of a task's CPU time (measured). At this threshold, about two batches of 10,000 records,
# a collection comes when the task's live objects grow by that much; records are freed by their reference counts
# either way, as they form no cycles.
_GC_THRESHOLD = 100000


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


class _Side:
    """One side of a PartitionWork as it is read: the current batch, its coarse keys, and how far it was fed."""

    def __init__(self, reader, part):
        self.batches = reader.read_batches([part])
        self.with_timestamp = part.with_timestamp
        self.batch, self.offsets, self.columns, self.batch_coarse, self.at = None, [], (), None, 0
        # (batch, position, fingerprint) of the last head fingerprinted: the batch itself, not its id(), which a batch
        # read later may be given once this one is freed
        self.head = (None, None, None)
        self.open = part.start < part.end

    def available(self):
        """Records read and not yet fed; reads the next batch when none are left."""
        while self.at == len(self.offsets) and self.open:
            read = next(self.batches, None)
            if read is None:
                self.open = False
                return 0
            batch = self.batch = read[1]
            self.offsets, self.at = batch.offsets, 0
            # What a fingerprint covers, the values first: they tell records apart soonest.
            self.columns = (batch.values, batch.keys, batch.headers) + ((batch.timestamps,) if self.with_timestamp else ())
            self.batch_coarse = None
        return len(self.offsets) - self.at

    def coarse(self):
        """The batch's coarse keys, computed when first asked for: a matched run needs the source's only, and the
        target's are asked for where the sides part."""
        if self.batch_coarse is None:
            self.batch_coarse = coarse_keys(self.batch.keys, self.batch.values)
        return self.batch_coarse

    def head_fp(self):
        batch, at, fp = self.head
        if batch is not self.batch or at != self.at:
            fp = fingerprints(self.batch, self.with_timestamp, self.at, self.at + 1)[0]
            self.head = (self.batch, self.at, fp)
        return fp

    def feed_one(self, matcher, side):
        matcher.add(side, self.offsets[self.at], self.head_fp(), self.coarse()[self.at])
        self.at += 1

    def run_fingerprints(self):
        """fps_of(start, end) of PartitionMatch.match_run for a run from the current position: it outlives this batch."""
        return partial(_batch_fingerprints, self.batch, self.with_timestamp, self.at)


def _batch_fingerprints(batch, with_timestamp, base, start, end):
    return fingerprints(batch, with_timestamp, base + start, base + end)


def _equal_prefix(left, left_at, right, right_at, length):
    """How many items of `left` from `left_at` on equal those of `right` from `right_at` on, up to `length`."""
    done, probe = 0, _FIRST_PROBE
    while done < length:
        size = min(probe, length - done)
        if left[left_at + done:left_at + done + size] != right[right_at + done:right_at + done + size]:
            return done + next(index for index in range(size) if left[left_at + done + index] != right[right_at + done + index])
        done += size
        probe *= 4
    return length


def _equal_run(source, target, length):
    """How many records from both sides' positions on are equal in every field a fingerprint covers (so have equal
    fingerprints), up to `length`."""
    for left, right in zip(source.columns, target.columns):
        length = _equal_prefix(left, source.at, right, target.at, length)
        if not length:
            break
    return length


def _shift(work, matcher, syncs, target_offset):
    """Target offset minus source offset where `target_offset` was copied: by the latest match, or by the latest offset
    sync (downstream, upstream) at or before it when that is newer (records lost or copied far from their place stop
    the matches, not MM2's syncs), else by work.shift."""
    index = bisect_right(syncs, (target_offset, _NO_OFFSET)) - 1
    if index >= 0 and syncs[index][0] > matcher.shift_at:
        return syncs[index][0] - syncs[index][1]
    return work.shift if matcher.shift is None else matcher.shift


def _compare_in_step(readers, work, matcher):
    """Feed both sides of `work` to `matcher` as they are read, batch by batch.

    Where both sides go on with equal records, a healthy mirror's case, the run is matched in one step, without
    fingerprints unless a question about them comes. Where they part, records are fed one at a time with their
    fingerprints: a side whose next record the other side is waiting for, else the side that is behind (at an
    earlier position once the target is shifted onto the source numbering, by the latest match, else by the first
    offset sync, else by aligning the ends), until both go on alike again.
    """
    source, target = _Side(readers.reader(SOURCE), work.source), _Side(readers.reader(TARGET), work.target)
    syncs = sorted((downstream, upstream) for upstream, downstream in work.syncs)
    waiting_source, waiting_target = matcher.waiting
    while True:
        source_left, target_left = source.available(), target.available()
        if not (source_left and target_left):
            break
        length = _equal_run(source, target, min(source_left, target_left))
        if length:
            taken = matcher.match_run(source.offsets[source.at:source.at + length], target.offsets[target.at:target.at + length],
                                      source.coarse()[source.at:source.at + length], source.run_fingerprints())
            if taken:
                source.at += taken
                target.at += taken
            else:  # the fingerprint waits or was spilled: first in first out, one by one
                source.feed_one(matcher, SOURCE)
                target.feed_one(matcher, TARGET)
        elif target.head_fp() in waiting_source:
            target.feed_one(matcher, TARGET)
        elif source.head_fp() in waiting_target:
            source.feed_one(matcher, SOURCE)
        elif matcher.matched_before(target.head_fp(), target.coarse()[target.at]):
            target.feed_one(matcher, TARGET)  # a copy made again (a restart's redelivery): no source record is due
        else:
            if target.offsets[target.at] - _shift(work, matcher, syncs, target.offsets[target.at]) < source.offsets[source.at]:
                target.feed_one(matcher, TARGET)
            else:
                source.feed_one(matcher, SOURCE)
    for side, rest in ((SOURCE, source), (TARGET, target)):
        while rest.available():
            rest.feed_one(matcher, side)


def compare_works(readers, works, window, sample_limit):
    """Per partition pair of `works`: (SUMMARY, summary dict), then (RESIDUE, row) per record left without a counterpart.

    `readers.reader(side)` gives each side's reader (kafka_reader).
    """
    for work in works:
        source, target = work.source, work.target
        matcher = PartitionMatch(window, sample_limit, work.syncs, work.checkpoint_upstreams,
                                 (source.end - source.start) + (target.end - target.start), work.exempt)
        _compare_in_step(readers, work, matcher)
        matcher.finish()
        checked, mismatches, mismatch_samples = matcher.anchor_results()
        yield SUMMARY, {
            "pair": source.pair, "partition": source.partition, "range_start": source.start,
            "source_count": matcher.counts[SOURCE], "target_count": matcher.counts[TARGET], "matched": matcher.matched,
            "first_matched_source": matcher.first_matched_source, "first_matched_target": matcher.first_matched_target,
            "last_matched_source": matcher.last_matched_source,
            "order_violations": matcher.order_violations, "order_violation_samples": matcher.violation_samples,
            "anchors_checked": checked, "anchor_mismatches": mismatches, "anchor_mismatch_samples": mismatch_samples,
            "first_copies_after": matcher.first_copies_after(), "residue": len(matcher.residue),
        }
        for side, offset, fp, seen in matcher.residue:
            yield RESIDUE, (source.pair, source.partition, side, offset, fp, seen)


@contextmanager
def _collections_by_growth():
    """The cycle collector at _GC_THRESHOLD while a task runs; the Python worker that runs it may run other tasks after."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], _GC_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def compare_partitions(context, settings, tasks, window, sample_limit):
    """RDD of (SUMMARY, summary) and (RESIDUE, row): one Spark task per entry of `tasks` (lists of PartitionWork, see slices.pack)."""
    def task(entries):
        with _collections_by_growth(), _TaskReaders(settings) as readers:
            yield from compare_works(readers, [work for entry in entries for work in entry], window, sample_limit)

    return context.parallelize(tasks, max(len(tasks), 1)).mapPartitions(task)


def record_rows(context, settings, tasks):
    """RDD of the rows (pair, fingerprint, side, partition, offset, key digest) of every record of `tasks` (lists of
    Slices, see slices.pack), as topic_match.py compares them: one Spark task per entry, each side's slices read at once."""
    def task(entries):
        parts = [part for entry in entries for part in entry]
        with _collections_by_growth(), _TaskReaders(settings) as readers:
            for side in (SOURCE, TARGET):
                mine = [part for part in parts if part.side == side]
                if not mine:
                    continue
                for part, batch in readers.reader(side).read_batches(mine):
                    for offset, fp, key in zip(batch.offsets, fingerprints(batch, part.with_timestamp), key_digests(batch)):
                        yield part.pair, fp, side, part.partition, offset, key

    return context.parallelize(tasks, max(len(tasks), 1)).mapPartitions(task)
