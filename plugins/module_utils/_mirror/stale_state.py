# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 2 state that cannot belong to the current clusters: offset syncs and checkpoints an earlier deployment left.

Pure rules over what _mirror.status.FlowStatus reads for kafka_mirror_status (and, through that module, the preflight role):
one flow's offset syncs in the order of their topic (fed to SyncTrail), the latest checkpoint of each group partition, the
topics that exist on each side, and the remote partitions' end offsets read AFTER the syncs and checkpoints (an end offset
only grows, so nothing read before it can legitimately lie beyond it).

The evidence, read in Apache Kafka's connect/mirror sources:
- An offset sync (u, d) names the target offset d of a record MirrorMaker wrote and the target acknowledged
  (MirrorSourceTask.commitRecord), so while that remote topic lives its end is above d. A latest sync at or beyond the end
  was written for an earlier incarnation of the remote topic (deleted and created again, or the target cluster rebuilt).
- A checkpoint's target offset is a translation with such a sync: at most d + 1 from 3.4.1 (OffsetSyncStore), so beyond
  the end it is stale. Before 3.4.1 it is d + (g - u), which runs ahead of the end while the copy is behind the group, so
  there it is only a warning.
- MirrorSourceTask writes a sync when the target offset goes back (a truncated downstream topic): in one partition's syncs a
  target offset below the previous one while the source offset went on means the remote topic was recreated while
  MirrorMaker ran. OffsetSyncStore keeps the older syncs (it clears them only when the source offset goes back), so until
  MirrorMaker restarts it translates source offsets below the new sync into the old topic, and from 3.4.1 a checkpoint
  never moves back (MirrorCheckpointTask.checkpointIsMoreRecent): an old checkpoint ahead of the new topic stays.
- Syncs and checkpoints of topics that no longer exist translate nothing; a topic created again under that name would
  inherit them.
Severity: an error where a translation (checkpoints, sync.group.offsets, a failover) would land on the wrong record,
otherwise a warning (_mm2.findings).
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offset_translation import BOUNDED_HISTORY_SINCE
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.findings import ERROR, WARNING, finding

SYNCS_CHECK, CHECKPOINTS_CHECK = "stale_offset_syncs", "stale_checkpoints"
LISTED = 5  # partitions named in one message; the rest are counted


class SyncTrail:
    """One flow's offset syncs as the stale-state rules need them, fed in the order of the offset-syncs topic."""

    def __init__(self):
        self.latest = {}  # (source topic, partition) -> (upstream, downstream) of the newest sync
        self.recreations = {}  # (source topic, partition) -> ((u, d) before, (u, d) after) of the latest downstream rewind

    def add(self, sync):
        key = (sync.topic, sync.partition)
        current = (sync.upstream_offset, sync.downstream_offset)
        previous = self.latest.get(key)
        if previous is not None:
            if current[0] < previous[0]:
                # MirrorMaker copies again from an earlier source offset: OffsetSyncStore drops every older sync.
                self.recreations.pop(key, None)
            elif current[1] < previous[1]:
                self.recreations[key] = (previous, current)
        self.latest[key] = current


def _listed(items):
    shown = "; ".join(items[:LISTED])
    return shown + ("; and %d more" % (len(items) - LISTED) if len(items) > LISTED else "")


def _delete_fix(topic, cluster, after):
    return ("stop MirrorMaker 2, delete %s on %s (kafka-topics.sh --bootstrap-server <%s brokers> --delete --topic %s), then start it "
            "again: %s" % (topic, cluster, cluster, topic, after))


def _syncs_findings(names, trail, source_topics, target_ends, version):
    on_cluster = names.source_alias if names.offset_syncs_location == "source" else names.target_alias
    beyond, recreated, gone_source, gone_remote = [], [], [], []
    for (topic, partition), (upstream, downstream) in sorted(trail.latest.items()):
        remote = names.remote_topic(topic)
        end = target_ends.get((remote, partition))
        if topic not in source_topics:
            gone_source.append("%s[%d]" % (topic, partition))
        elif end is None:
            gone_remote.append("%s[%d] (of %s)" % (remote, partition, topic))
        elif downstream >= end:
            beyond.append("%s[%d]: sync %d -> %d, but %s[%d] ends at %d" % (topic, partition, upstream, downstream, remote, partition, end))
        elif (topic, partition) in trail.recreations:
            (u_before, d_before), (u_after, d_after) = trail.recreations[(topic, partition)]
            recreated.append("%s[%d]: sync %d -> %d, then %d -> %d" % (topic, partition, u_before, d_before, u_after, d_after))
    topic = names.offset_syncs_topic
    restart = "it creates the topic again and writes a new sync for each partition with the next record it copies"
    findings = []
    if beyond:
        findings.append(finding(
            ERROR, SYNCS_CHECK, on_cluster,
            "%s on %s holds offset syncs whose target offset is at or beyond the end of the remote partition, so they were written "
            "for an earlier incarnation of the remote topic (deleted and created again, or %s rebuilt); MirrorMaker translates the "
            "groups' offsets with them, so checkpoints, synced group offsets and a failover land beyond the end: %s"
            % (topic, on_cluster, names.target_alias, _listed(beyond)),
            _delete_fix(topic, on_cluster, restart + "; the records copied to the old topic are in the new one only if MirrorMaker "
                        "copies them again (mirror_validation lists the missing ones)")))
    if recreated:
        # Before 3.4.1 OffsetSyncStore keeps only the latest sync and translates nothing below it.
        below = ("MirrorMaker %s translates no group offset below it" % (version,) if version is not None and version < BOUNDED_HISTORY_SINCE
                 else "until MirrorMaker restarts it translates group offsets below it with the old topic's syncs")
        findings.append(finding(
            WARNING, SYNCS_CHECK, on_cluster,
            "%s on %s shows remote topics recreated while MirrorMaker ran (the target offset went back while the source offset went "
            "on): %s; the records before the second sync's source offset were copied to the old topic only, and %s"
            % (topic, on_cluster, _listed(recreated), below),
            _delete_fix(topic, on_cluster, restart)))
    if gone_source or gone_remote:
        parts = (["topics that no longer exist on %s: %s" % (names.source_alias, _listed(gone_source))] if gone_source else []) + \
                (["remote topics that do not exist on %s: %s" % (names.target_alias, _listed(gone_remote))] if gone_remote else [])
        findings.append(finding(
            WARNING, SYNCS_CHECK, on_cluster,
            "%s on %s holds offset syncs for %s; they translate nothing, and a topic created again under that name inherits them "
            "until MirrorMaker copies a record of it" % (topic, on_cluster, " and for ".join(parts)),
            _delete_fix(topic, on_cluster, restart)))
    return findings


