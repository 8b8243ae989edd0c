# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""API conformance of the sandbox's Ambari emulator (docs/reference/ambari-api.md)."""
from __future__ import annotations

import json
import sys
import time

import pytest

pytestmark = pytest.mark.integration

WN0 = "wn0-primar.emul.internal.cloudapp.net"
WN1 = "wn1-primar.emul.internal.cloudapp.net"
ALL_WORKERS = [WN0, WN1, "wn2-primar.emul.internal.cloudapp.net"]


def test_desired_configs_and_hdinsight_defaults(emulator):
    desired = emulator.get("?fields=Clusters/desired_configs")["Clusters"]["desired_configs"]
    assert set(desired) >= {"kafka-broker", "kafka-env"}
    broker = emulator.properties("kafka-broker")
    assert broker["auto.create.topics.enable"] == "false"
    assert broker["listeners"] == "PLAINTEXT://localhost:9092"
    assert len(broker) >= 20
    assert broker["zookeeper.connect"].startswith("zk0-primar.")
    env = emulator.properties("kafka-env")
    assert env["content"].startswith("#!/bin/bash") and "export LOG_DIR={{kafka_log_dir}}" in env["content"]


def test_configuration_by_type_and_tag_shape(emulator):
    tag = emulator.desired_tag("kafka-broker")
    body = emulator.get(f"/configurations?type=kafka-broker&tag={tag}")
    (item,) = body["items"]
    assert item["type"] == "kafka-broker" and item["tag"] == tag and item["version"] == 1
    assert "properties_attributes" in item
    # Without a tag Ambari lists the versions but not their properties.
    listing = emulator.get("/configurations?type=kafka-broker")["items"]
    assert listing and all("properties" not in entry for entry in listing)


def test_hosts_with_ips_and_component_hosts(emulator):
    hosts = emulator.get("/hosts?fields=Hosts/host_name,Hosts/ip")["items"]
    by_name = {h["Hosts"]["host_name"]: h["Hosts"]["ip"] for h in hosts}
    assert by_name[WN0] == "127.20.60.10" and len(by_name) == 7
    # Without fields=, a collection lists only key properties, as Ambari does.
    assert "ip" not in emulator.get("/hosts")["items"][0]["Hosts"]
    brokers = emulator.get("/services/KAFKA/components/KAFKA_BROKER?fields=host_components/HostRoles/host_name")
    assert sorted(hc["HostRoles"]["host_name"] for hc in brokers["host_components"]) == ALL_WORKERS
    zookeepers = emulator.get("/services/ZOOKEEPER/components/ZOOKEEPER_SERVER?fields=host_components/HostRoles/host_name")
    assert len(zookeepers["host_components"]) == 3


def test_wrong_or_missing_credentials_are_403(emulator):
    status, body = emulator.call("GET", "", auth=("admin", "wrong"))
    assert status == 403 and body["status"] == 403 and "Invalid username/password" in body["message"]
    status, body = emulator.call("GET", "", auth=None)
    assert status == 403 and body["message"] == "Authentication required"


def test_writes_without_x_requested_by_are_refused(emulator):
    before = emulator.desired_tag("kafka-broker")
    status, body = emulator.call(
        "PUT", "", {"Clusters": {"desired_config": [{"type": "kafka-broker", "tag": "x1", "properties": {}}]}}, requested_by=False,
    )
    assert status == 400 and body["message"] == "CSRF protection is turned on. X-Requested-By HTTP header is required."
    assert emulator.desired_tag("kafka-broker") == before


def test_unknown_paths_and_clusters_are_404_json(emulator):
    status, body = emulator.call("GET", "/nothing/here")
    assert status == 404 and body["status"] == 404 and "doesn't exist" in body["message"]
    status, body = emulator.call("GET", f"{emulator.root}/api/v1/clusters/other")
    assert status == 404 and "Cluster not found" in body["message"]
    assert emulator.call("GET", "/requests/999")[0] == 404


def test_put_desired_config_creates_a_version_with_note_and_history(emulator):
    props = dict(emulator.properties("kafka-broker"), **{"auto.create.topics.enable": "true"})
    status, body = emulator.put_config("kafka-broker", props, "version100", note="enable auto create")
    assert status == 200 and body["resources"][0]["service_config_version"] == 2
    assert emulator.desired_tag("kafka-broker") == "version100"
    assert emulator.properties("kafka-broker")["auto.create.topics.enable"] == "true"
    history = emulator.config_versions()
    assert [v["service_config_version"] for v in history] == [1, 2]
    assert history[-1]["is_current"] and not history[0]["is_current"]
    assert history[-1]["service_config_version_note"] == "enable auto create"
    types = {c["type"]: c["tag"] for c in history[-1]["configurations"]}
    assert types == {"kafka-broker": "version100", "kafka-env": "version1"}
    # Identical properties make no version and nothing stale (AmbariManagementControllerImpl.updateCluster,
    # isConfigurationCreationNeeded), whatever the tag.
    status, _body = emulator.put_config("kafka-broker", props, "version101")
    assert status == 200 and len(emulator.config_versions()) == 2 and emulator.desired_tag("kafka-broker") == "version100"
    # A tag can be used once per type.
    status, body = emulator.put_config("kafka-broker", dict(props, **{"num.partitions": "4"}), "version100")
    assert status == 500 and "exists for 'kafka-broker'" in body["message"]


