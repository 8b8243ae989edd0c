# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failover plan of a MirrorMaker 1 flow (pure, no I/O): where a consumer group resumes on each target partition.

MirrorMaker 1 keeps topic names but not partitions (its producer partitions again by key, and the target may have another
partition count), and writes no offset syncs and no checkpoints, so there is no translation to start from: the floor is
the start of each target partition, and the records decide the rest. A group's position on the source is its committed
offset per source partition; every source record before it was consumed, every record from it on was not (a source
partition without a commit: none consumed). Records are matched by fingerprint (key, value, headers, and the timestamp
where both sides keep CreateTime), which MirrorMaker 1 copies unchanged.

For each target partition, the position is the first target record that is not proven consumed: the first copy of a
record the group has not consumed, a record whose fingerprint a consumed and an unconsumed source record share, or a
record that matches no source record at all (written straight to the target, or copied from source records that
retention has removed since): the group's consumers then read everything it has not consumed, and again only the consumed
records copied after that position (MirrorMaker 1 re-copies what it sent after its last commit when it is killed). With
nothing proven the position is the start of the partition: every record there is read again. The per-key order that
MirrorMaker 1 keeps makes the first copy of a key's next unconsumed record come after every copy of its consumed ones,
except re-copies.

A source record the group has not consumed that no target partition holds is missing (the mirror has not copied it):
every target partition of that topic is then target_behind for the group, as with MirrorMaker 2.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.failover_preview import AT_END, EXACT, RE_READ
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets_plan import decide_row

FLOOR = "the start of the target partition"
# Why the search stopped at a target record.
_NEXT, _SHARED, _UNKNOWN = "next", "shared", "unknown"


def _positions(committed, source_begin, source_records):
    """({fingerprint: consumed source record count}, {fingerprint: unconsumed count}) of one topic."""
    consumed, pending = {}, {}
    for partition, records in source_records.items():
        g = max(committed.get(partition, source_begin.get(partition, 0)), source_begin.get(partition, 0))
        for offset, digest in records:
            side = consumed if offset < g else pending
            side[digest] = side.get(digest, 0) + 1
    return consumed, pending


def search(records, end, consumed, pending):
    """(position, stopped at, re-read from it, unknown from it, passed over) of one target partition: `records` its
    [(offset, fingerprint)] from its start, `end` its end offset. `stopped at` is _NEXT, _SHARED, _UNKNOWN or None (the end)."""
    position, why, index = end, None, len(records)
    for index, (offset, digest) in enumerate(records):
        if digest in pending:
            position, why = offset, _SHARED if digest in consumed else _NEXT
            break
        if digest not in consumed:
            position, why = offset, _UNKNOWN
            break
    else:
        index = len(records)
    after = records[index:]
    re_read = sum(1 for _offset, digest in after if digest in consumed and digest not in pending)
    unknown = sum(1 for _offset, digest in after if digest not in consumed and digest not in pending)
    return position, why, re_read, unknown, index


def partitions_kept(source_records, target_records):
    """True when the records prove that MirrorMaker 1 kept every record in its partition number: the same partition count,
    and every target record the copy of a record of the source partition with its number."""
    if set(source_records) != set(target_records):
        return False
    for partition, records in target_records.items():
        own = {digest for _offset, digest in source_records[partition]}
        if any(digest not in own for _offset, digest in records):
            return False
    return True


def _detail(why, position, re_read, unknown, passed, begin):
    said = {
        _NEXT: f"target offset {position} holds the first copy of a record the group has not consumed on the source",
        _SHARED: f"the record at target offset {position} has the fingerprint of a consumed and of an unconsumed source record, "
                 f"so nothing past it is proven",
        _UNKNOWN: f"the record at target offset {position} matches no source record (written to the target directly, or its "
                  f"source record is gone), so the group reads it",
        None: f"every record of the partition is the copy of one the group consumed: it resumes at the end, {position}",
    }[why]
    line = f"{said}; {passed} consumed record(s) before it passed over, {re_read} read again from it"
    if unknown:
        line += f", and {unknown} record(s) that match no source record"
    if position == begin and why is not None:
        line += " (nothing proven: the start of the partition)"
    return line


def plan_topic(group, topic, committed, source_begin, source_records, target_partitions, target_committed, active,
               allow_rewind=False):
    """Plan rows of one group and topic of a MirrorMaker 1 flow, one per target partition.

    committed: {source partition: the group's committed offset}; source_begin: {source partition: beginning offset};
    source_records: {source partition: [(offset, fingerprint)]} from the beginning to the end;
    target_partitions: {target partition: (beginning offset, end offset, [(offset, fingerprint)] from the beginning)}, or
    None when the topic is not on the target; target_committed: {target partition: the group's committed offset there}.
    """
    if target_partitions is None:
        rows = [_row(group, topic, partition, committed, None, None, target_committed.get(partition), active)
                for partition in sorted(source_records)]
        for row in rows:
            decide_row(row, allow_rewind)
        return rows
    consumed, pending = _positions(committed, source_begin, source_records)
    on_target = set()
    for _begin, _end, records in target_partitions.values():
        on_target.update(digest for _offset, digest in records)
    missing = sum(count for digest, count in pending.items() if digest not in on_target)
    kept = partitions_kept(source_records, {p: records for p, (_b, _e, records) in target_partitions.items()})
    rows = []
    for partition, (begin, end, records) in sorted(target_partitions.items()):
        row = _row(group, topic, partition, committed, begin, end, target_committed.get(partition), active)
        row["partitioning"] = "kept" if kept else "by_key"
        position, why, re_read, unknown, passed = search(records, end, consumed, pending)
        status = AT_END if position == end and not re_read else EXACT if not re_read else RE_READ
        # As with MirrorMaker 2: the preview's re_read counts from the floor (here the partition's start), re_read_at_exact
        # (and the row's re_read) from the position committed.
        row["preview"] = dict(status=status, re_read=re_read + passed, skipped=0, missing=missing, complete=True,
                              unknown=unknown, detail=_detail(why, position, re_read, unknown, passed, begin),
                              exact_offset=position, re_read_at_exact=re_read, window=None)
        row["exact_offset"] = position
        row["re_read"] = re_read
        row["skipped"] = 0
        decide_row(row, allow_rewind, missing=missing)
        rows.append(row)
    return rows


def _row(group, topic, partition, committed, begin, end, target_committed, active):
    return dict(
        group=group, topic=topic, source_topic=topic, partition=partition,
        source_offset=None, source_offsets={str(p): offset for p, offset in sorted(committed.items())},
        checkpoint_upstream_offset=None, checkpoint_downstream_offset=None,
        translated_offset=begin, exact_offset=None, commit_offset=begin,
        basis=None if begin is None else "partition_start",
        target_committed_offset=target_committed, target_end_offset=end, active=bool(active),
        translation=("MirrorMaker 1 writes no offset syncs or checkpoints: the floor is " + FLOOR) if begin is not None else
        "the topic does not exist on the target",
    )
