# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options of `up`. `up(advertise_ip=True)` / `python -m sandbox up --advertise-ip`: the brokers start advertising their IP addresses and
Ambari's stored kafka-env holds the runbook's IP-advertising snippet, so the two agree (no component stale, the brokers
run what Ambari reports). Read back with a Kafka metadata request of this test's own and by GETs to the Ambari emulator;
tansu (which advertises FQDNs otherwise, as HDInsight's brokers do) and real Kafka (apache, KRaft 3.9.2 as the differential
test's lab). A directory whose Ambari kept a configuration without the snippet is refused, with nothing changed.
`up(mirrormaker_node=...)`: an unknown node, or another node than the directory started with, is refused too."""
from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import os
import urllib.request
from pathlib import Path

import pytest

from sandbox import api, probes
from sandbox.ambari_seed import IP_ADVERTISING_SNIPPET

pytestmark = pytest.mark.integration


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


@pytest.mark.parametrize("provider, options", [
    ("tansu", {}),
    # Real Kafka, as tests/integration/differential's lab: KRaft (no ZooKeeper JVM), local node mode.
    ("apache", {"node_mode": "local", "releases": {"primary": "3.9.2", "secondary": "3.9.2"}, "kafka_version": "3.9.2", "timeout": 300}),
])
def test_brokers_advertise_ips_and_ambari_holds_the_snippet(fresh_sandbox, provider, options):
    state = fresh_sandbox(provider, advertise_ip=True, **options)
    for alias, cluster in state["clusters"].items():
        ips = sorted(broker["host"] for broker in cluster["brokers"])
        assert advertised(state, alias) == ips, alias
        assert all(ipaddress.ip_address(host) for host in advertised(state, alias))
        tag = ambari_get(state, alias, "?fields=Clusters/desired_configs")["Clusters"]["desired_configs"]["kafka-env"]["tag"]
        assert tag != "version1"  # a new version, as after the runbook's step
        content = ambari_get(state, alias, f"/configurations?type=kafka-env&tag={tag}")["items"][0]["properties"]["content"]
        assert content.endswith(IP_ADVERTISING_SNIPPET)
        stale = ambari_get(state, alias, "/host_components?HostRoles/stale_configs=true")["items"]
        assert stale == [], "the brokers started with the configuration Ambari reports"


def test_a_kept_configuration_without_the_snippet_is_refused_and_left_as_it_was(fresh_sandbox):
    state = fresh_sandbox("tansu")
    assert advertised(state, "primary") == sorted(b["node"] for b in state["clusters"]["primary"]["brokers"])  # FQDNs
    api.down(state["dir"])
    stored = Path(state["dir"]) / "clusters" / "primary" / "ambari-state.json"
    before = hashlib.sha256(stored.read_bytes()).hexdigest()
    with pytest.raises(api.SandboxError, match="kafka-env has no IP advertising"):
        api.up(state["dir"], provider="tansu", net=state["net"], subnet=state["subnet"], advertise_ip=True)
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == before
    assert api.status(state["dir"])["running"] is False


@pytest.mark.skipif(os.geteuid() != 0, reason="hn0 is a host node only as root (ssh node mode)")
def test_an_unknown_or_changed_mirrormaker_node_is_refused(fresh_sandbox):
    state = fresh_sandbox("noida", mirrormaker_node="hn0")
    hn0 = next(n for n in state["clusters"]["secondary"]["nodes"] if n["role"] == "head")
    assert state["mirrormaker_node"] == hn0["name"] and "ssh" in hn0 and hn0["service_accounts"]
    api.down(state["dir"])
    kept = (Path(state["dir"]) / "state.json").read_bytes()
    for node, message in (("hn1", "choose one of the secondary's nodes hn0, wn0, wn1, wn2"), ("wn0", "ran MirrorMaker on hn0-second")):
        with pytest.raises(api.SandboxError, match=message):
            api.up(state["dir"], provider="noida", net=state["net"], subnet=state["subnet"], mirrormaker_node=node)
        assert (Path(state["dir"]) / "state.json").read_bytes() == kept
