# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kafka I/O and orchestration of kafka_mirror_offsets: read MirrorMaker 2's internal topics and both clusters' groups,
plan (mm2_offsets_plan), preview with the records (mm2_failover_preview), commit.

Commits use OffsetCommit through the admin client (AlterConsumerGroupOffsets semantics): only groups without members
are touched, and the broker itself refuses a commit to a group that has members.
"""
from __future__ import annotations

import time

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaError
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.internal_topic_reader import InternalTopicReader
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_admin import existing_partitions
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.failover_preview import COUNTED, fingerprint, preview
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.mm1_offsets import plan_topic
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offset_translation import parse_version
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets_plan import (
    COMMIT,
    NO_TRANSLATION,
    REFUSED_ACTIVE,
    UP_TO_DATE,
    WOULD_REWIND,
    WOULD_SKIP,
    OffsetsError,
    commits_by_group,
    decide_row,
    diff_of,
    latest_checkpoints,
    plan_offsets,
    summarize,
    syncs_by_partition,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.flow_options import flow_names
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import DEFAULT_GROUPS_EXCLUDE, compile_patterns, matches_any
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint, OffsetSync

try:
    from kafka.admin import OffsetSpec
    from kafka.structs import OffsetAndMetadata, TopicPartition
except ImportError:
    # _kafka.client.ensure_kafka_python() reports the missing library before any of this is used.
    OffsetSpec = OffsetAndMetadata = TopicPartition = None

# Group states in which the group has (or is getting) members (DescribeGroups, ListGroups v4+).
_ACTIVE_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance", "AwaitingSync")
# Actions whose rows have a position on the target worth previewing.
_PREVIEWED = (COMMIT, UP_TO_DATE, REFUSED_ACTIVE, WOULD_REWIND)


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


def read_internal_topic(connection, topic, record_class, timeout_s):
    """(found, [decoded record], [undecodable message]) of one MirrorMaker internal topic, read to its end (_mm2.internal_records'
    reader and rule); raises OffsetsError when it is not read to its end within timeout_s."""
    if topic not in connection.admin().list_topics():
        return False, [], []
    reader = InternalTopicReader(connection, topic, timeout_s=timeout_s)
    decoded, bad = reader.new_decoded(record_class)
    if reader.behind:
        detail = ", ".join(f"{tp.topic}[{tp.partition}] at {position} of {end}" for tp, (position, end) in reader.behind.items())
        raise OffsetsError(f"reading topic {topic} timed out after {timeout_s:.0f} s ({detail}); raise read_timeout or check the brokers")
    return True, decoded, bad


def group_offsets(admin, groups):
    """{group: {(topic, partition): offset}} of committed offsets (offsets < 0 mean none and are dropped)."""
    result = {}
    for group in groups:
        offsets = admin.list_group_offsets({group: None}).get(group, {})
        result[group] = {(tp.topic, tp.partition): meta.offset for tp, meta in offsets.items() if meta is not None and meta.offset >= 0}
    return result


def listed_groups(admin):
    """{group id: ListGroups entry (dict with protocol_type and, from v4, group_state)}."""
    return {group["group_id"]: group for group in admin.list_groups()}


def group_activity(admin, groups, warnings):
    """{group: (active, state, member count)}. When DescribeGroups fails (an error, or a reply kafka-python cannot
    decode: ValueError), the states come from ListGroups and the member counts are None; the broker still refuses a
    commit to a group with members."""
    if not groups:
        return {}
    try:
        described = admin.describe_groups(list(groups))
    except (KafkaError, ValueError) as exc:
        warnings.append(f"DescribeGroups failed on the target ({exc.__class__.__name__}: {exc}): group states come from "
                        f"ListGroups, member counts are unknown")
        listed = listed_groups(admin)
        return {group: ((listed.get(group) or {}).get("group_state") in _ACTIVE_STATES,
                        (listed.get(group) or {}).get("group_state") or "unknown", None) for group in groups}
    activity = {}
    for group in groups:
        info = described.get(group) or {}
        members = len(info.get("members") or [])
        state = info.get("group_state") or info.get("state") or "Dead"
        activity[group] = (members > 0 or state in _ACTIVE_STATES, state, members)
    return activity


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

    Returns (rows_in, facts) where facts has checkpoints_found, offset_syncs_found, undecodable, warnings, syncs and
    groups (activity on the target).
    """
    timeout_s = params["read_timeout"]
    patterns = compile_patterns(params["groups"], "groups")
    exclude = compile_patterns(DEFAULT_GROUPS_EXCLUDE if params.get("groups_exclude") is None else params["groups_exclude"], "groups_exclude")
    flow = flow_names(params)  # the module checked these options already (option_problems), with the same owner
    if flow.problems:
        raise OffsetsError("invalid options: " + "; ".join(flow.problems))
    names = flow.names
    policy = names.policy
    facts = dict(offset_syncs_found=None, undecodable=[], warnings=[], syncs=None)

    found, records, bad = read_internal_topic(target, names.checkpoints_topic, Checkpoint, timeout_s)
    facts["checkpoints_found"] = found
    facts["undecodable"] += bad
    checkpoints = latest_checkpoints(records, patterns, exclude)

    if params["offset_syncs"]:
        location = target if params["offset_syncs_topic_location"] == "target" else source
        found_syncs, sync_records, bad = read_internal_topic(location, names.offset_syncs_topic, OffsetSync, timeout_s)
        facts["offset_syncs_found"] = found_syncs
        facts["undecodable"] += bad
        facts["syncs"] = syncs_by_partition(sync_records)

    # Rows: every checkpointed group partition, plus every source group partition when the source is known.
    keys = {}
    for (group, topic, partition), checkpoint in checkpoints.items():
        keys[(group, topic, partition)] = dict(checkpoint=checkpoint, source_topic=policy.upstream_topic(topic))
    simple = set()
    if source is not None:
        source_admin = source.admin()
        listed = listed_groups(source_admin)
        source_groups = sorted(name for name in listed if matches_any(name, patterns) and not matches_any(name, exclude))
        simple = {name for name in source_groups if not listed[name].get("protocol_type")}
        for group, offsets in group_offsets(source_admin, source_groups).items():
            for (topic, partition), offset in offsets.items():
                if policy.is_internal_topic(topic):
                    continue
                remote = names.remote_topic(topic)
                entry = keys.setdefault((group, remote, partition), dict(checkpoint=None, source_topic=topic))
                entry["source_offset"] = offset

    target_admin = target.admin()
    groups = sorted({group for group, _topic, _partition in keys})
    existing = set(target_admin.list_topics())
    # A remote topic may lack partitions its source topic was grown by: they have no end on the target yet, as a missing topic.
    on_target = existing_partitions(target_admin, {topic for _group, topic, _partition in keys} & existing)
    target_partitions = sorted({(topic, partition) for _group, topic, partition in keys if (topic, partition) in on_target})
    ends = end_offsets(target_admin, target_partitions)
    committed = group_offsets(target_admin, groups)
    activity = group_activity(target_admin, groups, facts["warnings"])
    facts["groups"] = {group: dict(active=active, state=state, members=members) for group, (active, state, members) in activity.items()}

    rows_in = []
    for (group, topic, partition), entry in sorted(keys.items()):
        source_topic = entry["source_topic"]
        rows_in.append(dict(
            group=group, topic=topic, source_topic=source_topic, partition=partition,
            source_offset=entry.get("source_offset"),
            checkpoint=entry["checkpoint"],
            syncs=None if facts["syncs"] is None else facts["syncs"].get((source_topic, partition), []),
            simple_group=group in simple,
            target_committed=committed.get(group, {}).get((topic, partition)),
            target_end=ends.get((topic, partition)),
            active=activity.get(group, (False,))[0],
        ))
    return rows_in, facts


