# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The way back on the sandbox's MirrorMaker node (sshuser with sudo, node-level supervisord, HDInsight's kafka account):
the failover stops MirrorMaker 2 before it translates and keeps its files, the role deploys it again, then
mirrormaker2_state absent removes the program and the files it wrote (check mode first), keeps what it did not write,
and changes nothing the second time. The kafka account's passwd/shadow/group/gshadow lines never change.

Read back independently: supervisorctl and the file system inside the node (as root, through the node's exec wrapper),
/proc for the stand-in's PID, and a fresh kafka-python consumer for records mirrored after the stop.
The tests run in file order against one deployment (module fixture).
"""
from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from sandbox.nodes import account_lines
from tests.support import mm2_kafka_io as kafka_io
from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO

pytestmark = pytest.mark.integration

# mirror.yml's mirrormaker2 stage (with mirror_host, tagged always, before it), as the README runs it.
PLAYBOOK = REPO / "playbooks" / "mirror.yml"
# The role alone: absent runs no module that needs the virtualenv, so it works with the host's own Python.
ROLE_ONLY = [{"name": "MirrorMaker 2 alone", "hosts": "mirrormaker", "gather_facts": False, "roles": [{"role": "kafkaops.mirror.mirrormaker2"}]}]
PROGRAM = "kafka-mirrormaker2"
TOPIC = "mm2abs-orders"
REMOTE = f"primary.{TOPIC}"
# The role's defaults on a real host: nothing in the sandbox's inventory moves them.
CONFIG_DIR = "/etc/kafka-mirrormaker2"
PROGRAM_FILE = f"/etc/supervisor/conf.d/{PROGRAM}.conf"
STOP_TASK = "kafkaops.mirror.mirrormaker2 : Stop the program and unload it from supervisord"


class Node:
    """The MirrorMaker node, read as root from inside it: what an operator with sudo would see."""

    def __init__(self, state):
        self.state = state
        self.inventory = Path(state["dir"]) / "inventory.yml"
        self.host = next(node for node in state["clusters"]["secondary"]["nodes"] if node["name"] == state["mirrormaker_node"])
        mm_vars = yaml.safe_load(self.inventory.read_text())["all"]["children"]["mirrormaker"]["vars"]
        self.supervisorctl = shlex.split(mm_vars["mirrormaker2_supervisorctl"])
        self.primary = state["clusters"]["primary"]["bootstrap_servers"]
        self.secondary = state["clusters"]["secondary"]["bootstrap_servers"]

    def run(self, *argv) -> subprocess.CompletedProcess:
        return subprocess.run([self.host["exec"], *argv], capture_output=True, text=True, timeout=60, check=False)

    def ctl(self, *args) -> subprocess.CompletedProcess:
        return self.run(*self.supervisorctl, *args)

    def pid(self):
        out = self.ctl("pid", PROGRAM).stdout.strip()
        return int(out) if out.isdigit() and int(out) > 0 else None

    def exists(self, path: str) -> bool:
        return self.run("test", "-e", path).returncode == 0

    def listing(self, path: str) -> list:
        return sorted(self.run("ls", "-A", path).stdout.split())

    def accounts(self) -> dict:
        return account_lines(self.host, "kafka", "hadoop")

    def deploy(self, check=False, **overrides):
        extra = self.model()
        extra.update(overrides)
        return run_playbook(PLAYBOOK, inventory=self.inventory, extra_vars=extra, check=check, diff=True, tags="mirrormaker2", timeout=600)

    def absent(self, check=False):
        playbook = Path(self.state["dir"]) / "mirrormaker2-alone.yml"
        playbook.write_text(yaml.safe_dump(ROLE_ONLY))
        return run_playbook(playbook, inventory=self.inventory, extra_vars={**self.model(), "mirrormaker2_state": "absent"}, check=check,
                            diff=True, timeout=600)

    @staticmethod
    def model() -> dict:
        flow = {"source": "primary", "target": "secondary", "topics": ["mm2abs-.*"], "groups": ["mm2abs-.*"],
                "refresh_topics_interval_seconds": 2, "emit_checkpoints_interval_seconds": 2}
        return {"mirrormaker2_flows": [flow], "mirrormaker2_max_lag": 0, "mirrormaker2_health_timeout": 120,
                "mirrormaker2_health_poll_interval": 2}

    def mirrored(self) -> int:
        return sum(kafka_io.end_offsets(self.secondary, REMOTE).values())

    def log_tail(self) -> str:
        """MirrorMaker's own log: a copy made twice shows there as a restart (or a crash) before an offset commit."""
        return self.run("tail", "-n", "60", f"{CONFIG_DIR}/logs/{PROGRAM}.log").stdout


def gone(pid: int) -> bool:
    """The stand-in ran in the node's mount namespace only: its PID is this machine's."""
    return not Path(f"/proc/{pid}").exists()


def nothing_more_arrives(node: Node, count: int) -> None:
    """Produce `count` records on the source; after several poll and refresh intervals the target has none of them."""
    before = node.mirrored()
    kafka_io.produce(node.primary, TOPIC, count, 2, start=10_000)
    time.sleep(8)
    assert node.mirrored() == before, "records produced after the stop reached the target"


@pytest.fixture(scope="module")
def node(sandbox):
    node = Node(sandbox)
    kafka_io.create(node.primary, TOPIC, 2)
    kafka_io.produce(node.primary, TOPIC, 200, 2)
    node.accounts_before = node.accounts()
    assert node.accounts_before["passwd"] and node.accounts_before["group"], "the sandbox's MirrorMaker node has no kafka account"
    yield node
    # Whatever a failed test left: the session's sandbox runs nothing of ours afterwards.
    if node.exists(CONFIG_DIR) or node.pid():
        node.absent()


def test_deploy_uses_the_existing_kafka_account(node):
    result = node.deploy()
    assert not result.failed, result.stdout[-4000:]
    assert node.pid() is not None
    assert node.mirrored() == 200, node.log_tail()
    owner = node.run("stat", "-c", "%U %G %a", f"{CONFIG_DIR}/connect-mirror-maker.properties").stdout.split()
    assert owner == ["kafka", "hadoop", "600"]
    assert node.accounts() == node.accounts_before


def test_failover_stops_mirrormaker_and_keeps_its_files(node):
    pid = node.pid()
    extra = {"failover_pause": False, "failover_groups": ["mm2abs-none"], "failover_topics": ["mm2abs-.*"],
             "failover_lag_timeout": 60, "failover_lag_poll_interval": 1}
    result = run_playbook(REPO / "playbooks" / "failover.yml", inventory=node.inventory, extra_vars=extra, timeout=600)
    assert not result.failed, result.stdout[-4000:]
    assert result.task(STOP_TASK)["changed"]
    status = node.ctl("status", PROGRAM)
    assert status.returncode == 4 and "no such process" in status.stdout, status.stdout
    assert gone(pid)
    assert not node.exists(PROGRAM_FILE)
    assert node.exists(f"{CONFIG_DIR}/connect-mirror-maker.properties"), "the stop removed the configuration"
    nothing_more_arrives(node, 50)
    assert node.accounts() == node.accounts_before


def test_the_role_starts_it_again(node):
    # The failover recorded its cut-over on the node, which keeps MirrorMaker stopped until the role is told to resume
    # (the day-two test covers the hold itself).
    assert node.exists(f"{CONFIG_DIR}/failed-over.json"), "the failover left no cut-over record"
    result = node.deploy(mirrormaker2_resume_after_failover=True)
    assert not result.failed, result.stdout[-4000:]
    assert node.pid() is not None
    assert not node.exists(f"{CONFIG_DIR}/failed-over.json"), "the resume left the cut-over record"
    assert node.mirrored() == 250, "the records produced while it was stopped were not copied once after the restart:\n" + node.log_tail()


def test_absent_in_check_mode_changes_nothing(node):
    pid = node.pid()
    result = node.absent(check=True)
    assert not result.failed, result.stdout[-4000:]
    assert result.changed_count > 0
    assert node.pid() == pid
    assert node.exists(PROGRAM_FILE) and node.exists(f"{CONFIG_DIR}/connect-mirror-maker.properties")


def test_absent_removes_what_the_role_wrote_and_keeps_the_rest(node):
    pid = node.pid()
    node.run("sh", "-c", f"echo keep > {CONFIG_DIR}/operator-notes.txt")
    node.run("sh", "-c", f"echo rotated > {CONFIG_DIR}/logs/{PROGRAM}.log.1")  # as supervisord rotates the service log
    result = node.absent()
    assert not result.failed, result.stdout[-4000:]
    status = node.ctl("status", PROGRAM)
    assert status.returncode == 4 and "no such process" in status.stdout, status.stdout
    assert gone(pid)
    assert not node.exists(PROGRAM_FILE)
    left = node.run("ls", "-la", f"{CONFIG_DIR}/logs").stdout
    assert node.listing(CONFIG_DIR) == ["operator-notes.txt"], f"absent removed a file it did not write, or left one it did; logs/: {left}"
    assert node.accounts() == node.accounts_before
    nothing_more_arrives(node, 30)


def test_absent_again_changes_nothing_until_the_directory_empties(node):
    again = node.absent()
    assert not again.failed and again.changed_count == 0, [t["task"] for t in again.tasks if t["result"].get("changed")]
    node.run("rm", f"{CONFIG_DIR}/operator-notes.txt")
    emptied = node.absent()
    assert not emptied.failed and emptied.changed_count == 1, emptied.stdout[-3000:]
    assert not node.exists(CONFIG_DIR)
    assert node.accounts() == node.accounts_before
