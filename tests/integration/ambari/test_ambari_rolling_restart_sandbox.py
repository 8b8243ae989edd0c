# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A rolling restart on the noida sandbox, where Ambari ends each restart COMPLETED while the broker is still down
(the emulator's early_completion fault: a start script returns before the broker has registered). Read from the
emulator's restart log: one host at a time, in order, each asked to restart only after the previous broker answered
Kafka metadata again."""
from __future__ import annotations

import base64
import json
import urllib.request

import pytest

from tests.support.ansible_play import run_module

pytestmark = pytest.mark.integration

ALIAS = "primary"


def sandbox_call(ambari, method, path, body=None):
    """The emulator's test endpoints, with plain urllib (independent of the collection's Ambari client)."""
    request = urllib.request.Request(ambari["url"] + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def api_get(ambari, path):
    request = urllib.request.Request(f"{ambari['url']}/api/v1/clusters/{ambari['cluster_name']}{path}")
    token = base64.b64encode(f"{ambari['username']}:{ambari['password']}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_rolling_restart_waits_until_each_broker_is_back(sandbox):
    cluster = sandbox["clusters"][ALIAS]
    ambari, broker = cluster["ambari"], cluster["brokers"][0]
    address = f"{broker['host']}:{broker['port']}"
    workers = sorted(h["HostRoles"]["host_name"] for h in api_get(
        ambari, "/host_components?HostRoles/component_name=KAFKA_BROKER&fields=HostRoles/host_name")["items"])
    logged_before = len(sandbox_call(ambari, "GET", "/_sandbox/restarts")["restarts"])
    sandbox_call(ambari, "POST", "/_sandbox/faults", {"early_completion": True, "watch_broker": address})
    try:
        result = run_module("ambari_restart", {
            "url": ambari["url"], "username": ambari["username"], "password": ambari["password"], "cluster_name": ambari["cluster_name"],
            "service": "KAFKA", "components": ["KAFKA_BROKER"], "only_stale": False, "poll_interval": 0.2, "wait_timeout": 120,
            "bootstrap_servers": [address],
        })
    finally:
        sandbox_call(ambari, "DELETE", "/_sandbox/faults")
    assert not result.get("failed"), result.get("msg")
    assert [r["hosts"] for r in result["requests"]] == [[h] for h in workers]
    assert all(r["status"] == "COMPLETED" and r["started"] and r["brokers_back"] for r in result["requests"])

    log = sandbox_call(ambari, "GET", "/_sandbox/restarts")["restarts"][logged_before:]
    assert [e["host_name"] for e in log] == workers
    for entry in log:
        # The hazard was real: Ambari said COMPLETED (and STARTED) before the broker answered again.
        assert entry["started_ms"] < entry["broker_back_ms"], entry
    for previous, following in zip(log, log[1:]):
        # Not before the emulator last saw the broker down (its probe's success, broker_back_ms, can come later than the
        # module's under load).
        assert following["requested_ms"] >= previous["broker_down_ms"], (previous, following)
