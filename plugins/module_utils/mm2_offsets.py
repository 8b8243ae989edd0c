# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Consumer-group offset translation for a MirrorMaker 2 flow: plan (pure), read (Kafka), apply, verify.

Used by the kafka_mirror_offsets module and, through it, the failover role.

The plan has one row per (group, target topic, partition):
- translate(): from the group's committed offset on the source, the latest checkpoint of the group on the
  target, and (optionally) the offset-syncs of the flow. Rules (reference: MirrorMaker 2
  OffsetSyncStore.translateDownstream and MirrorCheckpointTask):
  * offset-syncs known and one at or before the source offset g: the translate_downstream rule (g == u -> d, g > u -> d + 1);
  * otherwise a checkpoint with upstream offset == g gives its downstream offset;
  * a checkpoint behind g (written before the group moved on) still gives its downstream offset: the
    consumer re-reads at most the records between them, never skips;
  * a checkpoint ahead of g (the source group was rewound after it) would skip records: no translation;
  * nothing at or before g: no translation. Nothing is ever guessed.
- decide(): what to do on the target: commit, up_to_date, refused_active, would_rewind, target_behind, no_translation.

Commits use OffsetCommit through the admin client (AlterConsumerGroupOffsets semantics): only groups
without members are touched, and the broker itself refuses a commit to a group that has members.
"""
from __future__ import annotations

import hashlib
import re
import time
from collections import namedtuple

from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_filters import DEFAULT_GROUPS_EXCLUDE
from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_records import (
    Checkpoint,
    MirrorRecordError,
    OffsetSync,
    ReplicationPolicy,
    checkpoints_topic,
    offset_syncs_topic,
    translate_downstream,
)

try:
    from kafka.admin import OffsetSpec
    from kafka.structs import OffsetAndMetadata, TopicPartition
except ImportError:
    # kafka_client.ensure_kafka_python() reports the missing library before any of this is used.
    OffsetSpec = OffsetAndMetadata = TopicPartition = None

# Actions of a plan row. Only "commit" changes anything.
COMMIT = "commit"
UP_TO_DATE = "up_to_date"
REFUSED_ACTIVE = "refused_active"
WOULD_REWIND = "would_rewind"
TARGET_BEHIND = "target_behind"
NO_TRANSLATION = "no_translation"
ACTIONS = (COMMIT, UP_TO_DATE, REFUSED_ACTIVE, WOULD_REWIND, TARGET_BEHIND, NO_TRANSLATION)

# Group states in which the group has (or is getting) members (DescribeGroups).
_ACTIVE_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance", "AwaitingSync")

Translation = namedtuple("Translation", "offset basis reason")


class OffsetsError(Exception):
    """Reading or committing offsets failed; the message says what, where and what to do."""


def translate(source_offset, checkpoint, syncs):
    """Translation(offset, basis, reason) of one group partition; offset None when there is no safe translation.

    source_offset: the group's committed offset on the source (None when unknown: then the checkpoint is used as is).
    checkpoint: the latest Checkpoint for the group partition (or None).
    syncs: list of OffsetSync / (upstream, downstream) for the source partition, or None when offset-syncs were not read.
    """
    if source_offset is None:
        if checkpoint is None:
            return Translation(None, None, "no checkpoint for this group partition and the source group offset is unknown")
        return Translation(checkpoint.downstream_offset, "checkpoint",
                           f"checkpoint: source offset {checkpoint.upstream_offset} -> target offset {checkpoint.downstream_offset}")
    if syncs:
        translated = translate_downstream(syncs, source_offset)
        if translated is not None:
            return Translation(translated, "offset_sync", f"offset-sync at or before source offset {source_offset}")
    if checkpoint is not None:
        upstream = checkpoint.upstream_offset
        if upstream == source_offset:
            return Translation(checkpoint.downstream_offset, "checkpoint",
                               f"checkpoint for source offset {source_offset} -> target offset {checkpoint.downstream_offset}")
        if upstream < source_offset:
            return Translation(checkpoint.downstream_offset, "checkpoint_behind",
                               f"latest checkpoint is for source offset {upstream}, the group is now at {source_offset}: "
                               f"up to {source_offset - upstream} more records are re-read (wait one emit.checkpoints.interval.seconds for less)")
        return Translation(None, None,
                           f"the latest checkpoint is for source offset {upstream}, after the group's offset {source_offset} "
                           f"(the group was rewound on the source): using it would skip records; read offset-syncs or wait for a new checkpoint")
    if syncs is None:
        return Translation(None, None, f"no checkpoint for this group partition (source offset {source_offset}); "
                                       f"MirrorMaker emits one only after the group commits and a checkpoint interval passes")
    return Translation(None, None, f"no checkpoint and no offset-sync at or before source offset {source_offset}")


def decide(translated, target_committed, target_end, active, allow_rewind):
    """(action, reason) for one row; see ACTIONS. Order: no translation, target behind, up to date, rewind, active, commit."""
    if translated is None:
        return NO_TRANSLATION, "no translation: nothing is committed for this partition"
    if target_end is None:
        return NO_TRANSLATION, "the topic partition does not exist on the target"
    if translated > target_end:
        return TARGET_BEHIND, (f"translated offset {translated} is past the target end offset {target_end}: "
                               f"the mirror has not copied those records yet (wait for lag 0)")
    if target_committed is not None and target_committed == translated:
        return UP_TO_DATE, "the target group is already at the translated offset"
    if target_committed is not None and target_committed > translated and not allow_rewind:
        return WOULD_REWIND, (f"the target group is at {target_committed}, ahead of the translated {translated}; "
                              f"moving it back re-delivers records: set allow_rewind to do it")
    if active:
        return REFUSED_ACTIVE, "the group has active members on the target: stop its consumers first"
    return COMMIT, f"commit {translated}" + (f" (was {target_committed})" if target_committed is not None else " (no committed offset yet)")


def plan_offsets(rows_in, allow_rewind=False):
    """rows_in: dicts with group, topic, source_topic, partition, source_offset, checkpoint, syncs, target_committed,
    target_end, active. Returns plan rows (plain dicts, sorted)."""
    rows = []
    for item in rows_in:
        translation = translate(item.get("source_offset"), item.get("checkpoint"), item.get("syncs"))
        action, why = decide(translation.offset, item.get("target_committed"), item.get("target_end"), item.get("active", False), allow_rewind)
        checkpoint = item.get("checkpoint")
        rows.append(dict(
            group=item["group"],
            topic=item["topic"],
            source_topic=item.get("source_topic"),
            partition=item["partition"],
            source_offset=item.get("source_offset"),
            checkpoint_upstream_offset=checkpoint.upstream_offset if checkpoint else None,
            checkpoint_downstream_offset=checkpoint.downstream_offset if checkpoint else None,
            translated_offset=translation.offset,
            basis=translation.basis,
            target_committed_offset=item.get("target_committed"),
            target_end_offset=item.get("target_end"),
            active=bool(item.get("active")),
            action=action,
            reason=translation.reason if action == NO_TRANSLATION and translation.offset is None else why,
            translation=translation.reason,
        ))
    rows.sort(key=lambda row: (row["group"], row["topic"], row["partition"]))
    return rows


def summarize(rows):
    """Per group: active, partitions by action, and one overall status."""
    groups = {}
    for row in rows:
        entry = groups.setdefault(row["group"], dict(group=row["group"], active=row["active"], partitions=0, actions={}))
        entry["partitions"] += 1
        entry["actions"][row["action"]] = entry["actions"].get(row["action"], 0) + 1
        entry["active"] = entry["active"] or row["active"]
    for entry in groups.values():
        actions = entry["actions"]
        if actions.get(REFUSED_ACTIVE):
            entry["status"] = REFUSED_ACTIVE
        elif actions.get(COMMIT):
            entry["status"] = COMMIT
        elif set(actions) == {UP_TO_DATE}:
            entry["status"] = UP_TO_DATE
        else:
            entry["status"] = "incomplete"
    return [groups[name] for name in sorted(groups)]


def commits_by_group(rows):
    """{group: {(topic, partition): offset}} for the rows to commit."""
    commits = {}
    for row in rows:
        if row["action"] == COMMIT:
            commits.setdefault(row["group"], {})[(row["topic"], row["partition"])] = row["translated_offset"]
    return commits


def diff_of(rows):
    """Ansible diff: each group's committed target offsets before and after the commits."""
    before, after = {}, {}
    for row in rows:
        if row["action"] != COMMIT:
            continue
        key = f"{row['topic']}:{row['partition']}"
        before.setdefault(row["group"], {})[key] = row["target_committed_offset"]
        after.setdefault(row["group"], {})[key] = row["translated_offset"]
    return dict(before=before, after=after)


