# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs restart requests one at a time, as Ambari's action scheduler does.

A request waits PENDING, runs IN_PROGRESS (its components INSTALLED, i.e. stopped), then applies the
desired Kafka config to the sandbox brokers (broker_config_file, then restart_commands: the broker each named host runs
on, once per broker) and ends COMPLETED with its components STARTED, or FAILED (components left INSTALLED) when a
command fails or a failure was injected. Every restart is logged per host (Cluster.record_restart) with its times, and, with the
fault watch_broker, when the broker answered Kafka metadata again (broker_back_ms) and when a metadata probe last failed
before that (broker_down_ms: the broker is known to be down then; a probe takes a while under load, so a client can see the
broker back before broker_back_ms). With the fault
early_completion the request ends COMPLETED as soon as the restart command is launched, as Ambari's
start script returns before the broker has registered.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path

from sandbox import probes

from .cluster import now_ms

PENDING_S = 0.3
IN_PROGRESS_S = 0.7
RESTART_COMMAND_TIMEOUT_S = 120
BROKER_BACK_TIMEOUT_S = 120


class RequestExecutor:
    def __init__(self, cluster):
        self.cluster = cluster
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ambari-requests", daemon=True)
        self._thread.start()

    def submit(self, request_id: int) -> None:
        self._queue.put(request_id)

    def stop(self) -> None:
        self._stop.set()
        self._queue.put(None)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            request_id = self._queue.get()
            if request_id is None:
                return
            self._execute(request_id)

    def _execute(self, request_id: int) -> None:
        cluster = self.cluster
        request = cluster.request(request_id)
        time.sleep(PENDING_S)
        desired_at_start = cluster.desired_tags()
        cluster.update_request(request_id, "IN_PROGRESS", 10.0, task_status="IN_PROGRESS")
        cluster.set_component_states(request, "INSTALLED")
        cluster.record_restart(request, stopped_ms=now_ms())
        time.sleep(IN_PROGRESS_S + float(request.get("delay_s") or 0))
        if request.get("inject_failure"):
            cluster.update_request(
                request_id, "FAILED", 100.0, task_status="FAILED", exit_code=1,
                stderr="Restart failed (sandbox fault fail_next_request)",
            )
            return
        if request.get("early_completion"):
            threading.Thread(target=self._apply_to_broker, args=(request,), name=f"restart-{request_id}", daemon=True).start()
            # The old process is gone and the new one not yet serving: where a real start script returns.
            self._wait_broker(request["watch_broker"], answering=False)  # None (timeout): the watcher below records nothing
            threading.Thread(target=self._record_broker_back, args=(request,), name=f"watch-{request_id}", daemon=True).start()
            ok, stdout, stderr = True, "start command launched (sandbox fault early_completion)", ""
        else:
            ok, stdout, stderr = self._apply_to_broker(request)
            if ok and request.get("watch_broker"):
                self._record_broker_back(request)
        if not ok:
            cluster.update_request(request_id, "FAILED", 100.0, task_status="FAILED", exit_code=1, stdout=stdout, stderr=stderr)
            return
        cluster.clear_stale(request, desired_at_start)
        cluster.set_component_states(request, "STARTED")
        cluster.record_restart(request, started_ms=now_ms())
        cluster.update_request(request_id, "COMPLETED", 100.0, task_status="COMPLETED", exit_code=0, stdout=stdout, stderr=stderr)

    def _record_broker_back(self, request: dict) -> None:
        down_ms = self._wait_broker(request["watch_broker"], answering=True)
        if down_ms is not None:
            self.cluster.record_restart(request, broker_back_ms=now_ms(), broker_down_ms=down_ms)

    @staticmethod
    def _wait_broker(address: str, answering: bool):
        """Wait until the broker at host:port answers Kafka metadata (or stops answering); returns when a probe last gave
        the other answer (0 when the first probe already did not), None on timeout."""
        host, _sep, port = address.rpartition(":")
        deadline = time.monotonic() + BROKER_BACK_TIMEOUT_S
        other_ms = 0
        while time.monotonic() < deadline:
            try:
                probes.kafka_metadata(host, int(port), timeout=1.0)
                answers = True
            except (OSError, probes.ProbeError, ValueError):
                answers = False
            if answers == answering:
                return other_ms
            other_ms = now_ms()
            time.sleep(0.05)
        return None

    def _apply_to_broker(self, request: dict):
        """Write the desired Kafka config for the sandbox brokers and restart the broker of each KAFKA_BROKER host named."""
        if not any(task["role"] == "KAFKA_BROKER" for task in request["tasks"]):
            return True, "", ""
        cluster = self.cluster
        if cluster.broker_config_file:
            path = Path(cluster.broker_config_file)
            path.parent.mkdir(parents=True, exist_ok=True)
            payload = {"kafka-broker": cluster.desired_properties("kafka-broker"), "kafka-env": cluster.desired_properties("kafka-env").get("content", "")}
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(payload, indent=1, sort_keys=True))
            os.replace(tmp, path)
        commands = []  # hosts that share a broker (a one-broker cluster's) restart it once
        for host in [task["host_name"] for task in request["tasks"] if task["role"] == "KAFKA_BROKER"]:
            if cluster.restart_commands[host] not in commands:
                commands.append(cluster.restart_commands[host])
        stdout, stderr = [], []
        for command in commands:  # one host after another, as Ambari's tasks of one request on a real cluster
            try:
                proc = subprocess.run(command, capture_output=True, text=True, timeout=RESTART_COMMAND_TIMEOUT_S, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return False, "".join(stdout)[-4000:], f"restart command {command} could not run: {exc}"
            stdout.append(proc.stdout)
            stderr.append(proc.stderr)
            if proc.returncode != 0:
                return False, "".join(stdout)[-4000:], f"restart command {command} exited {proc.returncode}: {proc.stderr[-4000:]}"
        return True, "".join(stdout)[-4000:], "".join(stderr)[-4000:]
