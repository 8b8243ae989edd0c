# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator is as strict as the Ambari it claims (2.7.3 by default, HDInsight's), each rule following Ambari's source,
and the collection's client and modules pass it: headers, no duplicate restart after a gateway failure, rolling order."""
from __future__ import annotations

import pytest

from tests.support.ambari_emulator import cluster_hosts
from tests.support.ansible_play import run_module, run_tasks

pytestmark = pytest.mark.integration

BODY = {"RequestInfo": {"command": "RESTART", "context": "x", "operation_level": {"level": "HOST_COMPONENT", "cluster_name": "primary"}},
        "Requests/resource_filters": [{"service_name": "KAFKA", "component_name": "KAFKA_BROKER", "hosts": "wn0-primar.emul.internal.cloudapp.net"}]}


def connection(emu):
    return {"url": emu.url, "username": "admin", "password": emu.config["password"], "cluster_name": emu.config["cluster_name"]}


@pytest.mark.parametrize("accept, status", [("application/json", 406), ("text/html, application/xml", 406), ("text/plain;q=0", 406),
                                            ("*/*", 200), ("application/json, text/javascript, */*; q=0.01", 200), ("text/plain", 200)])
def test_accept_must_admit_text_plain(emulator, accept, status):
    """Every API method is @Produces(MediaType.TEXT_PLAIN) (ambari-server api/services/ClusterService.java); Jersey 1.x
    answers 406 Not Acceptable when Accept matches nothing a method produces. The web UI's jQuery Accept ends in */*."""
    code, _body = emulator.call("GET", "?fields=Clusters/desired_configs", headers={"Accept": accept})
    assert code == status


def test_json_body_fails_before_2_7_4_and_changes_nothing(emulator, make_emulator):
    """controller/AmbariServer.java turns Jackson's POJOMappingFeature on, so an application/json body is read by Jackson
    into the String parameter of ClusterService.updateCluster / RequestService.createRequests and fails;
    api/ContentTypeOverrideFilter.java, first in release-2.7.4, rewrites application/json to text/plain."""
    code, body = emulator.call("POST", "/requests", BODY, headers={"Content-Type": "application/json"})
    assert code == 400 and "START_OBJECT" in body["message"] and emulator.requests() == []
    code, _body = emulator.call("POST", "/requests", BODY, headers={"Content-Type": "text/plain"})
    assert code == 202

    newer = make_emulator("ambari-2.7.4", ambari_version="2.7.4")
    code, _body = newer.call("POST", "/requests", BODY, headers={"Content-Type": "application/json"})
    assert code == 202


def test_unknown_service_is_404(emulator):
    """AmbariManagementControllerImpl.getHostComponents: cluster.getService throws ServiceNotFoundException (404)."""
    code, body = emulator.call("GET", "/host_components?HostRoles/service_name=KAFAK&fields=HostRoles/host_name")
    assert code == 404 and "Service not found" in body["message"]
    code, _body = emulator.call("GET", "/host_components?HostRoles/service_name=KAFKA&fields=HostRoles/host_name")
    assert code == 200


def test_processed_then_504_fault_stores_the_write(emulator):
    emulator.faults(processed_status=504)
    code, _body = emulator.call("POST", "/requests", BODY)
    assert code == 504
    assert [r["Requests"]["request_context"] for r in emulator.requests()] == ["x"]


def test_restart_module_after_processed_504_queues_one_request(emulator):
    """Issue 17: the gateway answered 504 after Ambari accepted the POST; the module follows that request, none is queued twice."""
    assert run_module("ambari_config", dict(connection(emulator), config_type="kafka-broker", properties={"num.partitions": 3}))["changed"]
    emulator.faults(processed_status=504)
    result = run_module("ambari_restart", dict(connection(emulator), service="KAFKA", rolling=False, poll_interval=0.2, wait_timeout=30))
    assert not result.get("failed"), result.get("msg")
    assert len(emulator.requests()) == 1 and result["requests"][0]["id"] == emulator.requests()[0]["Requests"]["id"]
    assert result["requests"][0]["status"] == "COMPLETED" and emulator.stale() == []


def test_rolling_restart_runs_one_host_at_a_time_in_order(emulator):
    """Read from the emulator's restart log: each host is asked to restart only after the previous one was started again."""
    assert run_module("ambari_config", dict(connection(emulator), config_type="kafka-broker", properties={"num.partitions": 3}))["changed"]
    result = run_module("ambari_restart", dict(connection(emulator), service="KAFKA", poll_interval=0.2, wait_timeout=30))
    assert not result.get("failed"), result.get("msg")
    log = emulator.restarts()
    hosts = [entry["host_name"] for entry in log]
    assert hosts == sorted(hosts) and len(hosts) == 3 and len({e["request_id"] for e in log}) == 3
    for previous, following in zip(log, log[1:]):
        assert following["requested_ms"] >= previous["started_ms"], (previous, following)
    assert all(r["started"] for r in result["requests"])


