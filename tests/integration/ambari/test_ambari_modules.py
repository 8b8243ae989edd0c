# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ambari_config, ambari_restart and ambari_hosts_info against a standalone emulator; state read back with plain urllib."""
from __future__ import annotations

import sys

import pytest

from tests.support.ansible_play import run_module

pytestmark = pytest.mark.integration

WORKERS = [f"wn{k}-primar.emul.internal.cloudapp.net" for k in range(3)]


def connection(emu, **overrides):
    args = {"url": emu.url, "username": "admin", "password": emu.config["password"], "cluster_name": emu.config["cluster_name"]}
    args.update(overrides)
    return args


def broker_change(emu, **extra):
    return dict(connection(emu), config_type="kafka-broker", properties={"listeners": "PLAINTEXT://0.0.0.0:9092", "auto.create.topics.enable": True}, **extra)


# ---- ambari_config -------------------------------------------------------------------------------
def test_config_changes_once_then_is_idempotent(emulator):
    first = run_module("ambari_config", broker_change(emulator, note="open listeners"), diff=True)
    assert first["changed"] and first["old_tag"] == "version1" and first["new_tag"] != "version1"
    assert first["changed_properties"] == ["auto.create.topics.enable", "listeners"]
    (diff,) = first["diff"]
    assert diff["before"] == "auto.create.topics.enable=false\nlisteners=PLAINTEXT://localhost:9092\n"
    assert diff["after"] == "auto.create.topics.enable=true\nlisteners=PLAINTEXT://0.0.0.0:9092\n"
    assert emulator.desired_tag("kafka-broker") == first["new_tag"]
    props = emulator.properties("kafka-broker")
    assert props["listeners"] == "PLAINTEXT://0.0.0.0:9092" and props["auto.create.topics.enable"] == "true"
    assert props["num.io.threads"] == "8"  # untouched keys are carried into the new version
    history = emulator.config_versions()
    assert len(history) == 2 and history[-1]["service_config_version_note"] == "open listeners"

    second = run_module("ambari_config", broker_change(emulator, note="open listeners"), diff=True)
    assert not second["changed"] and second["new_tag"] == second["old_tag"] == first["new_tag"]
    assert second.get("diff", []) == []
    assert len(emulator.config_versions()) == 2


def test_config_check_mode_makes_no_version(emulator):
    result = run_module("ambari_config", broker_change(emulator), check=True, diff=True)
    assert result["changed"] and result["new_tag"] is None
    assert "listeners=PLAINTEXT://0.0.0.0:9092" in result["diff"][0]["after"]
    assert emulator.desired_tag("kafka-broker") == "version1"
    assert len(emulator.config_versions()) == 1 and emulator.stale() == []


def test_config_null_removes_a_property(emulator):
    result = run_module("ambari_config", dict(connection(emulator), config_type="kafka-broker", properties={"log.roll.hours": None, "num.io.threads": None}))
    assert result["changed"] and result["changed_properties"] == ["num.io.threads"]
    assert "num.io.threads" not in emulator.properties("kafka-broker")


def test_config_managed_block_in_kafka_env(emulator):
    stock = emulator.properties("kafka-env")["content"]
    block = {"marker": "# {mark} test block", "content": "IP_ADDRESS=$(hostname -i)\necho one\n"}
    args = dict(connection(emulator), config_type="kafka-env", block=block)
    first = run_module("ambari_config", args, diff=True)
    assert first["changed"] and first["changed_properties"] == ["content"]
    assert first["diff"][0]["after"] == "# BEGIN test block\nIP_ADDRESS=$(hostname -i)\necho one\n# END test block\n"
    content = emulator.properties("kafka-env")["content"]
    assert content == stock + "# BEGIN test block\nIP_ADDRESS=$(hostname -i)\necho one\n# END test block\n"
    assert not run_module("ambari_config", args)["changed"]

    args["block"] = dict(block, content="IP_ADDRESS=$(hostname -i)\necho two\n")
    replaced = run_module("ambari_config", args, diff=True)
    assert replaced["changed"] and "echo one" in replaced["diff"][0]["before"] and "echo two" in replaced["diff"][0]["after"]
    content = emulator.properties("kafka-env")["content"]
    assert content.count("# BEGIN test block") == 1 and "echo two" in content and content.startswith(stock)

    args["block"] = dict(block, state="absent")
    assert run_module("ambari_config", args)["changed"]
    assert emulator.properties("kafka-env")["content"] == stock
    assert len(emulator.config_versions()) == 4


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"properties": {"listeners": ["a", "b"]}}, "property 'listeners' must be a string"),
        ({"block": {"content": "x", "marker": "# no mark here"}}, "must contain {mark}"),
        ({"properties": {"content": "x"}, "block": {"content": "y"}}, "set both in properties and as the block's property"),
    ],
)
def test_config_bad_input_fails_without_side_effect(emulator, bad, message):
    result = run_module("ambari_config", dict(connection(emulator), config_type="kafka-env", **bad))
    assert result["failed"] and message in result["msg"]
    assert len(emulator.config_versions()) == 1 and emulator.desired_tag("kafka-env") == "version1"


