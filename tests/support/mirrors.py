# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small in-memory mirrors compared by the job's own task code (spark_io.compare_works) and residue rules, without
Kafka or Spark: each record is one letter, its value the letter itself.

compare_mirror() runs the job's own comparison (comparison.compare_all) with an engine on lists (ListEngine) where
job.py's runs Spark tasks.
"""
from __future__ import annotations

import heapq
from collections import defaultdict

from mirror_validation import job
from mirror_validation.comparison import compare_all
from mirror_validation.kafka_reader import Batch
from mirror_validation.residue import settle_fingerprint
from mirror_validation.slices import SOURCE, TARGET
from mirror_validation.spark_io import SUMMARY, compare_works
from mirror_validation.topic_pairs import TopicPair

# A shift that makes the reader take one side to its end before the other where they part (see spark_io._compare_in_step).
SOURCE_FIRST, TARGET_FIRST = -10 ** 9, 10 ** 9
# Records per batch read: few, so that runs of equal records end at batch edges too.
BATCH = 3


class LetterReader:
    """A kafka_reader stand-in over {partition: {offset: letter}}."""

    def __init__(self, partitions):
        self.partitions = partitions

    def read_batches(self, ranges):
        for part in ranges:
            records = [(offset, None, letter.encode(), None, None)
                       for offset, letter in sorted(self.partitions.get(part.partition, {}).items()) if part.start <= offset < part.end]
            for start in range(0, len(records), BATCH):
                yield part, Batch(*(list(column) for column in zip(*records[start:start + BATCH])))


class LetterReaders:
    def __init__(self, source, target):
        self.readers = {SOURCE: LetterReader(source), TARGET: LetterReader(target)}

    def reader(self, side):
        return self.readers[side]


def _records(letters, begins):
    return {partition: {begins.get(partition, 0) + index: letter for index, letter in enumerate(text)} for partition, text in letters.items()}


def topic_pair(source, target, source_begin=None, target_begin=None, target_behind=()):
    source_begin, target_begin = source_begin or {}, target_begin or {}
    partitions = sorted(set(source) | set(target))

    def offsets(letters, begins):
        return {p: (begins.get(p, 0), begins.get(p, 0) + len(letters.get(p, ""))) for p in partitions}

    return TopicPair(0, "orders", "primary.orders", len(partitions), len(partitions), source_offsets=offsets(source, source_begin),
                     target_offsets=offsets(target, target_begin), target_behind=set(target_behind))


class ListEngine:
    """comparison.compare_all's engine on lists: tasks run one after another here, the residue is a list."""

    def __init__(self, readers, limit):
        self.readers, self.limit = readers, limit
        self.windows = []  # the window of each compare() call, in order

    def compare(self, tasks, window):
        self.windows.append(window)
        summaries, residue = [], []
        for kind, item in compare_works(self.readers, [work for task in tasks for work in task], window, self.limit):
            (summaries if kind == SUMMARY else residue).append(item)
        return summaries, residue

    def settle(self, residue, bounds_of):
        groups = defaultdict(list)
        for row in residue:
            groups[(row[0], row[4])].append(row)
        totals = {}
        for rows in groups.values():
            for key, value in settle_fingerprint(rows, bounds_of):
                count, first = totals.get(key, (0, []))
                totals[key] = (count + 1, heapq.nsmallest(self.limit, first + [value]))
        return totals

    @staticmethod
    def fingerprints(residue, keys):
        found = defaultdict(set)
        for row in residue:
            if (row[0], row[1]) in keys:
                found[(row[0], row[1])].add(row[4])
        return {key: frozenset(fps) for key, fps in found.items()}

    @staticmethod
    def without(residue, keys):
        return [row for row in residue if (row[0], row[1]) not in keys]

    @staticmethod
    def union(residue, more):
        return residue + more


def compare_mirror(source, target, source_begin=None, target_begin=None, target_behind=(), syncs=None, checkpoints=None,
                   window=100000, limit=10, shift=None, budget=10 ** 9):
    """Compare letters `source`/`target` ({partition: "ABC"} at consecutive offsets from each side's begin offset).

    `syncs`: {partition: [(upstream, downstream)]}; `checkpoints`: {partition: [upstream]}; `shift`: force the reading
    order (SOURCE_FIRST, TARGET_FIRST); `budget`: offsets per task, below a partition's size to cut it into ranges at
    its syncs. Returns (counts, samples, misplaced, anchors, summaries, stats) keyed by (pair, partition) as
    job.partition_tables gives them; stats as comparison.compare_all gives them.
    """
    pair = topic_pair(source, target, source_begin, target_begin, target_behind)
    bounds = {(row[0], row[1]): row[2:] for row in pair.bounds()}
    in_range = job.syncs_in_range([(0, p, u, d) for p, values in (syncs or {}).items() for u, d in values], bounds)
    works = []
    for partition in sorted(bounds):
        work = job.partition_work(pair, partition[1], in_range.get(partition, ()), (checkpoints or {}).get(partition[1], ()))
        works.append(work if shift is None else work._replace(shift=shift))
    engine = ListEngine(LetterReaders(_records(source, source_begin or {}), _records(target, target_begin or {})), limit)
    summaries, outcomes, stats = compare_all(engine, works, budget, window, bounds, limit, {0: pair.source_topic})
    counts, samples, misplaced, anchors = job.partition_tables(summaries, outcomes, limit)
    return counts, samples, misplaced, anchors, summaries, stats


COUNT_NAMES = ("source_count", "target_count", "missing", "duplicates", "unexpected", "order_violations", "expired")


def count_rows(counts, names=COUNT_NAMES):
    """[(partition, *counts)] in partition order, zeros filled in."""
    return [(partition,) + tuple(entry.get(name, 0) for name in names) for (_pair, partition), entry in sorted(counts.items())]
