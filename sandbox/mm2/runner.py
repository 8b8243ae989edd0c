# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in's main loop: one herder per cluster pair, with the schedules of MirrorMaker 2's connectors.

Scheduler.scheduleRepeating runs a job at start and then every interval (topic config sync, group offset
refresh); scheduleRepeatingDelayed waits one interval first (topic and group refresh, group offset sync);
MirrorCheckpointTask.poll waits one emit.checkpoints.interval.seconds before each round of checkpoints.
"""
from __future__ import annotations

import logging
import signal
import time

from sandbox.mm2.checkpoints import CheckpointTask
from sandbox.mm2.clients import ClusterClients
from sandbox.mm2.connect import ConnectWorker
from sandbox.mm2.heartbeats import HeartbeatEmitter
from sandbox.mm2.replicator import SourceReplicator

LOG = logging.getLogger("sandbox.mm2")
POLL_TIMEOUT_MS = 200


class Timer:
    """A repeating schedule; `enabled` False (a disabled feature, MirrorConnectorConfig's negative interval) is never due."""

    def __init__(self, interval_s, enabled=True):
        self.interval_s = max(0.1, float(interval_s))
        self.enabled = enabled
        self.next_at = 0.0

    def start(self, now, delayed):
        self.next_at = now + self.interval_s if delayed else now

    def due(self, now):
        if self.enabled and now >= self.next_at:
            self.next_at = now + self.interval_s
            return True
        return False


def survive(description, job):
    """MirrorMaker 2's Scheduler.run and MirrorCheckpointTask.poll log a failed job and carry on (the next run may
    succeed, e.g. once a restarted broker is back); they never end the worker, which would lose the copy's uncommitted
    source offsets and make it copy those records again."""
    try:
        job()
    except Exception:  # pylint: disable=broad-except  # Scheduler.run catches Throwable
        LOG.exception("caught exception in scheduled task: %s", description)


class Herder:
    """What one source->target pair runs: replication and checkpoints when enabled, heartbeats when enabled."""

    def __init__(self, flow, clients):
        self.flow = flow
        self.replicator = self.checkpoints = self.heartbeats = None
        # Every herder, a heartbeats-only one too, is a Connect worker with its internal topics on its target (connect.py).
        self.worker = ConnectWorker(flow, clients[flow.target])
        if flow.enabled:
            self.replicator = SourceReplicator(flow, clients[flow.source], clients[flow.target], clients[flow.offset_syncs_cluster], self.worker)
            self.refresh_topics = Timer(flow.seconds("refresh.topics.interval.seconds"), flow.flag("refresh.topics.enabled"))
            self.sync_configs = Timer(flow.seconds("sync.topic.configs.interval.seconds"), flow.flag("sync.topic.configs.enabled"))
            if flow.flag("emit.checkpoints.enabled"):
                self.checkpoints = CheckpointTask(flow, clients[flow.source], clients[flow.target], clients[flow.offset_syncs_cluster], self.worker)
                self.emit_checkpoints = Timer(flow.seconds("emit.checkpoints.interval.seconds"))
                self.refresh_groups = Timer(flow.seconds("refresh.groups.interval.seconds"), flow.flag("refresh.groups.enabled"))
                self.sync_groups = Timer(flow.seconds("sync.group.offsets.interval.seconds"),
                                         flow.behaviour.syncs_group_offsets and flow.flag("sync.group.offsets.enabled"))
        if flow.flag("emit.heartbeats.enabled"):
            self.heartbeats = HeartbeatEmitter(flow, clients[flow.target], self.worker)
            self.heartbeat_timer = Timer(flow.seconds("emit.heartbeats.interval.seconds"))

    def start(self, now):
        self.worker.start()
        if self.replicator:
            self.replicator.start()
            self.refresh_topics.start(now, delayed=True)
            self.sync_configs.start(now, delayed=False)
        if self.checkpoints:
            self.checkpoints.start()
            self.emit_checkpoints.start(now, delayed=True)
            self.refresh_groups.start(now, delayed=True)
            self.sync_groups.start(now, delayed=True)
        if self.heartbeats:
            self.heartbeat_timer.start(now, delayed=False)

    def tick(self, now):
        copied = 0
        if self.heartbeats and self.heartbeat_timer.due(now):
            self.heartbeats.emit()
        if self.replicator:
            if self.refresh_topics.due(now):
                survive("refreshing topics", self.replicator.refresh_topics)
            if self.sync_configs.due(now):
                survive("syncing topic configs", lambda: self.replicator.configs.sync(self.replicator.topics_being_replicated()))
            copied = self.replicator.step(POLL_TIMEOUT_MS, now)
        if self.checkpoints:
            if self.refresh_groups.due(now):
                survive("refreshing consumer groups", self.checkpoints.refresh_groups)
            if self.emit_checkpoints.due(now):
                survive("emitting checkpoints", self.checkpoints.emit)
            if self.sync_groups.due(now):
                survive("syncing group offsets", self.checkpoints.sync_group_offsets)
        return copied

    def stop(self):
        """A clean stop commits the copy's source offsets (WorkerSourceTask commits on stop); kill -9 does not."""
        if self.replicator:
            self.replicator.commit_offsets()


class StandIn:
    def __init__(self, settings):
        self.settings = settings
        self.clients = {alias: ClusterClients(alias, client) for alias, client in settings.clusters.items()}
        self.herders = [Herder(flow, self.clients) for flow in settings.flows]
        self.stopping = False

    def _stop(self, signum, _frame):
        LOG.info("received %s, stopping after the current batch", signal.Signals(signum).name)
        self.stopping = True

    def run(self):
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        started = []
        try:
            for herder in self.herders:
                herder.start(time.monotonic())
                started.append(herder)
            LOG.info("started herders %s", ", ".join("%s%s" % (h.flow.name, "" if h.flow.enabled else " (heartbeats only)") for h in self.herders))
            last_report, copied = time.monotonic(), 0
            while not self.stopping:
                now = time.monotonic()
                copied += sum(herder.tick(now) for herder in self.herders)
                if not any(h.replicator for h in self.herders):
                    time.sleep(POLL_TIMEOUT_MS / 1000.0)
                if now - last_report >= 10 and copied:
                    LOG.info("copied %d records in the last %.0f s", copied, now - last_report)
                    last_report, copied = now, 0
            for herder in started:
                herder.stop()
        finally:
            for client in self.clients.values():
                client.close()
            LOG.info("stopped")