def test_esp_cluster_has_sasl_plaintext_listeners(make_emulator):
    emu = make_emulator("esp", esp=True)
    broker = emu.properties("kafka-broker")
    assert broker["listeners"] == "SASL_PLAINTEXT://localhost:9092" and broker["security.inter.broker.protocol"] == "SASL_PLAINTEXT"
    assert emu.get("?fields=Clusters/security_type")["Clusters"]["security_type"] == "KERBEROS"


def test_zoo_cfg_change_makes_kafka_brokers_stale(emulator):
    """KAFKA lists zoo.cfg among its <configuration-dependencies> (common-services/KAFKA/0.8.1/metainfo.xml)."""
    props = dict(emulator.properties("zoo.cfg"), tickTime="3000")
    assert emulator.put_config("zoo.cfg", props, "version-zk")[0] == 200
    components = {component for _host, component in emulator.stale()}
    assert components == {"KAFKA_BROKER", "ZOOKEEPER_SERVER"} and len(emulator.stale()) == 6


def test_brokers_stale_before_the_run_are_restarted_one_at_a_time(make_emulator):
    """A fresh real cluster can already have stale brokers: the role restarts them (rolling) though it changes nothing."""
    hosts = cluster_hosts()
    stale = [hosts[2]["host_name"], hosts[1]["host_name"]]
    emu = make_emulator("stale", hosts=hosts, stale_at_start=[[h, "KAFKA_BROKER"] for h in stale])
    assert emu.stale() == sorted((h, "KAFKA_BROKER") for h in stale)
    task = {"name": "apply ambari_kafka", "ansible.builtin.include_role": {"name": "kafkaops.mirror.ambari_kafka"},
            "vars": {"ambari_url": emu.url, "ambari_cluster_name": "primary", "ambari_password": emu.config["password"],
                     "ambari_kafka_poll_interval": 0.2}}
    play = run_tasks([task])
    assert not play.failed, play.stdout[-3000:]
    assert [e["host_name"] for e in emu.restarts()] == sorted(stale) and emu.stale() == []
    assert len(emu.config_versions()) == 1
    assert not run_tasks([task]).changed_count and len(emu.restarts()) == 2


def test_restart_leaves_components_in_maintenance_alone(make_emulator):
    """HostRoles/maintenance_state is the effective state (AmbariManagementControllerImpl.getHostComponents via
    MaintenanceStateHelper.getEffectiveState); a service-level operation skips ON and IMPLIED_FROM_HOST."""
    hosts = cluster_hosts()
    workers = [h["host_name"] for h in hosts if "KAFKA_BROKER" in h["components"]]
    emu = make_emulator("maintenance", hosts=hosts, maintenance_on=[[workers[0], "KAFKA_BROKER"]], hosts_in_maintenance=[workers[2]])
    states = {i["HostRoles"]["host_name"]: i["HostRoles"]["maintenance_state"]
              for i in emu.get("/host_components?HostRoles/service_name=KAFKA&fields=HostRoles/maintenance_state")["items"]}
    assert states == {workers[0]: "ON", workers[1]: "OFF", workers[2]: "IMPLIED_FROM_HOST"}
    assert run_module("ambari_config", dict(connection(emu), config_type="kafka-broker", properties={"num.partitions": 3}))["changed"]

    result = run_module("ambari_restart", dict(connection(emu), service="KAFKA", poll_interval=0.2, wait_timeout=30))
    assert not result.get("failed"), result.get("msg")
    assert [e["host_name"] for e in emu.restarts()] == [workers[1]]
    assert [(s["host"], s["maintenance_state"]) for s in result["in_maintenance"]] == [(workers[0], "ON"), (workers[2], "IMPLIED_FROM_HOST")]
    assert any("maintenance mode" in w for w in result.get("warnings", []))
    assert emu.stale() == sorted([(workers[0], "KAFKA_BROKER"), (workers[2], "KAFKA_BROKER")])

    named = run_module("ambari_restart", dict(connection(emu), service="KAFKA", hosts=[workers[0]], poll_interval=0.2, wait_timeout=30))
    assert not named.get("failed") and [e["host_name"] for e in emu.restarts()] == [workers[1], workers[0]]
