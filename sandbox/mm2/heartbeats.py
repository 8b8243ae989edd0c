"""MirrorHeartbeatConnector's job for one herder pair: a heartbeat into the target's `heartbeats` topic."""
from __future__ import annotations

import time

from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_records import Heartbeat, heartbeats_topic

COMPACT = {"cleanup.policy": "compact"}


class HeartbeatEmitter:
    def __init__(self, flow, target):
        self.flow, self.target = flow, target
        self.target.ensure_topic(heartbeats_topic(), 1, flow.number("heartbeats.topic.replication.factor"), COMPACT)

    def emit(self):
        beat = Heartbeat(self.flow.source, self.flow.target, int(time.time() * 1000))
        self.target.producer().send(heartbeats_topic(), key=beat.encode_key(), value=beat.encode_value(), partition=0)