def _checkpoints_findings(mirror_filter, trail, checkpoints, source_topics, target_ends, version):
    names = mirror_filter.names
    policy = names.policy
    beyond, before_recreation, gone = [], [], []
    for checkpoint in sorted(checkpoints):
        upstream_topic = policy.upstream_topic(checkpoint.topic)
        if upstream_topic is None or not mirror_filter.replicates_topic(upstream_topic) or mirror_filter.is_heartbeats(upstream_topic):
            continue
        where = "group %s %s[%d]" % (checkpoint.group, checkpoint.topic, checkpoint.partition)
        end = target_ends.get((checkpoint.topic, checkpoint.partition))
        if upstream_topic not in source_topics or end is None:
            gone.append(where)
            continue
        if checkpoint.downstream_offset > end:
            beyond.append("%s: checkpoint %d -> %d, the partition ends at %d" % (where, checkpoint.upstream_offset, checkpoint.downstream_offset, end))
            continue
        recreation = trail.recreations.get((upstream_topic, checkpoint.partition))
        if recreation is not None:
            u_after, d_after = recreation[1]
            if checkpoint.upstream_offset < u_after and checkpoint.downstream_offset > d_after:
                before_recreation.append("%s: checkpoint %d -> %d, but the recreated topic starts with sync %d -> %d"
                                         % (where, checkpoint.upstream_offset, checkpoint.downstream_offset, u_after, d_after))
    topic, target = names.checkpoints_topic, names.target_alias
    fix = _delete_fix(topic, target, "it creates the topic again and checkpoints each group anew from the current offset syncs "
                                     "(MirrorMaker 3.4.1+ never writes a checkpoint below the one it has, so stale checkpoints block "
                                     "fresh ones); fail over only after the new checkpoints are written. Groups already moved or "
                                     "synced (sync.group.offsets) to these offsets: stop them and kafka-consumer-groups.sh "
                                     "--bootstrap-server <%s brokers> --group <group> --reset-offsets --topic <remote topic> "
                                     "--to-datetime <before the recreation> --execute (or --to-earliest)" % target)
    findings = []
    if beyond:
        lagging = version is not None and version < BOUNDED_HISTORY_SINCE
        findings.append(finding(
            WARNING if lagging else ERROR, CHECKPOINTS_CHECK, target,
            "%s on %s holds checkpoints beyond the end of their remote partition: %s; %s" % (
                topic, target, _listed(beyond),
                "MirrorMaker %s translates d + (g - u) and runs ahead of the end while the copy is behind the group: stale if it "
                "stays so once the lag is 0" % (version,) if lagging else
                "they were written for an earlier incarnation of the remote topic, and a failover with them starts the groups beyond "
                "the end (the consumers then reset by auto.offset.reset: they skip or re-read everything)"),
            fix))
    if before_recreation:
        findings.append(finding(
            ERROR, CHECKPOINTS_CHECK, target,
            "%s on %s holds checkpoints written before their remote topic was recreated, pointing into the old topic: %s; a failover "
            "with them skips the records of the new topic before that offset" % (topic, target, _listed(before_recreation)),
            fix))
    if gone:
        findings.append(finding(
            WARNING, CHECKPOINTS_CHECK, target,
            "%s on %s holds checkpoints of topics that no longer exist on %s or %s: %s; a topic created again under that name would "
            "inherit them" % (topic, target, names.source_alias, target, _listed(gone)),
            fix))
    return findings


def stale_state_findings(mirror_filter, trail, checkpoints, source_topics, target_ends, version=None):
    """Findings (_mm2.findings) about offset syncs and checkpoints that cannot belong to the flow's current topics.

    mirror_filter: the flow's MirrorFilter (its FlowNames name the topics).
    trail: SyncTrail of the syncs of the flow's data topics (MirrorFilter.data_topics: heartbeats left out).
    checkpoints: the latest Checkpoint of each group partition of the flow's groups.
    source_topics: the topic names on the source.
    target_ends: {(remote topic, partition): end offset} of the existing remote partitions, read after the records.
    version: the KafkaVersion running MirrorMaker (None: the newest rules).
    """
    source_topics = set(source_topics)
    return (_syncs_findings(mirror_filter.names, trail, source_topics, target_ends, version)
            + _checkpoints_findings(mirror_filter, trail, checkpoints, source_topics, target_ends, version))