def test_config_unknown_type_names_the_known_ones(emulator):
    result = run_module("ambari_config", dict(connection(emulator), config_type="kafka-brokr", properties={"a": 1}))
    assert result["failed"] and "no config type 'kafka-brokr'" in result["msg"] and "kafka-broker" in result["msg"]


def test_wrong_password_fails_cleanly(emulator):
    result = run_module("ambari_config", broker_change(emulator, password="not-the-Passw0rd"))
    assert result["failed"] and f"wrong Ambari credentials for {emulator.url}" in result["msg"]
    assert "not-the-Passw0rd" not in str(result)
    assert len(emulator.config_versions()) == 1


def test_injected_503s_are_retried(emulator):
    emulator.faults(http_status=503, count=3)
    result = run_module("ambari_config", broker_change(emulator))
    assert result["changed"] and not result.get("failed")
    assert emulator.call("GET", "/_sandbox/faults", auth=None)[1]["count"] == 0
    assert emulator.desired_tag("kafka-broker") == result["new_tag"]


def test_persistent_503_gives_up_with_a_clear_message(emulator):
    emulator.faults(http_status=503, count=50)
    result = run_module("ambari_config", broker_change(emulator))
    emulator.clear_faults()
    assert result["failed"] and "failed after 5 attempts: HTTP 503" in result["msg"]
    assert len(emulator.config_versions()) == 1


def test_4xx_is_not_retried(emulator):
    emulator.faults(http_status=404, count=2)
    result = run_module("ambari_config", broker_change(emulator))
    assert result["failed"] and "HTTP 404" in result["msg"] and "attempts" not in result["msg"]
    assert emulator.call("GET", "/_sandbox/faults", auth=None)[1]["count"] == 1


def test_unreachable_ambari(emulator):
    result = run_module("ambari_config", broker_change(emulator, url="http://127.20.50.250:9", timeout=2))
    assert result["failed"] and "unreachable" in result["msg"] and "127.20.50.250" in result["msg"]


# ---- ambari_restart ------------------------------------------------------------------------------
def restart_args(emu, **extra):
    return dict(connection(emu), **{"service": "KAFKA", "poll_interval": 0.2, "wait_timeout": 30, **extra})


def make_stale(emu):
    assert run_module("ambari_config", broker_change(emu))["changed"]
    assert emu.stale() == [(h, "KAFKA_BROKER") for h in WORKERS]


def test_restart_nothing_stale_sends_no_request(emulator):
    result = run_module("ambari_restart", restart_args(emulator))
    assert not result["changed"] and result["requests"] == [] and result["restarted"] == []
    assert emulator.requests() == []


def test_restart_check_mode_then_real_then_idempotent(emulator):
    make_stale(emulator)
    check = run_module("ambari_restart", restart_args(emulator), check=True, diff=True)
    assert check["changed"] and [r["host"] for r in check["restarted"]] == WORKERS and check["requests"] == []
    assert check["diff"]["before"].count("KAFKA_BROKER on") == 3
    assert emulator.requests() == [] and len(emulator.stale()) == 3

    real = run_module("ambari_restart", restart_args(emulator, rolling=False))
    assert real["changed"] and len(real["requests"]) == 1 and real["requests"][0]["status"] == "COMPLETED"
    assert real["requests"][0]["hosts"] == WORKERS
    assert emulator.stale() == []
    (request,) = emulator.requests()
    assert request["Requests"]["request_status"] == "COMPLETED"

    again = run_module("ambari_restart", restart_args(emulator))
    assert not again["changed"] and len(emulator.requests()) == 1


