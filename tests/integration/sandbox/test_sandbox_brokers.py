# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox brokers answer Kafka metadata with the address HDInsight would advertise, and a restart
through the Ambari emulator applies the stored config (the IP-advertising runbook step)."""
from __future__ import annotations

import base64
import json
import time
import urllib.request

import pytest

from sandbox import api, probes

pytestmark = pytest.mark.integration

IP_ADVERTISING_SNIPPET = """
# Configure Kafka to advertise IP addresses instead of FQDN
IP_ADDRESS=$(hostname -i)
echo advertised.listeners=$IP_ADDRESS
sed -i.bak -e '/advertised/{/advertised@/!d;}' /usr/hdp/current/kafka-broker/conf/server.properties
echo "advertised.listeners=PLAINTEXT://$IP_ADDRESS:9092" >> /usr/hdp/current/kafka-broker/conf/server.properties
"""


def advertised(state: dict, alias: str) -> list:
    broker = state["clusters"][alias]["brokers"][0]
    return [(b.host, b.port) for b in probes.kafka_metadata(broker["host"], broker["port"])]


class Ambari:
    """Just the calls this test makes, straight over HTTP (independent of the collection's client)."""

    def __init__(self, cluster: dict):
        info = cluster["ambari"]
        self.base = f"{info['url']}/api/v1/clusters/{info['cluster_name']}"
        self.auth = "Basic " + base64.b64encode(f"{info['username']}:{info['password']}".encode()).decode()

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(self.base + path, data=json.dumps(body).encode() if body else None, method=method,
                                         headers={"Authorization": self.auth, "X-Requested-By": "sandbox-tests"})
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            return json.loads(raw) if raw else {}

    def kafka_env(self) -> str:
        tag = self.call("GET", "?fields=Clusters/desired_configs")["Clusters"]["desired_configs"]["kafka-env"]["tag"]
        return self.call("GET", f"/configurations?type=kafka-env&tag={tag}")["items"][0]["properties"]["content"]

    def set_kafka_env(self, content: str) -> None:
        self.call("PUT", "", {"Clusters": {"desired_config": [{"type": "kafka-env", "tag": f"version{int(time.time() * 1000)}",
                                                               "properties": {"content": content}}]}})

    def restart_brokers(self, hosts: list) -> dict:
        accepted = self.call("POST", "/requests", {
            "RequestInfo": {"command": "RESTART", "context": "sandbox test", "operation_level": {"level": "HOST_COMPONENT"}},
            "Requests/resource_filters": [{"service_name": "KAFKA", "component_name": "KAFKA_BROKER", "hosts": ",".join(hosts)}],
        })
        request_id = accepted["Requests"]["id"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            body = self.call("GET", f"/requests/{request_id}?fields=Requests/request_status")
            if body["Requests"]["request_status"] in ("COMPLETED", "FAILED", "TIMEDOUT", "ABORTED"):
                return body
            time.sleep(0.2)
        raise AssertionError(f"restart request {request_id} did not finish in 30 s")


def test_noida_advertises_its_bind_address(sandbox, kafka_admin):
    for alias, cluster in sandbox["clusters"].items():
        assert advertised(sandbox, alias) == [(cluster["brokers"][0]["host"], 9092)]
        described = kafka_admin(sandbox, alias).describe_cluster()
        assert [(b["host"], b["port"]) for b in described["brokers"]] == [(cluster["brokers"][0]["host"], 9092)]


@pytest.mark.tansu
def test_tansu_advertises_the_worker_fqdn_like_hdinsight(sandbox_tansu, kafka_admin, record_property):
    record_property("startup_seconds_tansu", sandbox_tansu["startup_seconds"])
    for alias, cluster in sandbox_tansu["clusters"].items():
        assert advertised(sandbox_tansu, alias) == [(cluster["brokers"][0]["node"], 9092)]
        assert cluster["brokers"][0]["node"].startswith("wn0-")
    with pytest.raises(RuntimeError, match="only the cluster's nodes can resolve"):
        kafka_admin(sandbox_tansu, "primary")


@pytest.mark.tansu
def test_ambari_restart_applies_ip_advertising_to_the_broker(fresh_sandbox):
    state = fresh_sandbox("tansu")
    cluster = state["clusters"]["primary"]
    broker = cluster["brokers"][0]
    assert advertised(state, "primary") == [(broker["node"], 9092)]
    ambari = Ambari(cluster)
    ambari.set_kafka_env(ambari.kafka_env() + IP_ADVERTISING_SNIPPET)
    assert advertised(state, "primary") == [(broker["node"], 9092)], "a config change alone must not reach the running broker"
    workers = [n["name"] for n in cluster["nodes"] if n["role"] == "worker"]
    result = ambari.restart_brokers(workers)
    assert result["Requests"]["request_status"] == "COMPLETED"
    assert advertised(state, "primary") == [(broker["host"], 9092)]
    assert advertised(state, "secondary") == [(state["clusters"]["secondary"]["brokers"][0]["node"], 9092)]
    report = api.status(state["dir"])
    assert report["crashed"] == []
    assert report["processes"]["primary-broker"]["pid"] != state["processes"]["primary-broker"]
    # down must stop the restarted broker too, although its PID is not the one up recorded
    restarted = report["processes"]["primary-broker"]["pid"]
    api.down(state["dir"])
    assert not probes.port_in_use(broker["host"], 9092), f"restarted broker {restarted} still listening"
