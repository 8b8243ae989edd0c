# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorCheckpointConnector and MirrorCheckpointTask for one flow: which groups, their checkpoints, target group offsets.

Written from MirrorCheckpointConnector.findConsumerGroups / refreshConsumerGroups and MirrorCheckpointTask
(checkpointsForGroup, checkpointIsMoreRecent, refreshIdleConsumerGroupOffset, syncGroupOffset) at 2.4.1,
2.7.0, 2.8.0, 3.4.0, 3.4.1, 3.7.1 and 3.9, independently of the collection's offset tools:
- the groups are listed at start and again every refresh.groups.interval.seconds: a group that first
  commits after a listing gets checkpoints only after the next one. Before 2.8 simple groups (assign +
  commit, no group protocol) are never checkpointed; from 3.4.1 a group needs an offset on a topic the topic
  filter accepts.
- every emit.checkpoints.interval.seconds each group's committed offsets on topics the topic filter accepts
  are translated (sandbox.mm2.sync_store); no translation, -1, and before 2.7 a downstream offset of 0 give
  no checkpoint; from 3.4.1 a checkpoint that would move downstream back is not written unless the group
  rewound upstream, and from 3.7.1 the last checkpoints are read back from the checkpoints topic at start.
- sync.group.offsets (2.7+): the checkpointed offsets are committed on the target for groups that do not
  exist there or are Empty, and only forward.
