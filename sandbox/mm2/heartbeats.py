# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorHeartbeatConnector / MirrorHeartbeatTask for one herder pair: a heartbeat into the target's `heartbeats` topic."""
from __future__ import annotations

import time

from sandbox.mm2.connect import heartbeat_partition

COMPACT = {"cleanup.policy": "compact"}


class HeartbeatEmitter:
    def __init__(self, flow, target, worker=None):
        self.flow, self.target, self.worker = flow, target, worker
        self.target.ensure_topic(flow.records.heartbeats_topic, 1, flow.number("heartbeats.topic.replication.factor"), COMPACT)

    def emit(self):
        record = self.flow.records.heartbeat(int(time.time() * 1000))
        producer = self.target.producer()
        producer.send(record.topic, key=record.key, value=record.value, partition=0)
        if self.worker is not None:  # Connect commits the heartbeat task's constant source offset ({"offset": 0}) too
            self.worker.write_once("MirrorHeartbeatConnector", heartbeat_partition(self.flow.source, self.flow.target))
