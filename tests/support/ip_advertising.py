# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a lab started with `up(advertise_ip=True)` must show, read with clients of this process's own: every broker
advertises its IP address (a Kafka metadata request) and Ambari's stored kafka-env holds the runbook's IP-advertising
snippet in a new config version with no component stale (GETs to the Ambari emulator), so the two agree."""
from __future__ import annotations

import base64
import ipaddress
import json
import urllib.request

from sandbox import probes
from sandbox.ambari_seed import IP_ADVERTISING_SNIPPET


def ambari_get(state: dict, alias: str, path: str) -> dict:
    ambari = state["clusters"][alias]["ambari"]
    request = urllib.request.Request(f"{ambari['url']}/api/v1/clusters/{ambari['cluster_name']}{path}", headers={
        "Authorization": "Basic " + base64.b64encode(f"{ambari['username']}:{ambari['password']}".encode()).decode(),
        "X-Requested-By": "tests", "Accept": "application/json, text/plain"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


def advertised(state: dict, alias: str) -> list:
    broker = state["clusters"][alias]["brokers"][0]
    return sorted(b.host for b in probes.kafka_metadata(broker["host"], broker["port"]))


def assert_ip_advertising_as_ambari_stores(state: dict) -> None:
    for alias, cluster in state["clusters"].items():
        hosts = advertised(state, alias)
        assert hosts == sorted(broker["host"] for broker in cluster["brokers"]), alias
        assert all(ipaddress.ip_address(host) for host in hosts)
        tag = ambari_get(state, alias, "?fields=Clusters/desired_configs")["Clusters"]["desired_configs"]["kafka-env"]["tag"]
        assert tag != "version1"  # a new version, as after the runbook's step
        content = ambari_get(state, alias, f"/configurations?type=kafka-env&tag={tag}")["items"][0]["properties"]["content"]
        assert content.endswith(IP_ADVERTISING_SNIPPET)
        stale = ambari_get(state, alias, "/host_components?HostRoles/stale_configs=true")["items"]
        assert stale == [], "the brokers started with the configuration Ambari reports"