def latest_checkpoints(records, group_patterns, exclude=()):
    """{(group, topic, partition): Checkpoint}, last record wins (the topic is compacted by that key)."""
    latest = {}
    for checkpoint in records:
        if matches(checkpoint.group, group_patterns) and not matches(checkpoint.group, exclude):
            latest[(checkpoint.group, checkpoint.topic, checkpoint.partition)] = checkpoint
    return latest


def syncs_by_partition(records):
    """{(source topic, partition): [(upstream, downstream), ...]} from offset-sync records, in topic order."""
    syncs = {}
    for sync in records:
        syncs.setdefault((sync.topic, sync.partition), []).append((sync.upstream_offset, sync.downstream_offset))
    return syncs


def compile_patterns(patterns):
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise OffsetsError(f"groups pattern {pattern!r} is not a valid regular expression: {exc}") from None
    return compiled


def matches(name, patterns):
    return any(pattern.fullmatch(name) for pattern in patterns)


def fingerprint(key, value, headers=None):
    """A digest of what MirrorMaker copies unchanged: key, value and headers (offsets and timestamps may differ)."""
    digest = hashlib.sha256()
    for part in (key, value):
        digest.update(b"\x00" if part is None else b"\x01" + len(part).to_bytes(4, "big") + bytes(part))
    for name, data in headers or []:
        digest.update(name.encode("utf-8") + b"\x00" + (data or b""))
    return digest.hexdigest()[:32]