def _topic_records(consumer, topic, partitions, timeout_s, what):
    """({partition: beginning offset}, {partition: end offset}, {partition: [record]}) of a whole topic."""
    tps = [TopicPartition(topic, partition) for partition in sorted(partitions)]
    if not tps:
        return {}, {}, {}
    begins = consumer.beginning_offsets(tps)
    ends = consumer.end_offsets(tps)
    records = read_partitions(consumer, tps, timeout_s, what)
    return ({tp.partition: begins[tp] for tp in tps}, {tp.partition: ends[tp] for tp in tps},
            {tp.partition: records[tp] for tp in tps})


def _mm1_digests(records_by_partition, with_time):
    """{partition: [(offset, fingerprint)]}: key, value and headers, and the timestamp when `with_time`."""
    def digest(record):
        headers = list(record.headers or [])
        if with_time:
            headers.append(("\x00timestamp", str(record.timestamp).encode("ascii")))
        return fingerprint(record.key, record.value, headers)
    return {partition: [(record.offset, digest(record)) for record in records] for partition, records in records_by_partition.items()}


def collect_mm1(target, source, params):
    """The plan rows of a MirrorMaker 1 flow (_mirror.mm1_offsets) and the facts: every group of the source matching the
    options (MirrorMaker 1's own group left out), every topic it committed offsets for, read whole on both sides."""
    timeout_s = params["read_timeout"]
    patterns = compile_patterns(params["groups"], "groups")
    exclude = compile_patterns(DEFAULT_GROUPS_EXCLUDE if params.get("groups_exclude") is None else params["groups_exclude"], "groups_exclude")
    facts = dict(checkpoints_found=None, offset_syncs_found=None, undecodable=[], warnings=[], syncs=None)
    source_admin, target_admin = source.admin(), target.admin()
    listed = listed_groups(source_admin)
    mm1_group = params["mirrormaker1_group"]
    names = sorted(name for name in listed if name != mm1_group and matches_any(name, patterns) and not matches_any(name, exclude))
    committed = {group: offsets for group, offsets in group_offsets(source_admin, names).items() if offsets}
    topics = sorted({topic for offsets in committed.values() for topic, _p in offsets
                     if not (topic.startswith("__") or topic.startswith("."))})
    source_partitions = existing_partitions(source_admin, topics)
    existing = set(target_admin.list_topics())
    target_partitions = existing_partitions(target_admin, set(topics) & existing)
    groups = sorted(committed)
    target_committed = group_offsets(target_admin, groups)
    activity = group_activity(target_admin, groups, facts["warnings"])
    facts["groups"] = {group: dict(active=active, state=state, members=members) for group, (active, state, members) in activity.items()}
    source_consumer, target_consumer = source.consumer(), target.consumer()
    read = {}
    for topic in topics:
        begins, _ends, source_records = _topic_records(source_consumer, topic, {p for t, p in source_partitions if t == topic},
                                                       timeout_s, f"source topic {topic}")
        on_target = None
        if topic in existing:
            t_begins, t_ends, target_records = _topic_records(target_consumer, topic, {p for t, p in target_partitions if t == topic},
                                                              timeout_s, f"target topic {topic}")
            with_time = all(record.timestamp_type == 0 for records in list(source_records.values()) + list(target_records.values())
                            for record in records)
            digests = _mm1_digests(target_records, with_time)
            on_target = {p: (t_begins[p], t_ends[p], digests[p]) for p in digests}
        else:
            with_time = True
        read[topic] = (begins, _mm1_digests(source_records, with_time), on_target)
    rows = []
    for group in groups:
        for topic in sorted({topic for topic, _p in committed[group]} & set(read)):
            begins, source_digests, on_target = read[topic]
            mine = {p: offset for (t, p), offset in committed[group].items() if t == topic}
            theirs = {p: offset for (t, p), offset in target_committed.get(group, {}).items() if t == topic}
            rows.extend(plan_topic(group, topic, mine, begins, source_digests, on_target, theirs, activity[group][0],
                                   params["allow_rewind"]))
    rows.sort(key=lambda row: (row["group"], row["topic"], row["partition"]))
    return rows, facts


