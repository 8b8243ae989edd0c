# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When MirrorSourceTask emits an offset sync (PartitionState.update, and from 3.7 OffsetSyncWriter's delayed syncs).

Written from MirrorSourceTask at 2.4.1, 3.4.0, 3.4.1, 3.6.0 and OffsetSyncWriter at 3.7.0 / 3.9. A sync is
urgent on the first record of a task's lifetime, after an upstream gap (compaction, transaction markers),
when the target went back (truncation), or when downstream drifted offset.lag.max from where the last sync
would put it: before 3.4.1 that place is the last sync plus the upstream step (so a steady copy emits one
sync per partition and lifetime), from 3.4.1 it is one past the last sync (a sync every offset.lag.max
records). From 3.7 the newest non-urgent sync of a partition is also sent at every offset commit.
"""
from __future__ import annotations

from sandbox.mm2.behaviour import STALE_TRANSLATION


class PartitionState:
    def __init__(self, rule, max_lag):
        self.rule, self.max_lag = rule, max_lag
        self.previous_upstream = self.previous_downstream = -1
        self.last_sync_upstream = self.last_sync_downstream = -1

    def update(self, upstream, downstream):
        """True when (upstream, downstream) must be sent as an offset sync now."""
        if self.rule == STALE_TRANSLATION:
            expected = self.last_sync_downstream + 1
        else:
            expected = self.last_sync_downstream + (upstream - self.last_sync_upstream)
        urgent = (self.last_sync_downstream == -1 or downstream - expected >= self.max_lag
                  or upstream - self.previous_upstream != 1 or downstream < self.previous_downstream)
        if urgent:
            self.last_sync_upstream, self.last_sync_downstream = upstream, downstream
        self.previous_upstream, self.previous_downstream = upstream, downstream
        return urgent


class OffsetSyncEmitter:
    """Per source partition state of one task; it lives as long as the process (a restart starts a new lifetime)."""

    def __init__(self, behaviour, max_lag):
        self.behaviour, self.max_lag = behaviour, max_lag
        self.states = {}
        self.delayed = {}

    def copied(self, topic, partition, upstream, downstream):
        """The (topic, partition, upstream, downstream) syncs to send now that this record was acknowledged by the target."""
        key = (topic, partition)
        state = self.states.setdefault(key, PartitionState(self.behaviour.sync_rule, self.max_lag))
        if state.update(upstream, downstream):
            self.delayed.pop(key, None)
            return [(topic, partition, upstream, downstream)]
        if self.behaviour.delayed_offset_syncs:
            self.delayed[key] = (topic, partition, upstream, downstream)
        return []

    def committed(self):
        """The delayed syncs an offset commit sends (OffsetSyncWriter.promoteDelayedOffsetSyncs, 3.7+; none before)."""
        syncs, self.delayed = list(self.delayed.values()), {}
        return syncs