def verify_position(target_record, source_records, source_offset, target_offset, target_end, target_previous=None):
    """Where the target position lands relative to the record after the last one consumed on the source.

    target_record: fingerprint of the record at target_offset (None when target_offset == target_end).
    source_records: {source offset: fingerprint} around source_offset.
    Returns dict(status, re_read, lost, detail); status exact | re_read | lost | at_end | unverified.
    """
    if target_record is None:
        if source_offset in source_records:
            return dict(status="unverified", re_read=None, lost=None,
                        detail=f"the target ends at {target_end} but the source has records from {source_offset}: the mirror lags")
        if target_previous is not None and source_records.get(source_offset - 1) == target_previous:
            return dict(status="at_end", re_read=0, lost=0, detail="both sides are at their end and their last records match")
        return dict(status="unverified", re_read=None, lost=None, detail="no record at the target position to compare")
    found = sorted((offset for offset, digest in source_records.items() if digest == target_record), key=lambda off: abs(off - source_offset))
    if not found:
        return dict(status="unverified", re_read=None, lost=None,
                    detail=f"the target record at {target_offset} matches no source record near offset {source_offset}")
    match = found[0]
    if match == source_offset:
        return dict(status="exact", re_read=0, lost=0, detail=f"target offset {target_offset} holds source record {source_offset}")
    if match < source_offset:
        return dict(status="re_read", re_read=source_offset - match, lost=0,
                    detail=f"target offset {target_offset} holds source record {match}: {source_offset - match} records re-read")
    return dict(status="lost", re_read=0, lost=match - source_offset,
                detail=f"target offset {target_offset} holds source record {match}: records {source_offset}..{match - 1} would be skipped")


# ----------------------------------------------------------------------------------------------- Kafka I/O


