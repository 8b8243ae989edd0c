# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sandbox lifecycle: up, status, up again, crash, down; nothing is left behind."""
from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from sandbox import api, processes, probes
from sandbox.inventory import control_path_dir
from sandbox.jvm import SHORT_LIVED_JVM_OPTIONS
from tests.support.checkout import REPO

pytestmark = pytest.mark.integration
# Host nodes (ssh node mode, as root) start six inits of their own: 2.3 s on an idle machine (1.2 s without), 17-24 s
# at a load average of 30 on 2 cores (4.5 s without); the limit catches a hang or a regression, not load.
STARTUP_LIMIT_S = 30.0 if os.geteuid() == 0 else 10.0
CLI_SUBNET = 5  # the session fixtures use 1-2 and fresh_sandbox 3-4 of the same net


def recorded_pids(state: dict) -> list:
    return [state["supervisord"]["pid"], *state["processes"].values()]


def test_up_status_up_again_down(fresh_sandbox, record_property):
    state = fresh_sandbox("noida")
    record_property("startup_seconds_noida", state["startup_seconds"])
    print(f"noida sandbox startup: {state['startup_seconds']} s")
    assert state["startup_seconds"] < STARTUP_LIMIT_S
    node_inits = {n["program"] for c in state["clusters"].values() for n in c["nodes"] if "program" in n}
    # The head node and the workers of each cluster are hosts (ZooKeeper nodes stay name views).
    assert node_inits == ({f"node-{kind}-{short}" for kind in ("hn0", "wn0", "wn1", "wn2") for short in ("primar", "second")}
                          if os.geteuid() == 0 else set())
    assert set(state["processes"]) == {"primary-broker", "primary-ambari", "secondary-broker", "secondary-ambari", *node_inits}
    assert all(processes.alive(pid) for pid in recorded_pids(state))
    on_disk = json.loads((Path(state["dir"]) / "state.json").read_text())
    assert on_disk["processes"] == state["processes"] and on_disk["supervisord"]["pid"] == state["supervisord"]["pid"]

    report = api.status(state["dir"])
    assert report["running"] and report["crashed"] == []
    assert {name: entry["pid"] for name, entry in report["processes"].items()} == state["processes"]

    again = api.up(state["dir"], provider="noida", net=state["net"], subnet=state["subnet"])
    assert again["already_running"] is True
    assert again["supervisord"]["pid"] == state["supervisord"]["pid"] and again["processes"] == state["processes"]

    result = api.down(state["dir"])
    assert set(result["stopped"]) == {"supervisord", *state["processes"]}
    assert not [pid for pid in recorded_pids(state) if processes.alive(pid)]
    assert not Path(state["supervisord"]["socket"]).exists()
    for cluster in state["clusters"].values():
        broker = cluster["brokers"][0]
        assert not probes.port_in_use(broker["host"], broker["port"])
    assert api.status(state["dir"])["running"] is False


def test_status_reports_a_crashed_broker(fresh_sandbox):
    state = fresh_sandbox("noida")
    os.kill(state["processes"]["secondary-broker"], signal.SIGKILL)
    processes.wait_gone([state["processes"]["secondary-broker"]], 5)
    # The broker is gone (a zombie counts as gone) before supervisord has reaped it and changed its state: on a busy
    # machine that takes a moment, so give supervisord up to 10 s to notice.
    deadline = time.monotonic() + 10
    report = api.status(state["dir"])
    while not report["crashed"] and time.monotonic() < deadline:
        time.sleep(0.2)
        report = api.status(state["dir"])
    assert report["crashed"] == ["secondary-broker"]
    assert report["running"] is False
    assert report["processes"]["primary-broker"]["state"] in ("RUNNING", "STARTING")
    cli = subprocess.run([sys.executable, "-m", "sandbox", "status", "--dir", state["dir"]], cwd=REPO, capture_output=True, text=True, check=False)
    assert cli.returncode == 1
    assert "secondary-broker" in cli.stdout and "CRASHED" in cli.stdout


