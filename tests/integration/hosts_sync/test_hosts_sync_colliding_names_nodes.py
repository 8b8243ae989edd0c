# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hosts_sync between kafka-prod-50 and kafka-prod-51 end to end, on the sandbox's nodes (issue 27 item 7): the clusters'
names share their first six characters, so both clusters' nodes are wn0-kafkap, ... in short form, told apart only by
their FQDNs (each cluster its own DNS suffix, as each HDInsight cluster's network has). playbooks/mirror.yml's hosts_sync
stage runs over SSH as sshuser on the secondary's nodes (its head node hn0 as the MirrorMaker host, and its workers).

Read back independently on every one of them, over SSH with the node's own resolver (getent): every FQDN of the primary's
workers and ZooKeeper nodes resolves to the primary's address, every short name still means the node's own cluster, and
the play says which short names it left out. A second run changes nothing.
"""
from __future__ import annotations

import os
import shlex
import subprocess

import pytest

from sandbox.nodes import ssh_argv
from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO
from tests.support.sandbox_fixture import running_sandbox

pytestmark = [pytest.mark.integration, pytest.mark.skipif(os.geteuid() != 0, reason="the nodes are SSH hosts only as root (ssh node mode)")]

PLAYBOOK = REPO / "playbooks" / "mirror.yml"
SUBNET = 28  # a sandbox of its own (third octets 28 and 29): no other test file uses them
NAMES = {"primary": "kafka-prod-50", "secondary": "kafka-prod-51"}
REPORT_TASK = "kafkaops.mirror.hosts_sync : Say which short names are not copied and why"


@pytest.fixture(scope="module")
def lab(tmp_path_factory, sandbox_net):
    with running_sandbox(tmp_path_factory.mktemp("colliding-names"), f"the sandbox with clusters {NAMES} (net {sandbox_net}, subnet {SUBNET})",
                         provider="noida", net=sandbox_net, subnet=SUBNET, names=NAMES, mirrormaker_node="hn0", timeout=180) as state:
        yield state


def getent(node: dict, names: list) -> dict:
    """name -> the address the node's own resolver gives (None when it gives none), in one SSH login."""
    script = "; ".join(f"printf '%s ' {shlex.quote(name)}; getent hosts {shlex.quote(name)} | head -1 | cut -d' ' -f1; echo" for name in names)
    proc = subprocess.run(ssh_argv(node, script), capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    answers = {}
    for line in proc.stdout.splitlines():
        if line.strip():
            fields = line.split()
            answers[fields[0]] = fields[1] if len(fields) > 1 else None
    return answers


def play(state: dict, check: bool = False):
    # hosts_sync alone, on the nodes' own Python (--skip-tags mirror_host: the MirrorMaker host's virtualenv is not needed).
    return run_playbook(PLAYBOOK, inventory=f"{state['dir']}/inventory.yml", tags="hosts_sync", skip_tags="mirror_host", check=check, diff=True,
                        timeout=900)


def test_every_fqdn_resolves_on_the_secondary_s_nodes_and_the_short_names_left_out_are_reported(lab):
    state = lab
    primary, secondary = state["clusters"]["primary"]["nodes"], state["clusters"]["secondary"]["nodes"]
    # The lab as HDInsight would make these clusters: the same short names, distinct FQDNs, one init program per node.
    assert sorted(n["short"] for n in primary) == sorted(n["short"] for n in secondary)
    assert not {n["name"] for n in primary} & {n["name"] for n in secondary}
    programs = [n["program"] for n in primary + secondary if "program" in n]
    assert len(programs) == len(set(programs)) == 8  # hn0 and wn0-wn2 of each cluster are hosts
    targets = [n for n in secondary if "ssh" in n]
    assert sorted(n["short"] for n in targets) == ["hn0-kafkap", "wn0-kafkap", "wn1-kafkap", "wn2-kafkap"]
    copied = {n["name"]: n["ip"] for n in primary if n["role"] in ("worker", "zookeeper")}
    own_short = {n["short"]: n["ip"] for n in secondary}
    hosts_before = {n["name"]: subprocess.run(ssh_argv(n, "cat /etc/hosts"), capture_output=True, text=True, timeout=60, check=True).stdout
                    for n in targets}
    for target in targets:
        assert [name for name, ip in getent(target, list(copied)).items() if ip is not None] == [], target["name"]

    # Check mode: the report, nothing written.
    preview = play(state, check=True)
    assert not preview.failed, preview.stdout[-4000:]
    for target in targets:
        assert subprocess.run(ssh_argv(target, "cat /etc/hosts"), capture_output=True, text=True, timeout=60, check=True).stdout == hosts_before[target["name"]]

    result = play(state)
    assert not result.failed, result.stdout[-4000:]
    reports = {entry["host"]: entry["result"]["msg"] for entry in result.tasks if entry["task"] == REPORT_TASK}
    assert sorted(reports) == sorted(n["name"] for n in targets)
    left_out = sorted(n["short"] for n in primary if n["role"] in ("worker", "zookeeper"))
    for host, message in reports.items():
        assert f"{len(left_out)} short name(s) of primary left out" in message, message
        assert all(short in message for short in left_out), message

    for target in targets:
        seen = getent(target, [*copied, *own_short])
        assert {name: seen[name] for name in copied} == copied, target["name"]
        # Short names still mean the node's own cluster: the copied block holds none of the primary's.
        assert {short: seen[short] for short in own_short} == own_short, target["name"]
        text = subprocess.run(ssh_argv(target, "cat /etc/hosts"), capture_output=True, text=True, timeout=60, check=True).stdout
        assert text.startswith(hosts_before[target["name"]]), "the node's own lines stay as they were"

    again = play(state)
    assert not again.failed and again.changed_count == 0, [t["task"] for t in again.tasks if t["result"].get("changed")]