def test_bad_config_type_changes_nothing(emulator):
    status, body = emulator.put_config("no-such-type", {"a": "b"}, "v2")
    assert status == 400 and "does not exist in the stack" in body["message"]
    assert len(emulator.config_versions()) == 1 and emulator.stale() == []


def test_stale_then_restart_then_clean(emulator):
    assert emulator.stale() == []
    env = emulator.properties("kafka-env")
    emulator.put_config("kafka-env", dict(env, content=env["content"] + "# changed\n"), "version2")
    assert emulator.stale() == [(h, "KAFKA_BROKER") for h in ALL_WORKERS]
    status, accepted = emulator.restart([WN0, WN1])
    assert status == 202 and accepted["Requests"]["status"] == "Accepted"
    request_id = accepted["Requests"]["id"]
    seen = set()
    deadline = time.time() + 10
    while time.time() < deadline:
        state = emulator.get(f"/requests/{request_id}?fields=Requests/request_status,Requests/progress_percent")["Requests"]["request_status"]
        seen.add(state)
        if state == "COMPLETED":
            break
        time.sleep(0.1)
    assert {"PENDING", "IN_PROGRESS", "COMPLETED"} <= seen
    done = emulator.wait_request(request_id)
    assert [t["Tasks"]["status"] for t in done["tasks"]] == ["COMPLETED", "COMPLETED"]
    assert done["Requests"]["request_context"] == "Restart by test"
    # Only the restarted host components are clean.
    assert emulator.stale() == [("wn2-primar.emul.internal.cloudapp.net", "KAFKA_BROKER")]
    applied = json.loads((emulator.workdir / "broker-config.json").read_text())
    assert applied["kafka-env"].endswith("# changed\n") and applied["kafka-broker"]["listeners"] == "PLAINTEXT://localhost:9092"


def test_restart_of_unknown_host_is_400(emulator):
    status, body = emulator.restart(["wn9-nowhere"])
    assert status == 400 and "ServiceComponentHost not found" in body["message"]
    assert emulator.requests() == []


def test_failing_restart_command_ends_failed_and_keeps_stale(make_emulator):
    emu = make_emulator(broker_restart=[sys.executable, "-c", "import sys; sys.stderr.write('broker would not start'); sys.exit(3)"])
    env = emu.properties("kafka-env")
    emu.put_config("kafka-env", dict(env, content="x"), "version2")
    request_id = emu.restart([WN0])[1]["Requests"]["id"]
    done = emu.wait_request(request_id)
    assert done["Requests"]["request_status"] == "FAILED"
    assert done["tasks"][0]["Tasks"]["status"] == "FAILED" and "broker would not start" in done["tasks"][0]["Tasks"]["stderr"]
    assert (WN0, "KAFKA_BROKER") in emu.stale()


def test_fault_http_status_count_then_recovers(emulator):
    emulator.faults(http_status=503, count=2)
    assert emulator.call("GET", "")[0] == 503
    assert emulator.call("GET", "")[0] == 503
    assert emulator.call("GET", "")[0] == 200


def test_fault_fail_next_request_fails_only_one(emulator):
    emulator.faults(fail_next_request=True)
    first = emulator.wait_request(emulator.restart([WN0])[1]["Requests"]["id"])
    assert first["Requests"]["request_status"] == "FAILED"
    second = emulator.wait_request(emulator.restart([WN0])[1]["Requests"]["id"])
    assert second["Requests"]["request_status"] == "COMPLETED"


def test_fault_request_delay_and_clear(emulator):
    emulator.faults(request_delay_s=2)
    started = time.time()
    emulator.wait_request(emulator.restart([WN0])[1]["Requests"]["id"])
    assert time.time() - started >= 2.5
    emulator.clear_faults()
    assert emulator.call("GET", "/_sandbox/faults", auth=None)[1]["request_delay_s"] == 0


def test_bad_fault_is_rejected(emulator):
    status, body = emulator.call("POST", "/_sandbox/faults", {"http_stauts": 503}, auth=None, requested_by=False)
    assert status == 400 and "unknown fault keys" in body["message"]


def test_state_survives_emulator_restart(emulator):
    props = dict(emulator.properties("kafka-broker"), **{"num.partitions": "3"})
    emulator.put_config("kafka-broker", props, "version7")
    emulator.stop()
    emulator.start()
    assert emulator.desired_tag("kafka-broker") == "version7"
    assert len(emulator.config_versions()) == 2
    assert len(emulator.stale()) == 3
