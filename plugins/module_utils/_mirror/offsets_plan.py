# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failover plan of kafka_mirror_offsets (pure, no I/O): one row per (group, target topic, partition) with its
translation (mm2_offset_translation), the preview of what the group reads again or skips (mm2_failover_preview), and
what to do on the target (decide), with the reason.

Actions: commit, up_to_date, refused_active, would_rewind, target_behind, would_skip, no_translation; only commit
changes anything.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offset_translation import SyncHistory, translate
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.flow_options import flow_names
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import matches_any, pattern_problems

COMMIT = "commit"
UP_TO_DATE = "up_to_date"
REFUSED_ACTIVE = "refused_active"
WOULD_REWIND = "would_rewind"
TARGET_BEHIND = "target_behind"
WOULD_SKIP = "would_skip"
NO_TRANSLATION = "no_translation"
ACTIONS = (COMMIT, UP_TO_DATE, REFUSED_ACTIVE, WOULD_REWIND, TARGET_BEHIND, WOULD_SKIP, NO_TRANSLATION)


class OffsetsError(Exception):
    """Reading or committing offsets failed, or the options are inconsistent; the message says what, where and what to do."""


def decide(translated, target_committed, target_end, active, allow_rewind, skipped=0, missing=0, exact=None,
           floor="MirrorMaker's translation"):
    """(action, reason) for one row; see ACTIONS. Order: no translation, target behind (by offsets, then by the preview's
    records), skip, up to date, rewind, active, commit. `exact`: the proven exact position (_mirror.failover_preview, or
    _mirror.mm1_offsets' search), which is committed instead of the translated offset when given; `floor` names the
    translated offset in the reason (a MirrorMaker 1 flow has no translation: its floor is the start of the partition)."""
    if translated is None:
        return NO_TRANSLATION, "no translation: nothing is committed for this partition"
    if target_end is None:
        return NO_TRANSLATION, "the topic partition does not exist on the target"
    if translated > target_end:
        return TARGET_BEHIND, (f"translated offset {translated} is past the target end offset {target_end}: "
                               f"the mirror has not copied those records yet (wait for lag 0)")
    if missing:
        return TARGET_BEHIND, (f"the source has {missing} record(s) after the last one on the target: the mirror has not copied "
                               f"them (wait for lag 0; with exactly-once MirrorMaker, transaction markers make a lag computed from "
                               f"offsets read 0 too early)")
    if skipped:
        return WOULD_SKIP, (f"at target offset {translated} the group would skip {skipped} record(s) it has not consumed: "
                            f"nothing is committed; check the offset syncs and checkpoints (a stale mm2-offset-syncs topic "
                            f"left from an earlier deployment does this) and set the offset by hand")
    offset, which = (translated, "translated") if exact is None else (exact, "exact")
    if target_committed is not None and target_committed == offset:
        return UP_TO_DATE, f"the target group is already at the {which} offset"
    if target_committed is not None and target_committed > offset and not allow_rewind:
        return WOULD_REWIND, (f"the target group is at {target_committed}, ahead of the {which} {offset}; "
                              f"moving it back re-delivers records: set allow_rewind to do it")
    if active:
        return REFUSED_ACTIVE, "the group has active members on the target: stop its consumers first"
    proof = "" if exact is None else f" ({floor}, proven exact)" if exact == translated else \
        f" (exact; {floor}: {translated})"
    return COMMIT, (f"commit {offset}" + proof
                    + (f" (was {target_committed})" if target_committed is not None else " (no committed offset yet)"))


def plan_offsets(rows_in, allow_rewind=False, version=None):
    """rows_in: dicts with group, topic, source_topic, partition, source_offset, checkpoint, syncs ([(u, d)] in topic
    order, or None when not read), simple_group, target_committed, target_end, active. Returns plan rows (plain dicts, sorted)."""
    rows = []
    for item in rows_in:
        syncs = item.get("syncs")
        history = None if syncs is None else SyncHistory.of(version, syncs)
        translation = translate(item.get("source_offset"), item.get("checkpoint"), history, version, item.get("simple_group", False))
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
            exact_offset=None,
            commit_offset=translation.offset,
            basis=translation.basis,
            target_committed_offset=item.get("target_committed"),
            target_end_offset=item.get("target_end"),
            active=bool(item.get("active")),
            translation=translation.reason,
        ))
        decide_row(rows[-1], allow_rewind)
    rows.sort(key=lambda row: (row["group"], row["topic"], row["partition"]))
    return rows


