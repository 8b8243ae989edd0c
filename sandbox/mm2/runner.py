"""The stand-in's main loop: one herder per cluster pair, timers for refresh, heartbeats and checkpoints."""
from __future__ import annotations

import logging
import signal
import time

from sandbox.mm2.checkpoints import CheckpointEmitter
from sandbox.mm2.clients import ClusterClients
from sandbox.mm2.heartbeats import HeartbeatEmitter
from sandbox.mm2.replicator import SourceReplicator

LOG = logging.getLogger("sandbox.mm2")
POLL_TIMEOUT_MS = 200


class Timer:
    def __init__(self, interval_s):
        self.interval_s = max(0.1, float(interval_s))
        self.next_at = 0.0

    def due(self, now):
        if now >= self.next_at:
            self.next_at = now + self.interval_s
            return True
        return False


class Herder:
    """What one source->target pair runs: replication when enabled, heartbeats when enabled."""

    def __init__(self, flow, clients):
        self.flow = flow
        self.replicator = self.checkpoints = self.heartbeats = None
        if flow.enabled:
            self.replicator = SourceReplicator(flow, clients[flow.source], clients[flow.target], clients[flow.offset_syncs_cluster])
            self.refresh = Timer(flow.number("refresh.topics.interval.seconds"))
            if flow.flag("emit.checkpoints.enabled"):
                self.checkpoint_timer = Timer(flow.number("emit.checkpoints.interval.seconds"))
            self.group_sync = flow.flag("sync.group.offsets.enabled")
            self.group_sync_timer = Timer(flow.number("sync.group.offsets.interval.seconds"))
        if flow.flag("emit.heartbeats.enabled"):
            self.heartbeats = HeartbeatEmitter(flow, clients[flow.target])
            self.heartbeat_timer = Timer(flow.number("emit.heartbeats.interval.seconds"))
        self._clients = clients

    def start(self):
        if self.replicator:
            self.replicator.start()
            self.refresh.due(time.monotonic())
            if self.flow.flag("emit.checkpoints.enabled"):
                self.checkpoints = CheckpointEmitter(self.flow, self._clients[self.flow.source], self._clients[self.flow.target],
                                                     self.replicator.store)

    def tick(self, now):
        copied = 0
        if self.heartbeats and self.heartbeat_timer.due(now):
            self.heartbeats.emit()
        if self.replicator:
            if self.refresh.due(now):
                self.replicator.refresh_topics()
            copied = self.replicator.step(POLL_TIMEOUT_MS)
            if self.checkpoints and self.checkpoint_timer.due(now):
                translated = self.checkpoints.emit()
                if self.group_sync and self.group_sync_timer.due(now):
                    self.checkpoints.sync_group_offsets(translated)
        return copied


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
        try:
            for herder in self.herders:
                herder.start()
            LOG.info("started herders %s", ", ".join("%s%s" % (h.flow.name, "" if h.flow.enabled else " (heartbeats only)") for h in self.herders))
            last_report, copied = time.monotonic(), 0
            while not self.stopping:
                now = time.monotonic()
                step = sum(herder.tick(now) for herder in self.herders)
                copied += step
                if not any(h.replicator for h in self.herders):
                    time.sleep(POLL_TIMEOUT_MS / 1000.0)
                if now - last_report >= 10 and copied:
                    LOG.info("copied %d records in the last %.0f s", copied, now - last_report)
                    last_report, copied = now, 0
        finally:
            for client in self.clients.values():
                client.close()
            LOG.info("stopped")
