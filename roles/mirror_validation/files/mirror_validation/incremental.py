# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The incremental mode's reads on the driver: the records resume_plan.py judges the state by, the source records below a
resumed range that MirrorMaker may have copied again, and the last records of a passed run's ranges for the next state.

Each read is a few records per partition (the re-copies: as many as the target holds before the range's first match),
never a range the Spark tasks read.
"""
from __future__ import annotations

from . import resume_plan, validation_state
from .fingerprint import record_fingerprint
from .slices import SOURCE, TARGET, Slice

_SIDES = (("source", SOURCE), ("target", TARGET))


def _identity(record):
    """What tells one record of a log from another at the same offset: every field, the timestamp included."""
    return record_fingerprint(record.key, record.value, record.headers, record.timestamp).hex()


def _topic(pair, side):
    return pair.source_topic if side == SOURCE else pair.target_topic


def plan_pairs(pairs, stored_topics, readers):
    """{(pair index, partition): PartitionPlan} of every partition of `pairs` (TopicPairs after the catch-up wait), from the
    state `stored_topics` (validation_state.load); `readers`: {SOURCE: reader, TARGET: reader}, for the records the state
    names as the last ones validated."""
    stored, wanted = {}, {SOURCE: [], TARGET: []}
    for pair in pairs:
        for partition in sorted(set(pair.source_offsets) | set(pair.target_offsets)):
            entry = validation_state.stored_partition(stored_topics, pair.source_topic, pair.target_topic, partition)
            stored[(pair.index, partition)] = entry
            if entry is not None:
                for side_name, offset in resume_plan.last_records_to_check(entry):
                    side = SOURCE if side_name == "source" else TARGET
                    start, end = (pair.source_offsets if side == SOURCE else pair.target_offsets).get(partition, (0, 0))
                    if start <= offset < end:  # below the log start or past its end there is no record to read
                        wanted[side].append(Slice(side, pair.index, _topic(pair, side), partition, offset, offset + 1, False))
    found = {}
    for side, ranges in wanted.items():
        if ranges:
            for part, record in readers[side].read_ranges(ranges):
                found[(part.pair, part.partition, _SIDES[side][0], record.offset)] = _identity(record)
    plans = {}
    for pair in pairs:
        for partition in sorted(set(pair.source_offsets) | set(pair.target_offsets)):
            entry = stored[(pair.index, partition)]
            now = {(side_name, offset): found.get((pair.index, partition, side_name, offset))
                   for side_name, offset in (resume_plan.last_records_to_check(entry) if entry else ())}
            plans[(pair.index, partition)] = resume_plan.plan(entry, pair.source_offsets.get(partition, (0, 0)),
                                                              pair.target_offsets.get(partition, (0, 0)), now)
    return plans


def apply(pairs, plans):
    """Start each partition's ranges where its plan says."""
    for pair in pairs:
        for partition in sorted(set(pair.source_offsets) | set(pair.target_offsets)):
            plan = plans[(pair.index, partition)]
            source_end = pair.source_offsets.get(partition, (0, 0))[1]
            target_end = pair.target_offsets.get(partition, (0, 0))[1]
            pair.source_offsets[partition] = (plan.source_start, source_end)
            pair.target_offsets[partition] = (plan.target_start, target_end)


def recopy_fingerprints(reader, pair, partition, log_start, validated_offset, count, limit):
    """The fingerprints (as the Spark tasks compute them) of the `count` source records below `validated_offset`, at most
    `limit` of them and none below `log_start`: what MirrorMaker copies again after a restart that lost its commit."""
    start = max(log_start, validated_offset - min(count, limit))
    if start >= validated_offset:
        return frozenset()
    part = Slice(SOURCE, pair.index, pair.source_topic, partition, start, validated_offset, pair.with_timestamp)
    return frozenset(record_fingerprint(record.key, record.value, record.headers, record.timestamp if pair.with_timestamp else None)
                     for _part, record in reader.read_ranges([part]))


def validated_topics(pairs, log_starts, readers, run, validated_at):
    """The state of a passed run ({source topic: entry}): per partition its ranges' ends and the last record below each,
    looked for down to the log start (`log_starts`: {(side, pair index, partition): offset}), below the range when it
    holds none."""
    ranges = {SOURCE: [], TARGET: []}
    for pair in pairs:
        for side, offsets in ((SOURCE, pair.source_offsets), (TARGET, pair.target_offsets)):
            for partition, (_start, end) in offsets.items():
                low = max(log_starts.get((side, pair.index, partition), 0), end - validation_state.LAST_RECORD_LOOKBACK)
                if low < end:
                    ranges[side].append(Slice(side, pair.index, _topic(pair, side), partition, low, end, False))
    last = {}
    for side, wanted in ranges.items():
        if wanted:
            for part, record in readers[side].read_ranges(wanted):
                key = (side, part.pair, part.partition)
                if key not in last or record.offset > last[key][0]:
                    last[key] = [record.offset, _identity(record)]
    topics = {}
    for pair in pairs:
        partitions = {}
        for partition in sorted(set(pair.source_offsets) | set(pair.target_offsets)):
            partitions[partition] = (pair.source_offsets.get(partition, (0, 0))[1], pair.target_offsets.get(partition, (0, 0))[1],
                                     last.get((SOURCE, pair.index, partition)), last.get((TARGET, pair.index, partition)))
        topics[pair.source_topic] = validation_state.topic_entry(pair.target_topic, run, validated_at, partitions)
    return topics
