# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How MirrorMaker 2 of one Kafka release behaves where releases differ: the stand-in's version modes.

Each rule (RULES) names the Apache Kafka class whose source, compared at every release tag from 2.4.0 to 3.8.0 and
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
    """The rules of MirrorMaker 2 of `release`: one property per entry of RULES."""

    release: tuple

    def since(self, *version):
        return self.release >= version


# name -> (what Kafka's sources do there, ((first release, the value from it on), ... newest first), the value before them).
RULES = {
    "sync_rule": ("MirrorSourceTask.PartitionState.update: how far downstream may drift before a new offset sync.",
                  (((3, 4, 1), STALE_TRANSLATION),), STEP_DRIFT),
    "translation": ("OffsetSyncStore.translateDownstream.", (((3, 4, 1), HISTORY), ((3, 3, 0), LATEST)), LATEST_OR_IDENTITY),
    "delayed_offset_syncs": ("OffsetSyncWriter.promoteDelayedOffsetSyncs: the newest unsent sync of each partition goes out at every "
                             "offset commit.", (((3, 7, 0), True),), False),
    "history_survives_restart": ("CheckpointStore; OffsetSyncStore.start(initializationMustReadToEnd=false): the sync history is rebuilt "
                                 "from the whole offset-syncs topic at start. 3.4.1 - 3.7.0 keep only the newest sync of what was read "
                                 "at start.", (((3, 7, 1), True),), False),
    "min_checkpoint_downstream": ("MirrorCheckpointTask.checkpointsForGroup: `downstreamOffset() > 0` before 2.7.0, `>= 0` from 2.7.0.",
                                  (((2, 7, 0), 0),), 1),
    "monotonic_checkpoints": ("MirrorCheckpointTask.checkpointIsMoreRecent: no checkpoint that moves downstream back unless upstream "
                              "rewound.", (((3, 4, 1), True),), False),
    "checkpoints_simple_groups": ("MirrorCheckpointConnector.findConsumerGroups no longer drops isSimpleConsumerGroup() groups.",
                                  (((2, 8, 0), True),), False),
    "groups_need_replicated_topic": ("findConsumerGroups keeps only groups with an offset on a topic the topic filter accepts.",
                                     (((3, 4, 1), True),), False),
    "syncs_group_offsets": ("sync.group.offsets.enabled (KIP-545).", (((2, 7, 0), True),), False),
    "new_topic_configs": ("MirrorSourceConnector: a new remote topic's configs at creation.",
                          (((3, 1, 1), CREATE_WITH_FILTERED_CONFIGS), ((2, 8, 0), CREATE_WITH_ALL_CONFIGS)), CREATE_WITHOUT_CONFIGS),
    "config_sync": ("MirrorSourceConnector.syncTopicConfigs.", (((3, 5, 0), INCREMENTAL_CONFIGS),), REPLACE_ALL_CONFIGS),
    "internal_topics_use_separator": ("KIP-690: DefaultReplicationPolicy names the internal topics with replication.policy.separator.",
                                      (((3, 1, 0), True),), False),
    "replicates_user_internal_topics": ("KIP-1074: ReplicationPolicy.isInternalTopic and the default topics.exclude cover only MM2's own "
                                        "internal topics (isMM2InternalTopic) and Kafka's, no longer every `*.internal` / `*-internal` "
                                        "name.", (((4, 0, 0), True),), False),
    "exactly_once": ("KIP-618 for MirrorMaker 2: `<target>.exactly.once.source.support = enabled`.", (((3, 5, 0), True),), False),
}


def _rule(what, steps, before):
    """A property of Behaviour: the value of the newest step the release has reached, else `before`."""
    rule = property(lambda behaviour: next((value for first, value in steps if behaviour.since(*first)), before))
    rule.__doc__ = what + " " + "; ".join("%s+: %r" % (".".join(map(str, first)), value) for first, value in steps)
    return rule


for _name, (_what, _steps, _before) in RULES.items():
    setattr(Behaviour, _name, _rule(_what, _steps, _before))