def read_partitions(consumer, partitions, timeout_s, what, start=None, stop=None):
    """Read [start, stop) of each TopicPartition (default: whole partition); returns {tp: [record, ...]}.

    Raises OffsetsError when the records up to `stop` (default: the end offset at the start) do not arrive in time.
    """
    consumer.assign(list(partitions))
    ends = consumer.end_offsets(list(partitions))
    begins = consumer.beginning_offsets(list(partitions))
    wanted = {}
    for tp in partitions:
        first = max(begins[tp], start.get(tp, 0) if start else 0)
        last = min(ends[tp], stop.get(tp, ends[tp]) if stop else ends[tp])
        wanted[tp] = (first, last)
        consumer.seek(tp, first)
    records = {tp: [] for tp in partitions}
    pending = {tp for tp, (first, last) in wanted.items() if first < last}
    deadline = time.monotonic() + timeout_s
    while pending:
        if time.monotonic() > deadline:
            detail = ", ".join(f"{tp.topic}[{tp.partition}] at {consumer.position(tp)} of {wanted[tp][1]}" for tp in sorted(pending))
            raise OffsetsError(f"reading {what} timed out after {timeout_s:.0f} s ({detail}); raise read_timeout or check the brokers")
        for tp, batch in consumer.poll(timeout_ms=500).items():
            last = wanted[tp][1]
            records[tp].extend(record for record in batch if record.offset < last)
            if consumer.position(tp) >= last:
                pending.discard(tp)
        for tp in list(pending):
            if consumer.position(tp) >= wanted[tp][1]:
                pending.discard(tp)
    consumer.unsubscribe()
    return records


def topic_partitions(admin, topic):
    """TopicPartitions of `topic`, or [] when the topic does not exist."""
    metadata = admin.describe_topics([topic])
    for entry in metadata:
        if entry.get("name") == topic and not entry.get("error_code"):
            return sorted(TopicPartition(topic, part["partition_index"]) for part in entry["partitions"])
    return []


def read_checkpoints(connection, source_alias, timeout_s):
    """(found, [Checkpoint], [undecodable message]) from `<source>.checkpoints.internal` on the target."""
    topic = checkpoints_topic(source_alias)
    admin = connection.admin()
    if topic not in admin.list_topics():
        return False, [], []
    return (True,) + _decode_topic(connection, admin, topic, Checkpoint, timeout_s)


def read_offset_syncs(connection, target_alias, timeout_s):
    """(found, [OffsetSync], [undecodable message]) from `mm2-offset-syncs.<target>.internal`."""
    topic = offset_syncs_topic(target_alias)
    admin = connection.admin()
    if topic not in admin.list_topics():
        return False, [], []
    return (True,) + _decode_topic(connection, admin, topic, OffsetSync, timeout_s)


def _decode_topic(connection, admin, topic, record_class, timeout_s):
    consumer = connection.consumer()
    partitions = topic_partitions(admin, topic)
    decoded, bad = [], []
    for tp, records in sorted(read_partitions(consumer, partitions, timeout_s, f"topic {topic}").items()):
        for record in records:
            if record.value is None:
                continue  # tombstone
            try:
                decoded.append(record_class.decode(record.key, record.value))
            except MirrorRecordError as exc:
                bad.append(f"{topic}[{tp.partition}]@{record.offset}: {exc}")
    return decoded, bad


def group_offsets(admin, groups):
    """{group: {(topic, partition): offset}} of committed offsets (offsets < 0 mean none and are dropped)."""
    result = {}
    for group in groups:
        offsets = admin.list_group_offsets({group: None}).get(group, {})
        result[group] = {(tp.topic, tp.partition): meta.offset for tp, meta in offsets.items() if meta is not None and meta.offset >= 0}
    return result


def group_activity(admin, groups):
    """{group: (active, state, member count)} from DescribeGroups."""
    if not groups:
        return {}
    described = admin.describe_groups(list(groups))
    activity = {}
    for group in groups:
        info = described.get(group) or {}
        members = len(info.get("members") or [])
        state = info.get("group_state") or info.get("state") or "Dead"
        activity[group] = (members > 0 or state in _ACTIVE_STATES, state, members)
    return activity


def list_group_ids(admin, patterns, exclude=()):
    names = [group["group_id"] if isinstance(group, dict) else group[0] for group in admin.list_groups()]
    return sorted(name for name in names if matches(name, patterns) and not matches(name, exclude))


def end_offsets(admin, partitions):
    """{(topic, partition): end offset}."""
    if not partitions:
        return {}
    answer = admin.list_partition_offsets({TopicPartition(topic, partition): OffsetSpec.LATEST for topic, partition in partitions})
    return {(tp.topic, tp.partition): value.offset for tp, value in answer.items()}