def test_down_stops_children_of_a_killed_supervisord(fresh_sandbox):
    state = fresh_sandbox("noida")
    os.kill(state["supervisord"]["pid"], signal.SIGKILL)
    processes.wait_gone([state["supervisord"]["pid"]], 5)
    orphans = list(state["processes"].values())
    assert all(processes.alive(pid) for pid in orphans), "supervisord's children outlive a SIGKILL of supervisord"
    assert api.status(state["dir"])["running"] is False
    api.down(state["dir"])
    assert not [pid for pid in orphans if processes.alive(pid)]
    assert not Path(state["supervisord"]["socket"]).exists()


def test_up_again_after_down_reuses_the_directory(fresh_sandbox):
    state = fresh_sandbox("noida")
    api.down(state["dir"])
    again = api.up(state["dir"], provider="noida", net=state["net"], subnet=state["subnet"])
    assert "already_running" not in again
    assert again["supervisord"]["pid"] != state["supervisord"]["pid"]
    assert api.status(state["dir"])["running"]


def test_taken_port_fails_clearly_and_starts_nothing(fresh_sandbox, sandbox_net, tmp_path):
    busy = f"127.{sandbox_net}.3.10"
    with socket.socket() as blocker:
        # An earlier fresh sandbox's broker on this address leaves connections in TIME_WAIT, which fail a plain bind.
        blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        blocker.bind((busy, 9092))
        blocker.listen()
        with pytest.raises(api.SandboxError, match=rf"{busy}:9092 .*primary broker.* already in use"):
            fresh_sandbox("noida")
    assert not (tmp_path / "sandbox-noida-0" / "state.json").exists()


def test_broker_that_cannot_start_fails_up_with_its_log_and_leaves_nothing(tmp_path, sandbox_net):
    directory = tmp_path / "broken"
    (directory / "clusters" / "secondary").mkdir(parents=True)
    (directory / "clusters" / "secondary" / "broker-config.json").write_text("{not json")
    started = time.monotonic()
    with pytest.raises(api.SandboxError, match=r"(?s)secondary-broker is (EXITED|FATAL|BACKOFF).*broker-config.json is not valid JSON"):
        api.up(directory, provider="noida", net=sandbox_net, subnet=CLI_SUBNET)
    assert time.monotonic() - started < STARTUP_LIMIT_S, "a dead broker must fail `up` at once, not at the timeout (60 s)"
    state = api.read_state(directory)
    assert not [pid for pid in [state["supervisord"]["pid"], *state["processes"].values()] if processes.alive(pid)]
    assert not probes.port_in_use(f"127.{sandbox_net}.{CLI_SUBNET}.10", 9092)


def test_missing_provider_binary_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("CALF_TANSU_BIN", str(tmp_path / "no-such-tansu"))
    with pytest.raises(api.SandboxError, match="tansu binary not usable.*no-such-tansu"):
        api.up(tmp_path / "t", provider="tansu", net=255)
    # A release the lab does not assemble is refused before anything is fetched or started.
    with pytest.raises(api.SandboxError, match="Kafka 2.5.0 is not a release the lab assembles; choose one of 2.4.1, 3.2.0"):
        api.up(tmp_path / "a", provider="apache", net=255, releases={"primary": "2.5.0"})
    assert not (tmp_path / "t" / "state.json").exists() and not (tmp_path / "a" / "state.json").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="host nodes (ssh node mode) need root; without it the inventory uses local connections")