def decide_row(row, allow_rewind, skipped=0, missing=0):
    """Set the row's action and reason (again after a preview counted skipped or missing records, or proved an exact
    position: row["exact_offset"]); row["commit_offset"] is what a commit sets, the exact position where proven."""
    floor = "the partition's start" if row.get("basis") == "partition_start" else "MirrorMaker's translation"
    action, why = decide(row["translated_offset"], row["target_committed_offset"], row["target_end_offset"], row["active"],
                         allow_rewind, skipped, missing, row.get("exact_offset"), floor)
    row["commit_offset"] = row["translated_offset"] if row.get("exact_offset") is None else row["exact_offset"]
    row["action"] = action
    row["reason"] = row["translation"] if action == NO_TRANSLATION and row["translated_offset"] is None else why
    return row


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
        if actions.get(WOULD_SKIP):
            entry["status"] = WOULD_SKIP
        elif actions.get(REFUSED_ACTIVE):
            entry["status"] = REFUSED_ACTIVE
        elif actions.get(COMMIT):
            entry["status"] = COMMIT
        elif set(actions) == {UP_TO_DATE}:
            entry["status"] = UP_TO_DATE
        else:
            entry["status"] = "incomplete"
    return [groups[name] for name in sorted(groups)]


def commits_by_group(rows):
    """{group: {(topic, partition): offset}} for the rows to commit; a group with a partition that would skip records
    is left whole where it is (its consumers would otherwise resume some partitions moved and that one not)."""
    skipping = {row["group"] for row in rows if row["action"] == WOULD_SKIP}
    commits = {}
    for row in rows:
        if row["action"] == COMMIT and row["group"] not in skipping:
            commits.setdefault(row["group"], {})[(row["topic"], row["partition"])] = row["commit_offset"]
    return commits


def diff_of(rows):
    """Ansible diff: each group's committed target offsets before and after the commits."""
    before, after = {}, {}
    commits = commits_by_group(rows)
    for row in rows:
        if (row["topic"], row["partition"]) not in commits.get(row["group"], {}):
            continue
        key = f"{row['topic']}:{row['partition']}"
        before.setdefault(row["group"], {})[key] = row["target_committed_offset"]
        after.setdefault(row["group"], {})[key] = row["commit_offset"]
    return dict(before=before, after=after)


def latest_checkpoints(records, group_patterns, exclude=()):
    """{(group, topic, partition): Checkpoint}, last record wins (the topic is compacted by that key)."""
    latest = {}
    for checkpoint in records:
        if matches_any(checkpoint.group, group_patterns) and not matches_any(checkpoint.group, exclude):
            latest[(checkpoint.group, checkpoint.topic, checkpoint.partition)] = checkpoint
    return latest


def syncs_by_partition(records):
    """{(source topic, partition): [(upstream, downstream), ...]} from offset-sync records, in topic order."""
    syncs = {}
    for sync in records:
        syncs.setdefault((sync.topic, sync.partition), []).append((sync.upstream_offset, sync.downstream_offset))
    return syncs


def option_problems(params):
    """Problems with option values and combinations that the argument spec cannot express, as messages; the flow options'
    are _mm2.flow_options' (the same check as kafka_mirror_status and kafka_mirror_topic_drift_info)."""
    problems = pattern_problems("groups", params.get("groups")) + pattern_problems("groups_exclude", params.get("groups_exclude"))
    if not params.get("groups"):
        problems.append("groups is empty: give at least one regular expression (['.*'] for all groups)")
    # Checked here rather than with required_if, which takes an option given as null for one that is set.
    if params.get("offset_syncs") and not params.get("target_alias"):
        problems.append("offset_syncs needs target_alias (it names the offset-syncs topic)")
    if params.get("verify") and not params.get("source"):
        problems.append("verify needs the source connection (option source) to read the records the groups consumed")
    if params.get("offset_syncs") and params.get("offset_syncs_topic_location") == "source" and not params.get("source"):
        problems.append("offset_syncs with offset_syncs_topic_location=source needs the source connection (option source)")
    if params.get("mirrormaker1_group") is not None:
        if not params["mirrormaker1_group"].strip():
            problems.append("mirrormaker1_group is empty: give MirrorMaker 1's group.id (mirrormaker2_mm1_group_id)")
        if not params.get("source"):
            problems.append("mirrormaker1_group needs the source connection (option source): a MirrorMaker 1 flow's positions "
                            "come from the groups' offsets and the records on the source")
        if params.get("offset_syncs"):
            problems.append("mirrormaker1_group with offset_syncs=true: MirrorMaker 1 writes no offset syncs, set offset_syncs to false")
    for name, least in (("verify_window", 1), ("read_timeout", 1)):
        if (params.get(name) or 0) < least:
            problems.append(f"{name} must be at least {least}")
    return problems + flow_names(params).problems