def commit(admin, group, offsets, metadata):
    """Commit {(topic, partition): offset} for a group without members; raise OffsetsError naming failed partitions."""
    request = {TopicPartition(topic, partition): OffsetAndMetadata(offset, metadata, -1) for (topic, partition), offset in offsets.items()}
    answer = admin.alter_group_offsets(group, request)
    failed = [f"{tp.topic}[{tp.partition}]: {getattr(error, '__name__', error)}" for tp, error in answer.items()
              if error is not None and getattr(error, "errno", 0) != 0]
    if failed:
        raise OffsetsError(f"the target refused the commit for group {group}: {'; '.join(sorted(failed))}. "
                           f"A group with members (or that gained members meanwhile) cannot be moved: stop its consumers and run again")


def collect(target, source, params):
    """Read everything the plan needs. target/source are KafkaConnection (source may be None).

    Returns (rows_in, facts) where facts has checkpoints_topic, checkpoints_found, offset_syncs_topic,
    offset_syncs_found, undecodable, groups (activity).
    """
    timeout_s = params["read_timeout"]
    patterns = compile_patterns(params["groups"])
    exclude = compile_patterns(DEFAULT_GROUPS_EXCLUDE if params.get("groups_exclude") is None else params["groups_exclude"])
    policy = ReplicationPolicy(params["replication_policy"], params["replication_policy_separator"])
    source_alias = params["source_alias"]
    facts = dict(checkpoints_topic=checkpoints_topic(source_alias), offset_syncs_topic=None, offset_syncs_found=None, undecodable=[])

    found, records, bad = read_checkpoints(target, source_alias, timeout_s)
    facts["checkpoints_found"] = found
    facts["undecodable"] += bad
    checkpoints = latest_checkpoints(records, patterns, exclude)

    syncs = None
    if params["offset_syncs"]:
        if not params.get("target_alias"):
            raise OffsetsError("offset_syncs is true but target_alias is not set: the offset-syncs topic is mm2-offset-syncs.<target_alias>.internal")
        location = target if params["offset_syncs_location"] == "target" else source
        facts["offset_syncs_topic"] = offset_syncs_topic(params["target_alias"])
        found_syncs, sync_records, bad = read_offset_syncs(location, params["target_alias"], timeout_s)
        facts["offset_syncs_found"] = found_syncs
        facts["undecodable"] += bad
        syncs = syncs_by_partition(sync_records)

    # Rows: every checkpointed group partition, plus every source group partition when the source is known.
    keys = {}
    for (group, topic, partition), checkpoint in checkpoints.items():
        keys[(group, topic, partition)] = dict(checkpoint=checkpoint, source_topic=policy.upstream_topic(topic))
    if source is not None:
        source_admin = source.admin()
        source_groups = list_group_ids(source_admin, patterns, exclude)
        for group, offsets in group_offsets(source_admin, source_groups).items():
            for (topic, partition), offset in offsets.items():
                if ReplicationPolicy.is_internal(topic):
                    continue
                remote = policy.remote_topic(source_alias, topic)
                entry = keys.setdefault((group, remote, partition), dict(checkpoint=None, source_topic=topic))
                entry["source_offset"] = offset

    target_admin = target.admin()
    groups = sorted({group for group, _topic, _partition in keys})
    existing = set(target_admin.list_topics())
    target_partitions = sorted({(topic, partition) for _group, topic, partition in keys if topic in existing})
    ends = end_offsets(target_admin, target_partitions)
    committed = group_offsets(target_admin, groups)
    activity = group_activity(target_admin, groups)
    facts["groups"] = {group: dict(active=active, state=state, members=members) for group, (active, state, members) in activity.items()}

    rows_in = []
    for (group, topic, partition), entry in sorted(keys.items()):
        source_topic = entry["source_topic"]
        rows_in.append(dict(
            group=group, topic=topic, source_topic=source_topic, partition=partition,
            source_offset=entry.get("source_offset"),
            checkpoint=entry["checkpoint"],
            syncs=None if syncs is None else syncs.get((source_topic, partition), []),
            target_committed=committed.get(group, {}).get((topic, partition)),
            target_end=ends.get((topic, partition)),
            active=activity.get(group, (False,))[0],
        ))
    return rows_in, facts


