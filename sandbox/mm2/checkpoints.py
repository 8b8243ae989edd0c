"""MirrorCheckpointConnector's job for one flow: checkpoints and (optionally) target group offsets."""
from __future__ import annotations

import logging

from kafka import TopicPartition
from kafka.errors import NoError
from kafka.structs import OffsetAndMetadata

from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_records import Checkpoint, checkpoints_topic, translate_downstream

LOG = logging.getLogger("sandbox.mm2")
COMPACT = {"cleanup.policy": "compact"}
# Group states in which nobody consumes, so MirrorMaker may move the group's offsets.
INACTIVE_STATES = ("Empty", "Dead", "")


class CheckpointEmitter:
    def __init__(self, flow, source, target, store):
        self.flow, self.source, self.target, self.store = flow, source, target, store
        self.topic = checkpoints_topic(flow.source)
        self.target.ensure_topic(self.topic, 1, flow.number("checkpoints.topic.replication.factor"), COMPACT)

    def _groups(self):
        return sorted(g["group_id"] for g in self.source.admin().list_groups() if self.flow.replicates_group(g["group_id"]))

    def translated(self):
        """{group: {TopicPartition(remote topic, p): Checkpoint}} for groups whose offsets can be translated."""
        result = {}
        for group in self._groups():
            offsets = self.source.admin().list_group_offsets({group: None}).get(group, {})
            for tp, committed in offsets.items():
                if committed is None or committed.offset < 0 or not self.flow.replicates_topic(tp.topic):
                    continue
                downstream = translate_downstream(self.store.for_partition(tp.topic, tp.partition), committed.offset)
                if downstream is None:
                    continue
                remote = self.flow.policy.remote_topic(self.flow.source, tp.topic)
                result.setdefault(group, {})[TopicPartition(remote, tp.partition)] = Checkpoint(
                    group, remote, tp.partition, committed.offset, downstream, committed.metadata or "")
        return result

    def emit(self):
        translated = self.translated()
        producer = self.target.producer()
        for checkpoints in translated.values():
            for checkpoint in checkpoints.values():
                producer.send(self.topic, key=checkpoint.encode_key(), value=checkpoint.encode_value(), partition=0)
        producer.flush()
        if translated:
            LOG.info("%s: %d checkpoints for groups %s", self.flow.name, sum(len(c) for c in translated.values()), ", ".join(sorted(translated)))
        return translated

    def sync_group_offsets(self, translated):
        """Move target group offsets forward to the translated ones, only for groups nobody consumes on the target."""
        admin = self.target.admin()
        # Group states from ListGroups rather than DescribeGroups: quirk (tansu + kafka-python 3.0.12), describe_groups
        # raises ValueError on authorized_operations=-1. A group the target does not list does not exist there yet.
        states = {g["group_id"]: g.get("group_state") for g in admin.list_groups()}
        for group, checkpoints in sorted(translated.items()):
            if group in states and states[group] is None:  # ListGroups before v4 carries no state
                states[group] = admin.describe_groups([group])[group].get("group_state", "")
            if states.get(group, "") not in INACTIVE_STATES:
                LOG.info("%s: not syncing offsets of %s: it is %s on %s", self.flow.name, group, states[group], self.flow.target)
                continue
            current = admin.list_group_offsets({group: list(checkpoints)}).get(group, {})
            moves = {tp: OffsetAndMetadata(cp.downstream_offset, "", -1) for tp, cp in checkpoints.items()
                     if current.get(tp) is None or current[tp].offset < cp.downstream_offset}
            if moves:
                errors = {tp: error for tp, error in admin.alter_group_offsets(group, moves).items() if error is not NoError}
                if errors:
                    LOG.warning("%s: %s refused offsets of group %s: %s", self.flow.name, self.flow.target, group,
                                ", ".join("%s-%d %s" % (tp.topic, tp.partition, error.__name__) for tp, error in errors.items()))
                LOG.info("%s: synced %d offsets of group %s on %s", self.flow.name, len(moves) - len(errors), group, self.flow.target)
