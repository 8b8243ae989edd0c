# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ssh node mode: the inventory's nodes are hosts as strict as HDInsight's. Ansible's login user is unprivileged
with passwordless sudo, what a node writes stays on that node, the MirrorMaker node has its `kafka` account and a
Kafka home that claims a version, and `down` leaves no process or mount behind while `up` keeps what nodes wrote."""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from sandbox import api, kafka_home, nodes, probes, processes

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="host nodes need root (overlay mounts, namespaces)")]


def ssh(node: dict, command: str) -> subprocess.CompletedProcess:
    return subprocess.run(nodes.ssh_argv(node, command), capture_output=True, text=True, check=False, timeout=60)


def node_named(state: dict, short: str) -> dict:
    return next(n for c in state["clusters"].values() for n in c["nodes"] if n["short"] == short)


def mirrormaker_node(state: dict) -> dict:
    return next(n for n in state["clusters"]["secondary"]["nodes"] if n["name"] == state["mirrormaker_node"])


def machine_hosts() -> str:
    return hashlib.sha256(Path("/etc/hosts").read_bytes()).hexdigest()


def mounts_of(directory: str) -> list:
    """Every mount, in any process's namespace, at or under `directory`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found += [line for line in (entry / "mountinfo").read_text().splitlines() if f" {directory}/" in line or f" {directory} " in line]
            except OSError:
                pass
    return found


def test_ansible_login_is_an_unprivileged_user_with_passwordless_sudo(sandbox):
    assert sandbox["node_mode"] == "ssh"
    for node in (n for c in sandbox["clusters"].values() for n in c["nodes"] if n["role"] == "worker"):
        login = ssh(node, "id -un; id -u; sudo -n id -u; hostname")
        assert login.returncode == 0, login.stderr
        user, uid, sudo_uid, hostname = login.stdout.split()
        assert (user, sudo_uid, hostname) == ("sshuser", "0", node["short"]) and uid != "0"
        root = subprocess.run(nodes.ssh_argv({**node, "ssh": {**node["ssh"], "user": "root"}}, "true"), capture_output=True, text=True, check=False)
        assert root.returncode == 255 and "Permission denied" in root.stderr, "root must not log in"


def test_root_work_without_sudo_is_denied(sandbox):
    node = mirrormaker_node(sandbox)
    hosts_before = Path(node["hosts_file"]).read_bytes()
    denied = ssh(node, "echo 127.9.9.9 nowhere >> /etc/hosts")
    assert denied.returncode != 0 and "Permission denied" in denied.stderr
    inventory = yaml.safe_load((Path(sandbox["dir"]) / "inventory.yml").read_text())
    ctl = inventory["all"]["children"]["mirrormaker"]["vars"]["mirrormaker2_supervisorctl"]
    assert ssh(node, f"{ctl} status").returncode != 0, "the node's supervisord must answer root only"
    status = ssh(node, f"sudo -n {ctl} status")
    assert status.returncode == 0 and "sshd" in status.stdout and "RUNNING" in status.stdout, status.stdout + status.stderr
    assert Path(node["hosts_file"]).read_bytes() == hosts_before


def test_the_mirrormaker_node_has_hdinsight_s_kafka_account(sandbox):
    node = mirrormaker_node(sandbox)
    account = ssh(node, "id -un kafka; id -gn kafka; getent passwd kafka | cut -d: -f6,7")
    assert account.returncode == 0, account.stderr
    assert account.stdout.split() == ["kafka", "hadoop", "/home/kafka:/bin/bash"]
    lines = nodes.account_lines(node, "kafka", "hadoop")
    assert lines["passwd"].endswith(":/home/kafka:/bin/bash") and lines["group"].startswith("hadoop:")
    assert lines["passwd"].split(":")[3] == lines["group"].split(":")[2], "kafka's primary group is hadoop"
    others = [n for c in sandbox["clusters"].values() for n in c["nodes"] if "ssh" in n and n is not node]
    assert all(nodes.account_lines(n, "kafka", "hadoop")["passwd"] is None for n in others), "only the MirrorMaker node has it"