def verify(target, source, rows, window):
    """Add `verification` to rows that have a source offset and a target position (after commit or already there)."""
    target_consumer = target.consumer()
    source_consumer = source.consumer()
    for row in rows:
        position = row["translated_offset"] if row["action"] in (COMMIT, UP_TO_DATE) else None
        if position is None or row["source_offset"] is None or row["source_topic"] is None:
            continue
        g = row["source_offset"]
        src_tp = TopicPartition(row["source_topic"], row["partition"])
        tgt_tp = TopicPartition(row["topic"], row["partition"])
        source_read = read_partitions(source_consumer, [src_tp], 30, f"source {src_tp.topic}[{src_tp.partition}]",
                                      start={src_tp: max(0, g - window)}, stop={src_tp: g + window + 1})[src_tp]
        source_records = {record.offset: fingerprint(record.key, record.value, record.headers) for record in source_read}
        target_read = read_partitions(target_consumer, [tgt_tp], 30, f"target {tgt_tp.topic}[{tgt_tp.partition}]",
                                      start={tgt_tp: max(0, position - 1)}, stop={tgt_tp: position + 1})[tgt_tp]
        by_offset = {record.offset: fingerprint(record.key, record.value, record.headers) for record in target_read}
        row["verification"] = verify_position(by_offset.get(position), source_records, g, position,
                                              row["target_end_offset"], by_offset.get(position - 1))
    return rows


# ----------------------------------------------------------------------------------------------- module entry


def validate_params(params):
    """Problems with option combinations, as messages (checked before anything is read or changed)."""
    problems = []
    try:
        compile_patterns(params.get("groups") or [])
        compile_patterns(params.get("groups_exclude") or [])
    except OffsetsError as exc:
        problems.append(str(exc))
    if not params.get("groups"):
        problems.append("groups is empty: give at least one regular expression (['.*'] for all groups)")
    if not params.get("source_alias"):
        problems.append("source_alias is empty")
    if params.get("offset_syncs") and not params.get("target_alias"):
        problems.append("offset_syncs needs target_alias (the offset-syncs topic is mm2-offset-syncs.<target_alias>.internal)")
    if params.get("offset_syncs") and params.get("offset_syncs_location") == "source" and not params.get("source"):
        problems.append("offset_syncs with offset_syncs_location=source needs the source connection (option source)")
    if params.get("verify") and not params.get("source"):
        problems.append("verify needs the source connection (option source) to read the records the groups consumed")
    if (params.get("verify_window") or 0) < 1:
        problems.append("verify_window must be at least 1")
    if (params.get("read_timeout") or 0) < 1:
        problems.append("read_timeout must be at least 1 second")
    if params.get("replication_policy") == "default" and not params.get("replication_policy_separator"):
        problems.append("replication_policy_separator must not be empty")
    return problems


def run_offsets(params, check_mode, diff):
    """Plan, apply (unless check mode or apply is false), verify; the module result."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils.kafka_client import KafkaConnection

    with KafkaConnection(params) as target:
        source_conn = KafkaConnection(params["source"]) if params.get("source") else None
        try:
            rows_in, facts = collect(target, source_conn, params)
            rows = plan_offsets(rows_in, allow_rewind=params["allow_rewind"])
            commits = commits_by_group(rows) if params["apply"] else {}
            if commits and not check_mode:
                admin = target.admin()
                for group, offsets in sorted(commits.items()):
                    commit(admin, group, offsets, params["commit_metadata"])
            if params["verify"]:
                verify(target, source_conn, rows, params["verify_window"])
        finally:
            if source_conn is not None:
                source_conn.close()
    result = dict(
        changed=bool(commits),
        offsets=rows,
        groups=summarize(rows),
        committed={group: {f"{topic}:{partition}": offset for (topic, partition), offset in sorted(offsets.items())}
                   for group, offsets in sorted(commits.items())},
        refused=sorted({row["group"] for row in rows if row["action"] == REFUSED_ACTIVE}),
        untranslated=[f"{row['group']} {row['topic']}:{row['partition']}" for row in rows if row["action"] == NO_TRANSLATION],
        checkpoints_found=facts["checkpoints_found"],
        offset_syncs_found=facts["offset_syncs_found"],
        undecodable=facts["undecodable"],
    )
    if diff and params["apply"]:
        result["diff"] = diff_of(rows)
    return result
