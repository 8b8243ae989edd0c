# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which source topics a running MirrorMaker does not replicate yet, and which remote topics have lost their source.

MirrorMaker 2 lists the source's topics when it starts and afterwards only every refresh.topics.interval.seconds
(Kafka's default: 600 s), and MirrorMaker 1 subscribes by pattern, which sees a new topic only at its next metadata
refresh. A topic that appeared since the running MirrorMaker started is therefore not replicated until then, and a
health wait started now may end first. What tells such a topic apart, as read by module kafka_mirror_status:

- a partition with records and no offset sync (MirrorSourceTask writes a sync for the first record it copies of every
  partition), for flows that write offset syncs (not MirrorMaker 1, nor emit.offset-syncs.enabled=false on 3.9+: the
  health plan of module_utils/_mirror/wait says which);
- a remote topic that does not exist (MirrorMaker creates it when it starts replicating the topic);
- a remote topic this run's pre-creation (module kafka_topic's `changes`) created or gave partitions: it exists and may
  be empty, and only a MirrorMaker that lists the source's topics again writes to it.

Remote topics on the target whose source topic is gone (deleted, or no longer matching the flow) are reported only:
MirrorMaker never deletes remote topics, and neither does the role unless told to (kafka_topics_list, state absent).
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ReplicationPolicy

LISTED = 10  # topics named per reason; the rest are counted


def _names(topics):
    topics = sorted(set(topics))
    shown = ", ".join(topics[:LISTED])
    return shown + (" and %d more" % (len(topics) - LISTED) if len(topics) > LISTED else "")


def _grown_or_created(topic_changes):
    """Remote topic names that kafka_topic created or gave more partitions in this run."""
    names = []
    for name, change in (topic_changes or {}).items():
        before, after = change.get("before") or {}, change.get("after") or {}
        if change.get("action") == "create" or (change.get("action") == "update" and before.get("partitions") != after.get("partitions")):
            names.append(name)
    return names


def _reasons(status, writes_syncs, changed_remote):
    partitions = status.get("partitions") or []
    reasons = []
    if writes_syncs:
        unsynced = [p["topic"] for p in partitions if p["has_records"] and not p["last_offset_sync"]]
        if unsynced:
            reasons.append("%d source topic(s) with records and no offset sync: %s" % (len(set(unsynced)), _names(unsynced)))
    missing = [p["remote_topic"] for p in partitions if not p["remote_topic_exists"]]
    if missing:
        reasons.append("%d remote topic(s) missing: %s" % (len(set(missing)), _names(missing)))
    prepared = sorted({p["remote_topic"] for p in partitions} & set(changed_remote))
    if prepared:
        reasons.append("%d remote topic(s) created or given partitions by this run's pre-creation: %s" % (len(prepared), _names(prepared)))
    return reasons


def _without_source(status, listed, policy):
    """Remote topics of this flow on the target (`listed`: the names under the flow's source alias prefix) that are not
    the remote topic of any source topic the flow replicates now; MirrorMaker's internal and heartbeats topics aside, as
    the replication `policy` tells them (primary.app-heartbeats is data, primary.heartbeats is not)."""
    replicated = {partition["remote_topic"] for partition in status.get("partitions") or []}
    data = {topic for topic in listed if not (policy.is_internal_topic(topic) or policy.is_heartbeats_topic(topic))}
    return sorted(data - replicated)


def pickup_plan(statuses, remote_listings, topic_changes, flows_with_syncs, policy=None):
    """Per flow what a running MirrorMaker misses (`reasons`, empty when nothing) and the remote topics without source.

    `statuses`: kafka_mirror_status results (`flow`, `partitions`); `remote_listings`: {flow: [topic names on the target
    under the flow's source alias]} (default policy; identity names carry no alias, so no flow has an entry there);
    `topic_changes`: kafka_topic's `changes` of this run; `flows_with_syncs`: the flows whose MirrorMaker writes offset syncs;
    `policy`: the flows' _mm2.naming.ReplicationPolicy (default: the default policy of the newest release).
    """
    policy = policy or ReplicationPolicy()
    changed_remote = _grown_or_created(topic_changes)
    flows = {}
    for status in statuses:
        flows[status["flow"]] = {
            "reasons": _reasons(status, status["flow"] in flows_with_syncs, changed_remote),
            "without_source": _without_source(status, (remote_listings or {}).get(status["flow"], []), policy),
        }
    return {
        "flows": flows,
        "restart_reasons": ["%s: %s" % (flow, "; ".join(plan["reasons"])) for flow, plan in flows.items() if plan["reasons"]],
        "without_source": ["%s (%s)" % (remote, flow) for flow, plan in flows.items() for remote in plan["without_source"]],
    }
