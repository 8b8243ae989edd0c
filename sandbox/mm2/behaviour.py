# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How MirrorMaker 2 of one Kafka release behaves where releases differ: the stand-in's version modes.

Each property names the Apache Kafka class whose source, compared at every release tag from 2.4.0 to 3.8.0 and
3.9.0's release candidate, sets the boundary (patch releases included: some fixes were backported). Independent
of the collection's version table, which is what the stand-in checks.
"""
from __future__ import annotations

from dataclasses import dataclass

# MirrorSourceTask.PartitionState.update, how far downstream may drift before a new offset sync:
STEP_DRIFT = "step"  # < 3.4.1: downstream - (lastSyncDownstream + (upstream - lastSyncUpstream)) >= offset.lag.max
STALE_TRANSLATION = "stale"  # 3.4.1+: downstream - (lastSyncDownstream + 1) >= offset.lag.max

# OffsetSyncStore.translateDownstream:
LATEST_OR_IDENTITY = "latest_or_identity"  # < 3.3.0: latest sync only, d + (g - u); no sync at all reads as (-1, -1)
LATEST = "latest"  # 3.3.0 - 3.4.0: latest sync only, d + (g - u); no sync, no checkpoint
HISTORY = "history"  # 3.4.1+: up to 64 syncs per partition, cleared on an upstream rewind; d if g == u else d + 1

# MirrorSourceConnector: a new remote topic's configs at creation.
CREATE_WITHOUT_CONFIGS = "none"  # < 2.8.0: NewTopic without configs; only the periodic sync sets them
CREATE_WITH_ALL_CONFIGS = "all"  # 2.8.0 - 3.1.0: configToMap(describeConfigs): every source config, defaults included
CREATE_WITH_FILTERED_CONFIGS = "filtered"  # 3.1.1+: configToMap(targetConfig(...)): non-default, not excluded

# MirrorSourceConnector.syncTopicConfigs:
REPLACE_ALL_CONFIGS = "replace"  # < 3.5.0: deprecated AlterConfigs: the remote topic keeps only the synced set
INCREMENTAL_CONFIGS = "incremental"  # 3.5.0+: IncrementalAlterConfigs (use.incremental.alter.configs=requested)


@dataclass(frozen=True)
class Behaviour:
    release: tuple

    def since(self, *version):
        return self.release >= version

    @property
    def sync_rule(self):
        return STALE_TRANSLATION if self.since(3, 4, 1) else STEP_DRIFT

    @property
    def delayed_offset_syncs(self):
        """3.7.0+ (OffsetSyncWriter.promoteDelayedOffsetSyncs): the newest unsent sync of each partition goes out at every offset commit."""
        return self.since(3, 7, 0)

    @property
    def translation(self):
        if self.since(3, 4, 1):
            return HISTORY
        return LATEST if self.since(3, 3, 0) else LATEST_OR_IDENTITY

    @property
    def history_survives_restart(self):
        """3.7.1+ (CheckpointStore; OffsetSyncStore.start(initializationMustReadToEnd=false)): the sync history is rebuilt from
        the whole offset-syncs topic at start. 3.4.1 - 3.7.0 keep only the newest sync of what was read at start."""
        return self.since(3, 7, 1)

    @property
    def min_checkpoint_downstream(self):
        """MirrorCheckpointTask.checkpointsForGroup: `downstreamOffset() > 0` before 2.7.0, `>= 0` from 2.7.0."""
        return 0 if self.since(2, 7, 0) else 1

    @property
    def monotonic_checkpoints(self):
        """3.4.1+ (MirrorCheckpointTask.checkpointIsMoreRecent): no checkpoint that moves downstream back unless upstream rewound."""
        return self.since(3, 4, 1)

    @property
    def checkpoints_simple_groups(self):
        """2.8.0+: MirrorCheckpointConnector.findConsumerGroups no longer drops isSimpleConsumerGroup() groups."""
        return self.since(2, 8, 0)

    @property
    def groups_need_replicated_topic(self):
        """3.4.1+: findConsumerGroups keeps only groups with an offset on a topic the topic filter accepts."""
        return self.since(3, 4, 1)

    @property
    def syncs_group_offsets(self):
        """2.7.0+: sync.group.offsets.enabled (KIP-545)."""
        return self.since(2, 7, 0)

    @property
    def new_topic_configs(self):
        if self.since(3, 1, 1):
            return CREATE_WITH_FILTERED_CONFIGS
        return CREATE_WITH_ALL_CONFIGS if self.since(2, 8, 0) else CREATE_WITHOUT_CONFIGS

    @property
    def config_sync(self):
        return INCREMENTAL_CONFIGS if self.since(3, 5, 0) else REPLACE_ALL_CONFIGS

    @property
    def internal_topics_use_separator(self):
        """3.1.0+ (KIP-690): DefaultReplicationPolicy names the internal topics with replication.policy.separator."""
        return self.since(3, 1, 0)

    @property
    def replicates_user_internal_topics(self):
        """4.0.0+ (KIP-1074): ReplicationPolicy.isInternalTopic and the default topics.exclude cover only MM2's own internal
        topics (isMM2InternalTopic) and Kafka's, no longer every `*.internal` / `*-internal` name."""
        return self.since(4, 0, 0)

    @property
    def exactly_once(self):
        """3.5.0+ (KIP-618 for MirrorMaker 2): `<target>.exactly.once.source.support = enabled`."""
        return self.since(3, 5, 0)
