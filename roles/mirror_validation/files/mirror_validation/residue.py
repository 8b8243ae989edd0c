# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Classify the residue: the records that left their partition's task without a counterpart there.

The residue is grouped by (pair, fingerprint), so the copies of one record in every partition of a topic
meet: a record missing from its partition that turns up in another is reported as misplaced. Within a
partition, a one-sided record is classified from where the partition's matches lie (its task's summary):

- a source record: `expired_on_target` when the target log start is above 0 and it precedes the first
  match, `pending` when the target had not caught up with the snapshot and it follows the last match,
  else `missing`;
- a target record: `expired` when the source log start is above 0 and it precedes the first match,
  `duplicate` when the source has its fingerprint, else `unexpected`. In a partition an incremental run resumed
  at validated offsets (resume_plan.py), a target record may be MirrorMaker copying records validated earlier
  again (at-least-once, from its last commit, which may lie below the range's start): a `duplicate` also when
  the source records just below the range have its fingerprint (the partition's `recopies`), wherever it lies.

A partition whose residue holds copies of one fingerprint on both sides (a record that waited longer than
the window), or a target copy whose source presence the task's window forgot, is `unsettled`: its task
runs again without a window limit (job.py), which always settles it.
"""
from __future__ import annotations

import heapq

from .partition_match import SEEN, SEEN_UNKNOWN
from .slices import SOURCE

_NO_OFFSET = 1 << 62
UNSETTLED, KIND, MISPLACED = "unsettled", "kind", "misplaced"


def _classify_partition(key, fp, sources, targets, bounds):
    """(outcome key, value) for the one-sided copies of fingerprint `fp` in one partition."""
    first_source, first_target, last_source, source_begin, target_begin, target_behind, recopies = bounds
    pair, partition = key
    for offset in sources:
        if target_begin > 0 and offset < (_NO_OFFSET if first_source is None else first_source):
            kind = "expired_on_target"
        elif target_behind and offset > (-1 if last_source is None else last_source):
            kind = "pending"
        else:
            kind = "missing"
        yield (KIND, pair, partition, kind), offset
    if not targets:
        return
    seen = {flag for _offset, flag in targets}
    in_source = SEEN in seen
    for offset, _flag in targets:
        if recopies is not None:
            kind = "duplicate" if in_source or fp in recopies else "unexpected"
        elif source_begin > 0 and offset < (_NO_OFFSET if first_target is None else first_target):
            kind = "expired"
        else:
            kind = "duplicate" if in_source else "unexpected"
        yield (KIND, pair, partition, kind), offset


def settle_fingerprint(rows, bounds_of):
    """Outcomes of the residue rows (pair, partition, side, offset, fp, seen) of one fingerprint of one pair.

    `bounds_of`: {(pair, partition): (first matched source offset, first matched target offset, last matched
    source offset, source log start, target log start, target behind, recopies)}, recopies being None or the
    fingerprints of the validated source records below a resumed range (see the module's docstring). Yields (key, value): (UNSETTLED, pair,
    partition) once per partition that needs its task again, (KIND, pair, partition, kind) per classified
    record with its sample offset, (MISPLACED, pair, source partition) per missing record found in another
    partition with (source offset, target partition, target offset).
    """
    sides, fp = {}, None
    for pair, partition, side, offset, fp, seen in rows:
        sources, targets = sides.setdefault((pair, partition), ([], []))
        if side == SOURCE:
            sources.append(offset)
        else:
            targets.append((offset, seen))
    missing, unexpected = [], []
    for key, (sources, targets) in sorted(sides.items()):
        flags = {flag for _offset, flag in targets}
        if (sources and targets) or (targets and SEEN not in flags and SEEN_UNKNOWN in flags):
            yield (UNSETTLED,) + key, 0
            continue
        for outcome in _classify_partition(key, fp, sorted(sources), sorted(targets), bounds_of[key]):
            yield outcome
            kind = outcome[0][3]
            if kind in ("missing", "unexpected"):
                (missing if kind == "missing" else unexpected).append((key, outcome[1]))
    for (pair, source_partition), source_offset in missing:
        for (_pair, target_partition), target_offset in unexpected:
            if target_partition != source_partition:
                yield (MISPLACED, pair, source_partition), (source_offset, target_partition, target_offset)


def settle(residue, bounds_of, sample_limit, partitions):
    """{outcome key: (count, first `sample_limit` values)} of the residue RDD; the grouping is the only shuffle of records."""
    context = residue.context
    bounds = context.broadcast(bounds_of)

    def keep_first(values):
        return heapq.nsmallest(sample_limit, values)

    outcomes = (residue.map(lambda row: ((row[0], row[4]), row)).groupByKey(partitions)
                .flatMap(lambda group: settle_fingerprint(group[1], bounds.value)))
    totals = outcomes.aggregateByKey((0, []), lambda total, value: (total[0] + 1, keep_first(total[1] + [value])),
                                     lambda left, right: (left[0] + right[0], keep_first(left[1] + right[1])), partitions)
    try:
        return dict(totals.collect())
    finally:
        bounds.unpersist()
