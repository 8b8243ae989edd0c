# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 2's own bookkeeping, read on the driver: offset syncs (anchors, checked where the records are read,
partition_match.py) and consumer-group checkpoints. Both topics are compacted: they hold a few records per
partition and group, not per mirrored record."""
from __future__ import annotations

from collections import namedtuple

from .fingerprint import record_fingerprint
from .vendored_mm2_records import Checkpoint, OffsetSync, decode_records

SKIPS_RECORDS = "skips records on the target"
UNDECODABLE_SAMPLES = 5

_Consumed = namedtuple("_Consumed", "partition offset key value")  # what decode_records reads of a consumer record


def _decoded(records, codec, undecodable):
    """(decoded record, offset) of `records` ((range, RawRecord)) by the collection's one rule (decode_records): a tombstone
    is skipped silently, any other record that does not decode is skipped and its problem appended to `undecodable`."""
    for part, record in records:
        decoded, problems = decode_records([_Consumed(part.partition, record.offset, record.key, record.value)], codec, part.topic)
        undecodable.extend(problems)
        for item in decoded:
            yield item, record.offset


def undecodable_note(undecodable):
    """`; N undecodable record(s) skipped: topic[p]@offset: reason, ...` (the first UNDECODABLE_SAMPLES) for a check's line, or ``."""
    if not undecodable:
        return ""
    more = len(undecodable) - UNDECODABLE_SAMPLES
    return "; %d undecodable record(s) skipped: %s%s" % (len(undecodable), ", ".join(undecodable[:UNDECODABLE_SAMPLES]),
                                                         " and %d more" % more if more > 0 else "")


def offset_syncs(records, pair_of_source_topic):
    """({(pair, partition, upstream, downstream)} of the syncs of validated topics among `records` ((range, RawRecord)),
    [problem of each undecodable record])."""
    undecodable = []
    syncs = {(pair_of_source_topic[sync.topic], sync.partition, sync.upstream_offset, sync.downstream_offset)
             for sync, _offset in _decoded(records, OffsetSync, undecodable) if sync.topic in pair_of_source_topic}
    return syncs, undecodable


def latest_syncs(syncs):
    """{(pair, partition): (upstream, downstream)} of the highest sync per partition."""
    latest = {}
    for pair, partition, upstream, downstream in syncs:
        if (upstream, downstream) > latest.get((pair, partition), (-1, -1)):
            latest[(pair, partition)] = (upstream, downstream)
    return latest


def latest_checkpoints(records, pair_of_target_topic):
    """([the newest checkpoint per (group, pair, partition) of validated topics, as dicts: the topic is compacted on that key],
    [problem of each undecodable record])."""
    newest, undecodable = {}, []
    for checkpoint, offset in _decoded(records, Checkpoint, undecodable):
        if checkpoint.topic in pair_of_target_topic:
            key = (checkpoint.group, pair_of_target_topic[checkpoint.topic], checkpoint.partition)
            if key not in newest or offset > newest[key][0]:
                newest[key] = (offset, checkpoint)
    return [{"group": group, "pair": pair, "partition": partition, "upstream": checkpoint.upstream_offset,
             "downstream": checkpoint.downstream_offset} for (group, pair, partition), (_offset, checkpoint) in sorted(newest.items())], undecodable


def checkpoint_verdict(downstream, first_copy_after, target_end):
    """(highest safe downstream offset, violation or None) of a checkpoint.

    A group resuming on the target at the checkpoint's downstream offset must not skip the copy of any source
    record at or after its upstream offset (`first_copy_after`: the least target offset of such a copy, None when
    none was copied), and cannot start beyond the target's end.
    """
    limit = target_end if first_copy_after is None else min(first_copy_after, target_end)
    if downstream > target_end:
        return limit, "beyond the target end offset"
    if first_copy_after is not None and downstream > first_copy_after:
        return limit, SKIPS_RECORDS
    return limit, None


def copied_again(source_records, target_records, with_timestamp):
    """Whether every record of `source_records` (RawRecords from a checkpoint's upstream offset to the snapshot) has a copy
    among `target_records` (RawRecords from its downstream offset to the target's end).

    checkpoint_verdict judges by each record's first copy. A MirrorMaker that restarted without committing its source
    offsets (kill -9, a crash: Connect commits them every offset.flush.interval.ms) copies the records since its last commit
    again, after their first copies, and its checkpoints point into that second copy: a group resuming there skips nothing.
    """
    def fingerprint(record):
        return record_fingerprint(record.key, record.value, record.headers, record.timestamp if with_timestamp else None)

    copies = {fingerprint(record) for record in target_records}
    return all(fingerprint(record) in copies for record in source_records)
