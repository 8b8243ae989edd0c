# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start a standalone Ambari emulator (sandbox/ambari) for a test and talk to it with plain urllib.

The urllib client here is deliberately independent of plugins/module_utils/_ambari/client.py, so tests read
state back without going through the code under test.
"""
from __future__ import annotations

import base64
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.checkout import REPO


# 127.20.0.0/16 is this test area's address block; the sandbox fixtures use nets 20/21 (127.20.C.x, 127.21.C.x)
# for their own clusters on C = 1, 2, so standalone emulators take 127.20.50.x.
_ADDRESSES = (f"127.20.50.{1 + n % 250}" for n in itertools.count())  # ports are ephemeral, so addresses may repeat
SUFFIX = "emul.internal.cloudapp.net"


def cluster_hosts(short: str = "primar", net_prefix: str = "127.20.60") -> list:
    hosts = [{"host_name": f"hn0-{short}.{SUFFIX}", "ip": f"{net_prefix}.2", "components": []}]
    hosts += [{"host_name": f"wn{k}-{short}.{SUFFIX}", "ip": f"{net_prefix}.{10 + k}", "components": ["KAFKA_BROKER"]} for k in range(3)]
    hosts += [{"host_name": f"zk{k}-{short}.{SUFFIX}", "ip": f"{net_prefix}.{20 + k}", "components": ["ZOOKEEPER_SERVER"]} for k in range(3)]
    return hosts


class Emulator:
    def __init__(self, workdir: Path, cluster_name: str = "primary", broker_restart=None, hosts=None, password: str = "s3cret-Pass", **options):
        """`broker_restart`: the argv that restarts the broker (default: one that prints and succeeds); every KAFKA_BROKER
        host runs on that one broker, as on a one-broker sandbox cluster."""
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        hosts = hosts or cluster_hosts()
        broker_restart = broker_restart or [sys.executable, "-c", "print('broker restarted')"]
        host = next(_ADDRESSES)
        with socket.socket() as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
        self.config = {
            "host": host,
            "port": port,
            "cluster_name": cluster_name,
            "username": "admin",
            "password": password,
            "hosts": hosts,
            "broker_config_file": str(self.workdir / "broker-config.json"),
            "restart_commands": {h["host_name"]: broker_restart for h in hosts if "KAFKA_BROKER" in h.get("components", [])},
            "state_file": str(self.workdir / "ambari-state.json"),
            **options,  # esp, ambari_version
        }
        self.config_path = self.workdir / "ambari.json"
        self.config_path.write_text(json.dumps(self.config))
        self.root = f"http://{host}:{port}"
        self.url = self.root
        self.api = f"{self.root}/api/v1/clusters/{cluster_name}"
        self.process = None

    # ---- process -----------------------------------------------------------------------------
    def start(self) -> "Emulator":
        log = open(self.workdir / "emulator.log", "ab")  # noqa: SIM115 - closed in stop()
        self._log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sandbox.ambari", "--config", str(self.config_path)], cwd=str(REPO), stdout=log, stderr=log,
        )
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"emulator exited {self.process.returncode}: {(self.workdir / 'emulator.log').read_text()[-2000:]}")
            try:
                with socket.create_connection((self.config["host"], self.config["port"]), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("emulator did not start listening within 15 s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None
        if getattr(self, "_log", None):
            self._log.close()

    # ---- HTTP --------------------------------------------------------------------------------
    def call(self, method: str, path: str, body=None, auth=("admin", None), requested_by: bool = True, headers=None):
        """(status, parsed JSON body) for `path` under the cluster, or under the server for /api/... and /_sandbox/..."""
        if path.startswith("http"):
            url = path
        elif path.startswith(("/api/", "/_sandbox/")):
            url = self.root + path
        else:
            url = self.api + path
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        if auth:
            user, password = auth[0], auth[1] if auth[1] is not None else self.config["password"]
            request.add_header("Authorization", "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode())
        if requested_by and method != "GET":
            request.add_header("X-Requested-By", "kafkaops-tests")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            return exc.code, json.loads(raw) if raw else None

    def get(self, path: str = ""):
        status, body = self.call("GET", path)
        assert status == 200, (path, status, body)
        return body

    def desired_tag(self, config_type: str) -> str:
        return self.get("?fields=Clusters/desired_configs")["Clusters"]["desired_configs"][config_type]["tag"]

    def properties(self, config_type: str) -> dict:
        tag = self.desired_tag(config_type)
        return self.get(f"/configurations?type={config_type}&tag={tag}")["items"][0]["properties"]

    def config_versions(self, service: str = "KAFKA") -> list:
        return self.get(f"/configurations/service_config_versions?service_name={service}")["items"]

    def stale(self) -> list:
        items = self.get("/host_components?HostRoles/stale_configs=true&fields=HostRoles/host_name")["items"]
        return sorted((i["HostRoles"]["host_name"], i["HostRoles"]["component_name"]) for i in items)

    def requests(self) -> list:
        return self.get("/requests?fields=Requests/*")["items"]

    def restarts(self) -> list:
        """The emulator's restart log: per request and host, requested_ms, stopped_ms and started_ms."""
        status, body = self.call("GET", "/_sandbox/restarts", auth=None)
        assert status == 200, body
        return body["restarts"]

    def faults(self, **fault) -> dict:
        status, body = self.call("POST", "/_sandbox/faults", fault, auth=None, requested_by=False)
        assert status == 200, body
        return body

    def clear_faults(self) -> None:
        self.call("DELETE", "/_sandbox/faults", auth=None, requested_by=False)

    def wait_request(self, request_id: int, timeout: float = 15.0) -> dict:
        deadline = time.time() + timeout
        while time.time() < deadline:
            body = self.get(f"/requests/{request_id}?fields=Requests/*,tasks/Tasks/*")
            if body["Requests"]["request_status"] in ("COMPLETED", "FAILED", "TIMEDOUT", "ABORTED"):
                return body
            time.sleep(0.2)
        raise AssertionError(f"request {request_id} did not finish in {timeout} s")

    def put_config(self, config_type: str, properties: dict, tag: str, note: str = "test"):
        return self.call(
            "PUT", "", {"Clusters": {"desired_config": [{"type": config_type, "tag": tag, "properties": properties, "service_config_version_note": note}]}},
        )

    def restart(self, hosts: list, service: str = "KAFKA", component: str = "KAFKA_BROKER"):
        return self.call(
            "POST",
            "/requests",
            {
                "RequestInfo": {
                    "command": "RESTART",
                    "context": "Restart by test",
                    "operation_level": {"level": "HOST_COMPONENT", "cluster_name": self.config["cluster_name"]},
                },
                "Requests/resource_filters": [{"service_name": service, "component_name": component, "hosts": ",".join(hosts)}],
            },
        )