def _fingerprints(consumer, tp, start, stop, timeout_s, what):
    records = read_partitions(consumer, [tp], timeout_s, what, start={tp: max(0, start)}, stop={tp: stop})[tp]
    return [(record.offset, fingerprint(record.key, record.value, record.headers)) for record in records]


def _preview_within(target_consumer, source_consumer, row, window, syncs, timeout_s):
    """(preview, covered) of one row read with `window`: the source records from g - window to g + 2 * window, the target's
    from the translated position to 2 * window after it; covered when both reads took their whole partitions (a larger
    window reads nothing more)."""
    position, g = row["translated_offset"], row["source_offset"]
    src_tp = TopicPartition(row["source_topic"], row["partition"])
    tgt_tp = TopicPartition(row["topic"], row["partition"])
    source_begin = source_consumer.beginning_offsets([src_tp])[src_tp]
    source_end = source_consumer.end_offsets([src_tp])[src_tp]
    source_records = _fingerprints(source_consumer, src_tp, g - window, g + 2 * window, timeout_s, f"source {src_tp.topic}[{src_tp.partition}]")
    scan_stop = position + 2 * window
    around = _fingerprints(target_consumer, tgt_tp, position - 1, scan_stop, timeout_s, f"target {tgt_tp.topic}[{tgt_tp.partition}]")
    before = [digest for offset, digest in around if offset < position]
    later_rewind = any(downstream >= scan_stop and upstream < g
                       for upstream, downstream in (syncs or {}).get((row["source_topic"], row["partition"]), []))
    result = preview(g, position, source_records, [item for item in around if item[0] >= position], row["target_end_offset"],
                     source_end, scanned_to_end=scan_stop >= row["target_end_offset"], later_rewind=later_rewind,
                     previous_target=before[-1] if before else None)
    covered = g - window <= source_begin and g + 2 * window >= source_end and scan_stop >= row["target_end_offset"]
    return result, covered