def test_inventory_matches_the_contract(sandbox):
    inventory = yaml.safe_load((Path(sandbox["dir"]) / "inventory.yml").read_text())["all"]
    assert "vars" not in inventory  # the direction is the groups' (primary_kafka -> secondary_kafka)
    groups = inventory["children"]
    assert set(groups) == {"primary_kafka", "secondary_kafka", "mirrormaker"}
    for alias in ("primary", "secondary"):
        cluster = sandbox["clusters"][alias]
        group = groups[f"{alias}_kafka"]
        assert group["vars"] == {
            "kafka_cluster_alias": alias,
            "kafka_bootstrap_servers": cluster["bootstrap_servers"],
            "ambari_url": cluster["ambari"]["url"],
            "ambari_cluster_name": cluster["name"],
            "ambari_username": "admin",
            "ambari_password": cluster["ambari"]["password"],
        }
        workers = [n for n in cluster["nodes"] if n["role"] == "worker"]
        assert list(group["hosts"]) == [n["name"] for n in workers]
        for node in workers:
            assert group["hosts"][node["name"]] == {
                "ansible_connection": "ssh",
                "ansible_host": node["ip"],
                "ansible_port": 22,
                "ansible_user": "sshuser",
                "ansible_ssh_private_key_file": str(Path(sandbox["dir"]) / "ssh" / "id_ed25519"),
                "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
                "ansible_control_path_dir": control_path_dir(sandbox),
                "ansible_pipelining": True,
                "ansible_python_interpreter": "/usr/bin/python3",
            }
    mirrormaker = groups["mirrormaker"]
    assert list(mirrormaker["hosts"]) == [sandbox["mirrormaker_node"]] and sandbox["mirrormaker_node"].startswith("wn0-second.")
    mm_vars = mirrormaker["vars"]
    node = next(n for n in sandbox["clusters"]["secondary"]["nodes"] if n["name"] == sandbox["mirrormaker_node"])
    assert mm_vars == {
        "mirrormaker2_kafka_home": "/usr/hdp/current/kafka-broker",
        "mirrormaker2_service_manager": "supervisor",
        "mirrormaker2_supervisorctl": f"{Path(sys.executable).parent / 'supervisorctl'} -c /etc/supervisor/supervisord.conf",
        "mirrormaker2_supervisor_conf_dir": "/etc/supervisor/conf.d",
        "mirror_host_pip_environment": {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": sandbox["wheelhouse"]},
        "mirror_validation_environment": {"SPARK_LOCAL_IP": node["ip"], "SPARK_SUBMIT_OPTS": SHORT_LIVED_JVM_OPTIONS},
        "mirrormaker2_jvm_performance_opts": SHORT_LIVED_JVM_OPTIONS,
    }
    wheels = sorted(p.name.split("-")[0] for p in Path(sandbox["wheelhouse"]).glob("*.whl"))
    assert {"kafka_python", "confluent_kafka", "pyspark"} <= set(wheels), wheels
    # Paths on the node: root inside the node sees them, and supervisorctl reaches the node's own supervisord.
    ctl = subprocess.run([node["exec"], *shlex.split(mm_vars["mirrormaker2_supervisorctl"]), "status"], capture_output=True, text=True, check=False)
    assert "sshd" in ctl.stdout and "RUNNING" in ctl.stdout and "broker" not in ctl.stdout, ctl.stdout + ctl.stderr
    assert subprocess.run([node["exec"], "test", "-d", mm_vars["mirrormaker2_supervisor_conf_dir"]], check=False).returncode == 0


def test_cli_up_status_down(tmp_path, sandbox_net):
    directory = str(tmp_path / "cli")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "sandbox", *args, "--dir", directory], cwd=REPO, capture_output=True, text=True, check=False, timeout=120)

    try:
        # noida: the CLI's lifecycle, not its default provider's start-up (real Kafka, run by make demo and tests/integration/real_kafka).
        first = run("up", "--provider", "noida", "--net", str(sandbox_net), "--subnet", str(CLI_SUBNET), "--json")
        assert first.returncode == 0, first.stderr
        state = json.loads(first.stdout)
        assert state["clusters"]["primary"]["bootstrap_servers"] == f"127.{sandbox_net}.{CLI_SUBNET}.10:9092"
        # The CLI puts MirrorMaker where HDInsight's runbooks do: the secondary's head node (the API's default is wn0).
        assert state["mirrormaker_node"].startswith("hn0-second.")
        inventory = yaml.safe_load((Path(directory) / "inventory.yml").read_text())["all"]["children"]
        assert list(inventory["mirrormaker"]["hosts"]) == [state["mirrormaker_node"]]
        assert state["mirrormaker_node"] not in inventory["secondary_kafka"]["hosts"]
        assert run("up", "--net", str(sandbox_net), "--subnet", str(CLI_SUBNET)).stdout.startswith(f"sandbox in {directory} is already running")
        assert run("status").returncode == 0
    finally:
        stopped = run("down")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert run("status").returncode == 3