def test_rolling_restart_one_request_per_host(emulator):
    make_stale(emulator)
    result = run_module("ambari_restart", restart_args(emulator, rolling=True))
    assert [r["hosts"] for r in result["requests"]] == [[h] for h in WORKERS]
    assert all(r["status"] == "COMPLETED" for r in result["requests"])
    assert len(emulator.requests()) == 3 and emulator.stale() == []


def test_restart_named_hosts_only(emulator):
    make_stale(emulator)
    result = run_module("ambari_restart", restart_args(emulator, hosts=[WORKERS[1]]))
    assert [r["host"] for r in result["restarted"]] == [WORKERS[1]]
    assert emulator.stale() == [(WORKERS[0], "KAFKA_BROKER"), (WORKERS[2], "KAFKA_BROKER")]


def test_failed_restart_names_request_and_tasks(emulator):
    make_stale(emulator)
    emulator.faults(fail_next_request=True)
    result = run_module("ambari_restart", restart_args(emulator, context="Apply mirror settings", rolling=False))
    assert result["failed"]
    (request,) = emulator.requests()
    request_id = request["Requests"]["id"]
    assert f"Ambari request {request_id} ('Apply mirror settings')" in result["msg"] and "ended FAILED" in result["msg"]
    assert f"KAFKA_BROKER on {WORKERS[0]}: FAILED" in result["msg"] and "fail_next_request" in result["msg"]
    assert result["requests"][0]["id"] == request_id
    assert len(emulator.stale()) == 3


def test_rolling_restart_stops_at_first_failure(make_emulator):
    emu = make_emulator(broker_restart=[sys.executable, "-c", "raise SystemExit('broker refused to start')"])
    make_stale(emu)
    result = run_module("ambari_restart", restart_args(emu, rolling=True))
    assert result["failed"] and "broker refused to start" in result["msg"]
    assert len(emu.requests()) == 1 and len(emu.stale()) == 3


def test_restart_wait_timeout(emulator):
    make_stale(emulator)
    emulator.faults(request_delay_s=4)
    result = run_module("ambari_restart", restart_args(emulator, wait_timeout=1))
    assert result["failed"] and "still" in result["msg"] and "after 1 s" in result["msg"]


def test_restart_unknown_host_fails_without_request(emulator):
    make_stale(emulator)
    result = run_module("ambari_restart", restart_args(emulator, hosts=[WORKERS[0], "wn7-primar.emul.internal.cloudapp.net"]))
    assert result["failed"] and "wn7-primar.emul.internal.cloudapp.net: not among the service's host components" in result["msg"]
    assert emulator.requests() == [] and len(emulator.stale()) == 3


def test_restart_unknown_service_fails(emulator):
    result = run_module("ambari_restart", restart_args(emulator, service="KAFAK"))
    # AmbariManagementControllerImpl.getHostComponents: an unknown service is ServiceNotFoundException, HTTP 404.
    assert result["failed"] and "cluster primary" in result["msg"] and "has no service KAFAK" in result["msg"]
    assert "Service not found" in result["msg"] and emulator.requests() == []


def test_restart_bad_timeout_fails_before_any_call(emulator):
    make_stale(emulator)
    result = run_module("ambari_restart", restart_args(emulator, wait_timeout=0))
    assert result["failed"] and "must be positive" in result["msg"]
    assert emulator.requests() == []


# ---- ambari_hosts_info ---------------------------------------------------------------------------
def test_hosts_info(emulator):
    result = run_module("ambari_hosts_info", connection(emulator), check=True)
    assert not result["changed"] and result["cluster_name"] == "primary"
    by_name = {h["host_name"]: h for h in result["hosts"]}
    assert by_name[WORKERS[0]]["ip"] == "127.20.60.10" and by_name[WORKERS[0]]["short_name"] == "wn0-primar"
    assert result["kafka_brokers"] == WORKERS
    assert [h.split(".")[0] for h in result["zookeeper_servers"]] == ["zk0-primar", "zk1-primar", "zk2-primar"]
