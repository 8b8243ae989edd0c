# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the partition pairs are compared, whatever runs the tasks: ranges read and matched in tasks, the residue
settled, and the partitions whose residue a first read cannot settle read again, whole.

A partition larger than a task's budget is cut into ranges at MM2's offset syncs (slices.split_work), compared in
tasks of their own and summed up per partition (merge_summaries): within a range the records match as they would
in the whole partition when every record finds its copy there, and the syncs make the source offsets of a later
range larger, so no order violation hides at a cut. A split partition with any residue is read again whole, as is
a partition whose residue is unsettled (residue.py): the fingerprints in its residue are exempt from the window
then (partition_match.py), which settles it, and what a task holds stays a window plus the residue.

`engine` runs the tasks: job.py's runs them in Spark, the unit tests' on lists. Its methods:
compare(tasks, window) -> (summaries, residue); settle(residue, bounds_of) -> outcomes;
fingerprints(residue, keys) -> {(pair, partition): frozenset of fingerprints}; without(residue, keys);
union(residue, residue).
"""
from __future__ import annotations

from collections import Counter

from .errors import ValidationUnavailable
from .residue import UNSETTLED
from .slices import pack, split_work

# Reads of a partition after the first, each with more fingerprints exempt from the window, before giving up.
_READS_AGAIN = 3
_SUMMED = ("source_count", "target_count", "matched", "order_violations", "anchors_checked", "anchor_mismatches", "residue")


def _least(values):
    present = [value for value in values if value is not None]
    return min(present) if present else None


def merge_summaries(summaries, sample_limit):
    """{(pair, partition): summary} from the task summaries of its ranges, taken in offset order."""
    parts = {}
    for summary in summaries:
        parts.setdefault((summary["pair"], summary["partition"]), []).append(summary)
    merged = {}
    for key, ranges in parts.items():
        if len(ranges) == 1:
            merged[key] = ranges[0]
            continue
        ranges.sort(key=lambda summary: summary["range_start"])
        summary = dict(ranges[0])
        for name in _SUMMED:
            summary[name] = sum(part[name] for part in ranges)
        for name in ("order_violation_samples", "anchor_mismatch_samples"):
            summary[name] = [sample for part in ranges for sample in part[name]][:sample_limit]
        summary["first_matched_source"] = _least(part["first_matched_source"] for part in ranges)
        summary["first_matched_target"] = _least(part["first_matched_target"] for part in ranges)
        lasts = [part["last_matched_source"] for part in ranges if part["last_matched_source"] is not None]
        summary["last_matched_source"] = max(lasts) if lasts else None
        summary["first_copies_after"] = {upstream: _least(part["first_copies_after"][upstream] for part in ranges)
                                         for upstream in ranges[0]["first_copies_after"]}
        merged[key] = summary
    return merged


def _bounds_of(summaries, bounds, resumed, recopies):
    """What residue.settle needs of each partition: its match range (task summaries), log starts (`bounds`) and, for a
    partition resumed at validated offsets, the fingerprints of the source records below its range."""
    rows = {}
    for key, summary in summaries.items():
        source_begin, _source_end, target_begin, _target_end, behind = bounds[key]
        resumed_source, resumed_target = resumed.get(key, (False, False))
        below = None
        if resumed_source:
            # Each target record without a counterpart in the range may be a copy of a record below it (MirrorMaker copies
            # again from its last commit, which may lie below the range's start): read as many back.
            unmatched = summary["target_count"] - summary["matched"]
            below = recopies(key, unmatched) if summary["residue"] and unmatched > 0 else frozenset()
        # A range that starts at a validated target offset lost nothing to retention: a source record at its start
        # without a copy is missing, not expired on the target.
        rows[key] = (summary["first_matched_source"], summary["first_matched_target"], summary["last_matched_source"],
                     source_begin, 0 if resumed_target else target_begin, behind, below)
    return rows


def _settle(engine, residue, summaries, bounds, resumed, recopies):
    if not any(summary["residue"] for summary in summaries.values()):
        return {}
    return engine.settle(residue, _bounds_of(summaries, bounds, resumed, recopies))


def compare_all(engine, works, budget, window, bounds, sample_limit, topic_names, resumed=None, recopies=None):
    """(summaries, outcomes, stats) of the partition works (one PartitionWork per partition pair).

    `bounds`: {(pair, partition): (source begin, end, target begin, end, behind)}; `topic_names`: {pair: source topic},
    for errors. `resumed`: {(pair, partition): (resumed source, resumed target)} of the partitions an incremental run
    starts at validated offsets (resume_plan.PartitionPlan); `recopies(key, count)`: the fingerprints of the `count`
    source records below such a partition's range. stats: read_tasks, ranges, partitions_split, partitions_read_again,
    residue_records.
    """
    resumed = resumed or {}
    read_back = {}

    def recopies_once(key, count):
        if (key, count) not in read_back:
            read_back[(key, count)] = recopies(key, count)
        return read_back[(key, count)]

    ranges = [part for work in works for part in split_work(work, budget)]
    split = {key for key, count in Counter((part.source.pair, part.source.partition) for part in ranges).items() if count > 1}
    tasks = pack(ranges, budget)
    found, residue = engine.compare(tasks, window)
    summaries = merge_summaries(found, sample_limit)
    outcomes = _settle(engine, residue, summaries, bounds, resumed, recopies_once)
    again = {key[1:] for key in outcomes if key[0] == UNSETTLED} | {key for key in split if summaries[key]["residue"]}
    read_again, exempt = set(again), {}
    for _read in range(_READS_AGAIN):
        if not again:
            break
        # A record read in another order than the first time may wait past the window and leave too: its
        # fingerprint joins the exempt ones for the next read.
        for key, fps in engine.fingerprints(residue, again).items():
            exempt[key] = exempt.get(key, frozenset()) | fps
        rework = [work._replace(exempt=exempt.get((work.source.pair, work.source.partition), frozenset()))
                  for work in works if (work.source.pair, work.source.partition) in again]
        more, more_residue = engine.compare(pack(rework, budget), window)
        summaries.update(merge_summaries(more, sample_limit))
        residue = engine.union(engine.without(residue, again), more_residue)
        outcomes = _settle(engine, residue, summaries, bounds, resumed, recopies_once)
        again = {key[1:] for key in outcomes if key[0] == UNSETTLED}
    if again:
        pair, partition = min(again)
        raise ValidationUnavailable(
            "partition %d of %s (and %d more) could not be settled in %d reads: its records wait longer than --window-records"
            " (%d) for their copies each time it is read; raise --window-records (mirror_validation_window_records), or set"
            " it to 0 to hold whole partitions" % (partition, topic_names[pair], len(again) - 1, _READS_AGAIN + 1, window))
    stats = {"read_tasks": len(tasks), "ranges": len(ranges), "partitions_split": len(split), "partitions_read_again": len(read_again),
             "residue_records": sum(summary["residue"] for summary in summaries.values())}
    return summaries, outcomes, stats
