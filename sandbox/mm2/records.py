# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one writer of MirrorMaker 2 records for the sandbox: the stand-in and the tests that fake a mirror use it.

MirrorRecords knows, for one flow, which internal topic each record goes to (offset syncs, checkpoints,
heartbeats; always partition 0) and what MirrorCheckpointTask.renameTopicPartition calls the checkpoint's
topic. The bytes come from the collection's codec (mm2_records: Checkpoint, OffsetSync, Heartbeat), the only
product code the sandbox shares: the wire format is a fact both sides must agree on, while the names and
rules here are written independently (sandbox.mm2.policy) so that the product's can be checked against them.
"""
from __future__ import annotations

from collections import namedtuple

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint, Heartbeat, OffsetSync
from sandbox.mm2.policy import HEARTBEATS_TOPIC, ReplicationPolicy

Record = namedtuple("Record", "topic key value")


class MirrorRecords:
    """Records of the flow `source -> target`. `offset_syncs_on_target`: offset-syncs.topic.location=target (3.0+)."""

    def __init__(self, source, target, policy=None, offset_syncs_on_target=False):
        self.source, self.target = source, target
        self.policy = (policy or ReplicationPolicy()).for_source(source)
        self.offset_syncs_on_target = offset_syncs_on_target

    @property
    def offset_syncs_cluster(self):
        return self.target if self.offset_syncs_on_target else self.source

    @property
    def offset_syncs_topic(self):
        """MirrorConnectorConfig.offsetSyncsTopic (3.0+): named after the *other* cluster than the one it lives on."""
        return self.policy.offset_syncs_topic(self.source if self.offset_syncs_on_target else self.target)

    @property
    def checkpoints_topic(self):
        return self.policy.checkpoints_topic(self.source)

    @property
    def heartbeats_topic(self):
        return HEARTBEATS_TOPIC

    def remote_topic(self, topic):
        return self.policy.format_remote_topic(self.source, topic)

    def checkpoint_topic(self, upstream_topic):
        """MirrorCheckpointTask.renameTopicPartition: a topic that came from the target goes back to its original name."""
        source = self.policy.topic_source(upstream_topic)
        if source is not None and source == self.target:  # targetClusterAlias.equals(topicSource(...)): never for null
            return self.policy.original_topic(upstream_topic)
        return self.remote_topic(upstream_topic)

    def offset_sync(self, topic, partition, upstream, downstream):
        sync = OffsetSync(topic, partition, upstream, downstream)
        return Record(self.offset_syncs_topic, sync.encode_key(), sync.encode_value())

    def checkpoint(self, group, upstream_topic, partition, upstream, downstream, metadata=""):
        """The Checkpoint of a group's offset on the source topic `upstream_topic` (its topic is the target-side name)."""
        return Checkpoint(group, self.checkpoint_topic(upstream_topic), partition, upstream, downstream, metadata or "")

    def checkpoint_record(self, checkpoint):
        return Record(self.checkpoints_topic, checkpoint.encode_key(), checkpoint.encode_value())

    def heartbeat(self, timestamp_ms):
        beat = Heartbeat(self.source, self.target, timestamp_ms)
        return Record(self.heartbeats_topic, beat.encode_key(), beat.encode_value())

    @staticmethod
    def read_offset_sync(key, value):
        """(topic, partition, upstream, downstream) of an offset-syncs record."""
        sync = OffsetSync.decode(key, value)
        return sync.topic, sync.partition, sync.upstream_offset, sync.downstream_offset

    @staticmethod
    def read_checkpoint(key, value):
        return Checkpoint.decode(key, value)