def test_the_kafka_home_holds_the_stand_in_and_claims_its_version(sandbox):
    node = mirrormaker_node(sandbox)
    home = sandbox["kafka_home"]
    assert home == kafka_home.KAFKA_HOME_ON_NODE and sandbox["kafka_version"] == kafka_home.DEFAULT_KAFKA_VERSION
    listing = ssh(node, f"ls {home}/libs; test -x {home}/bin/connect-mirror-maker.sh && echo executable")
    assert listing.stdout.split() == [f"kafka-clients-{kafka_home.DEFAULT_KAFKA_VERSION}.jar", "executable"], listing.stderr
    # The service account runs it: the stand-in must not need anything only root can read (the checkout, the venv).
    run = ssh(node, f"cd / && sudo -n -u kafka {home}/bin/connect-mirror-maker.sh --help")
    assert run.returncode == 0 and "connect-mirror-maker.sh" in run.stdout, run.stdout + run.stderr
    assert ssh(node_named(sandbox, "wn1-second"), f"test -e {home}").returncode == 1, "only the MirrorMaker node has the Kafka home"


def test_a_claimed_kafka_version_names_the_clients_jar(fresh_sandbox):
    state = fresh_sandbox("noida", kafka_version="2.4.1")
    assert state["kafka_version"] == "2.4.1"
    listing = ssh(mirrormaker_node(state), f"ls {state['kafka_home']}/libs")
    assert listing.stdout.split() == ["kafka-clients-2.4.1.jar"]


def test_sudo_writes_stay_on_the_node_and_survive_down_and_up(fresh_sandbox):
    state = fresh_sandbox("noida")
    machine_before = machine_hosts()
    node, neighbour = node_named(state, "wn0-second"), node_named(state, "wn1-second")
    source = node_named(state, "wn1-primar")
    line = f"{source['ip']}\t{source['name']}\t{source['short']}"
    neighbour_before = ssh(neighbour, "cat /etc/hosts").stdout
    edit = ssh(node, f"printf '%s\\n' '{line}' | sudo -n tee -a /etc/hosts >/dev/null && getent hosts {source['short']}")
    assert edit.returncode == 0 and edit.stdout.split()[0] == source["ip"], edit.stderr
    assert Path(node["hosts_file"]).read_text().endswith(line + "\n"), "the node's /etc/hosts is its upper dir's"
    assert ssh(neighbour, "cat /etc/hosts").stdout == neighbour_before and source["name"] not in neighbour_before
    assert machine_hosts() == machine_before

    uppers = [n["upper"] for c in state["clusters"].values() for n in c["nodes"] if "ssh" in n]
    assert len(uppers) == 8 and all(processes.in_node(upper) for upper in uppers)  # hn0 and wn0-wn2 of each cluster
    api.down(state["dir"])
    assert [pid for upper in uppers for pid in processes.in_node(upper)] == [], "a node process outlived `down`"
    assert mounts_of(state["dir"]) == [], "a node mount outlived `down`"
    assert not probes.port_in_use(node["ip"], nodes.SSH_PORT) and machine_hosts() == machine_before

    again = api.up(state["dir"], provider="noida", net=state["net"], subnet=state["subnet"])
    node = node_named(again, "wn0-second")
    kept = ssh(node, f"getent hosts {source['short']}; sudo -n true && echo sudo")
    assert kept.stdout.split() == [source["ip"], source["name"], source["short"], "sudo"], kept.stderr
    assert nodes.account_lines(node, "kafka", "hadoop") == nodes.account_lines(mirrormaker_node(state), "kafka", "hadoop")


def test_local_node_mode_keeps_the_local_connection(fresh_sandbox):
    state = fresh_sandbox("noida", node_mode="local")
    assert state["node_mode"] == "local" and state["nodes_isolated"] is True
    assert not any("ssh" in n for c in state["clusters"].values() for n in c["nodes"])
    assert set(state["processes"]) == {"primary-broker", "primary-ambari", "secondary-broker", "secondary-ambari"}
    assert (Path(state["kafka_home"]) / "bin" / "connect-mirror-maker.sh").is_file()