def preview_rows(target, source, rows, window, syncs, timeout_s, allow_rewind, window_max=None, exact=True):
    """Add `preview` (status, re_read, skipped, missing, complete, detail, exact_offset, re_read_at_exact, window) to every row
    with a source offset and a position on the target, from the records around it; a row that would skip records becomes
    would_skip, one whose records are not all on the target target_behind. Where the records do not settle it (unverified),
    the window grows fourfold, up to `window_max` (or the whole partitions). With `exact`, a row whose exact position is
    proven commits it (row exact_offset, commit_offset); its `re_read` is what the committed position reads again."""
    target_consumer = target.consumer()
    source_consumer = source.consumer()
    window_max = max(window, window_max or window)
    for row in rows:
        if row["action"] not in _PREVIEWED or row["source_offset"] is None or row["source_topic"] is None:
            continue
        used = window
        result, covered = _preview_within(target_consumer, source_consumer, row, used, syncs, timeout_s)
        while result.status not in COUNTED and not covered and used < window_max:
            used = min(window_max, used * 4)
            result, covered = _preview_within(target_consumer, source_consumer, row, used, syncs, timeout_s)
        if result.status not in COUNTED:
            result = result._replace(detail=result.detail + (
                f"; read with a window of {used} records ({'the whole partitions' if covered else 'verify_window_max'}): "
                f"MirrorMaker's position is committed, which never skips, and an unknown number of records may be read again"))
        row["preview"] = dict(result._asdict(), window=used)
        proven = exact and result.exact_offset is not None
        row["exact_offset"] = result.exact_offset if proven else None
        row["re_read"] = result.re_read_at_exact if proven else result.re_read
        row["skipped"] = result.skipped
        decide_row(row, allow_rewind, skipped=result.skipped or 0, missing=result.missing or 0)
    return rows


def run_offsets(params, check_mode, diff):
    """Plan, preview (verify), apply (unless check mode or apply is false); the module result.

    A row that would skip records is never committed, in either mode."""
    version = parse_version(params.get("mirrormaker_version"))
    with KafkaConnection(params) as target:
        source_conn = KafkaConnection(params["source"]) if params.get("source") else None
        try:
            if params.get("mirrormaker1_group"):
                # MirrorMaker 1: no translation to preview; the plan is the records' search (_mirror.mm1_offsets).
                rows, facts = collect_mm1(target, source_conn, params)
                if params["position"] == "translated":
                    for row in rows:
                        row["exact_offset"] = None
                        if row.get("preview"):
                            row["re_read"] = row["preview"]["re_read"]
                        decide_row(row, params["allow_rewind"], missing=(row.get("preview") or {}).get("missing") or 0)
            else:
                rows_in, facts = collect(target, source_conn, params)
                rows = plan_offsets(rows_in, allow_rewind=params["allow_rewind"], version=version)
            if params["verify"] and not params.get("mirrormaker1_group"):
                preview_rows(target, source_conn, rows, params["verify_window"], facts["syncs"], params["read_timeout"],
                             params["allow_rewind"], params["verify_window_max"], params["position"] == "exact")
            commits = commits_by_group(rows) if params["apply"] else {}
            if commits and not check_mode:
                admin = target.admin()
                for group, offsets in sorted(commits.items()):
                    commit(admin, group, offsets, params["commit_metadata"])
        finally:
            if source_conn is not None:
                source_conn.close()
    counted = [row for row in rows if row.get("preview") and row["preview"]["status"] in COUNTED]
    result = dict(
        changed=bool(commits),
        offsets=rows,
        groups=summarize(rows),
        committed={group: {f"{topic}:{partition}": offset for (topic, partition), offset in sorted(offsets.items())}
                   for group, offsets in sorted(commits.items())},
        refused=sorted({row["group"] for row in rows if row["action"] == REFUSED_ACTIVE}),
        untranslated=[f"{row['group']} {row['topic']}:{row['partition']}" for row in rows if row["action"] == NO_TRANSLATION],
        would_skip=[f"{row['group']} {row['topic']}:{row['partition']}: {row['preview']['detail']}" for row in rows
                    if row["action"] == WOULD_SKIP],
        preview_totals=dict(partitions=len(counted), re_read=sum(row["re_read"] for row in counted),
                            re_read_translated=sum(row["preview"]["re_read"] for row in counted),
                            exact=sum(1 for row in counted if row["exact_offset"] is not None),
                            skipped=sum(row["preview"]["skipped"] for row in counted),
                            unverified=sum(1 for row in rows if row.get("preview") and row["preview"]["status"] not in COUNTED)),
        mirrormaker_version=str(version) if version else None,
        checkpoints_found=facts["checkpoints_found"],
        offset_syncs_found=facts["offset_syncs_found"],
        undecodable=facts["undecodable"],
        warnings=facts["warnings"],
    )
    if diff and params["apply"]:
        result["diff"] = diff_of(rows)
    return result