"""
from __future__ import annotations

import logging

from kafka import TopicPartition
from kafka.errors import NoError
from kafka.structs import OffsetAndMetadata

from sandbox.mm2.connect import checkpoint_partition
from sandbox.mm2.records import MirrorRecords
from sandbox.mm2.sync_store import OffsetSyncStore

LOG = logging.getLogger("sandbox.mm2")
COMPACT = {"cleanup.policy": "compact"}
# ListConsumerGroups returns only these protocol types; "" is a simple group (isSimpleConsumerGroup).
CONSUMER_PROTOCOL_TYPES = ("consumer", "")
NEW_ON_TARGET_STATES = (None, "", "Dead")


class CheckpointTask:
    def __init__(self, flow, source, target, syncs_cluster, worker=None):
        self.flow, self.source, self.target, self.worker = flow, source, target, worker
        self.behaviour = flow.behaviour
        self.store = OffsetSyncStore(flow.behaviour)
        self.syncs = syncs_cluster.tail(flow.records.offset_syncs_topic)
        self.groups = []
        self.latest = {}  # group -> {(checkpoint topic, partition): Checkpoint}: checkpointsPerConsumerGroup / CheckpointStore

    def start(self):
        records = self.flow.records
        self.target.ensure_topic(records.checkpoints_topic, 1, self.flow.number("checkpoints.topic.replication.factor"), COMPACT)
        self.refresh_groups()
        if self.behaviour.history_survives_restart:
            for record in self.target.read_all(records.checkpoints_topic):
                if record.value is None:
                    continue
                checkpoint = MirrorRecords.read_checkpoint(record.key, record.value)
                if checkpoint.group in self.groups:
                    self.latest.setdefault(checkpoint.group, {})[(checkpoint.topic, checkpoint.partition)] = checkpoint
        self._read_syncs()
        self.store.finish_initial_read()

    def _read_syncs(self):
        for record in self.syncs.read_new():
            if record.value is not None:
                self.store.add(*MirrorRecords.read_offset_sync(record.key, record.value))

    def _committed(self, group):
        offsets = self.source.admin().list_group_offsets({group: None}).get(group, {})
        return {tp: meta for tp, meta in offsets.items() if meta is not None and meta.offset >= 0}

    def find_groups(self):
        found = []
        for listing in self.source.admin().list_groups():
            group, protocol = listing["group_id"], listing.get("protocol_type") or ""
            if protocol not in CONSUMER_PROTOCOL_TYPES or not self.flow.groups.replicates(group):
                continue
            if protocol == "" and not self.behaviour.checkpoints_simple_groups:
                continue
            if self.behaviour.groups_need_replicated_topic and not any(
                    self.flow.topics.topic_filter.replicates(tp.topic) for tp in self._committed(group)):
                continue
            found.append(group)
        return sorted(found)

    def refresh_groups(self):
        groups = self.find_groups()
        if groups != self.groups:
            LOG.info("%s: checkpointing consumer groups: %s", self.flow.name, ", ".join(groups) or "none")
            self.groups = groups

    def _more_recent(self, checkpoint):
        """checkpointIsMoreRecent (3.4.1+)."""
        last = self.latest.get(checkpoint.group, {}).get((checkpoint.topic, checkpoint.partition))
        if last is None or checkpoint.upstream_offset < last.upstream_offset:
            return True
        return checkpoint.downstream_offset > last.downstream_offset

    def checkpoints_for_group(self, group):
        checkpoints = {}
        for tp, meta in sorted(self._committed(group).items()):
            if not self.flow.topics.topic_filter.replicates(tp.topic):
                continue
            downstream = self.store.translate(tp.topic, tp.partition, meta.offset)
            if downstream is None or downstream < self.behaviour.min_checkpoint_downstream:
                continue
            checkpoint = self.flow.records.checkpoint(group, tp.topic, tp.partition, meta.offset, downstream, meta.metadata)
            if self.behaviour.monotonic_checkpoints and not self._more_recent(checkpoint):
                continue
            checkpoints[(checkpoint.topic, checkpoint.partition)] = checkpoint
        return checkpoints

    def emit(self):
        self._read_syncs()
        producer, written = self.target.producer(), 0
        for group in self.groups:
            checkpoints = self.checkpoints_for_group(group)
            if self.behaviour.monotonic_checkpoints:
                self.latest.setdefault(group, {}).update(checkpoints)
            else:
                self.latest[group] = checkpoints
            for checkpoint in checkpoints.values():
                record = self.flow.records.checkpoint_record(checkpoint)
                producer.send(record.topic, key=record.key, value=record.value, partition=0)
                if self.worker is not None:  # Connect commits each checkpoint record's source offset ({"offset": 0}) too
                    self.worker.write_once("MirrorCheckpointConnector",
                                           checkpoint_partition(checkpoint.group, checkpoint.topic, checkpoint.partition))
                written += 1
        producer.flush()
        if written:
            LOG.info("%s: %d checkpoints for groups %s", self.flow.name, written, ", ".join(self.groups))

    def _target_states(self, admin):
        # Group states from ListGroups rather than DescribeGroups: quirk (tansu + kafka-python 3.0.12), describe_groups
        # raises ValueError on authorized_operations=-1. A group the target does not list does not exist there yet (Dead).
        states = {g["group_id"]: g.get("group_state") for g in admin.list_groups()}
        for group in self.latest:
            if group in states and states[group] is None:  # ListGroups before v4 carries no state
                states[group] = admin.describe_groups([group])[group].get("group_state", "")
        return states

    def sync_group_offsets(self):
        """syncGroupOffset (2.7+): forward-only commits on the target for groups that are new or Empty there."""
        admin = self.target.admin()
        states = self._target_states(admin)
        for group, checkpoints in sorted(self.latest.items()):
            converted = {TopicPartition(topic, partition): cp for (topic, partition), cp in checkpoints.items()}
            state = states.get(group)
            if state not in NEW_ON_TARGET_STATES and state != "Empty":
                # Real MirrorMaker 2 sends the commit and the broker refuses it (UnknownMemberIdException, "Unable to sync offsets
                # for consumer group"); the stand-in does not rely on the sandbox brokers refusing it.
                LOG.info("%s: not syncing offsets of %s: it is %s on %s", self.flow.name, group, state, self.flow.target)
                continue
            if state == "Empty":
                current = admin.list_group_offsets({group: list(converted)}).get(group, {})
                converted = {tp: cp for tp, cp in converted.items()
                             if current.get(tp) is None or current[tp].offset < 0 or current[tp].offset < cp.downstream_offset}
            if not converted:
                continue
            errors = {tp: error for tp, error in admin.alter_group_offsets(
                group, {tp: OffsetAndMetadata(cp.downstream_offset, cp.metadata or "", -1) for tp, cp in converted.items()}).items()
                if error is not NoError}
            for tp, error in sorted(errors.items()):
                LOG.warning("%s: %s refused offset of group %s on %s-%d: %s", self.flow.name, self.flow.target, group, tp.topic, tp.partition,
                            error.__name__)
            LOG.info("%s: synced %d offsets of group %s on %s", self.flow.name, len(converted) - len(errors), group, self.flow.target)
