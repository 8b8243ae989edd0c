# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README's HDInsight quick-start inventory shape on the sandbox: FQDN bootstrap servers and the runbook's aliases
(primary-kafka-cluster, secondary-kafka-cluster), with brokers that advertise FQDNs (tansu, as HDInsight's do).

Before hosts_sync the MirrorMaker node (the secondary's wn0, whose hosts file holds its own cluster only) cannot resolve the
primary's names, and playbooks/mirror.yml's first preflight runs before hosts_sync: it must reach the primary at the address
hosts_sync is about to write and say so, in check mode too, and the gate after hosts_sync must then pass on the real names.
Read back independently: the node's own resolver (getent over SSH) and its hosts file, before and after.
"""
from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from sandbox.nodes import ssh_argv
from tests.support.ansible_play import run_playbook, run_tasks
from tests.support.checkout import REPO

pytestmark = [pytest.mark.integration, pytest.mark.tansu]

PLAYBOOK = REPO / "playbooks" / "mirror.yml"
SUMMARY_TASK = "kafkaops.mirror.preflight : Show the preflight summary"
FAIL_TASK = "kafkaops.mirror.preflight : Fail when any finding is an error"
ALIASES = {"primary": "primary-kafka-cluster", "secondary": "secondary-kafka-cluster"}  # the runbook's, as in the README
# Only the stages this is about: node_python and mirror_host run anyway (tagged always).
TAGS = "preflight,hosts_sync"


def readme_inventory(state: dict, path: Path) -> Path:
    """The sandbox's inventory in the README's shape: each cluster's bootstrap servers as FQDN:port, the runbook's aliases."""
    inventory = yaml.safe_load((Path(state["dir"]) / "inventory.yml").read_text())
    for alias, cluster in state["clusters"].items():
        group = inventory["all"]["children"][f"{alias}_kafka"]["vars"]
        group["kafka_cluster_alias"] = ALIASES[alias]
        group["kafka_bootstrap_servers"] = ",".join(f"{broker['node']}:{broker['port']}" for broker in cluster["brokers"])
    path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    return path


def mirrormaker_node(state: dict) -> dict:
    return next(node for node in state["clusters"]["secondary"]["nodes"] if node["name"] == state["mirrormaker_node"])


def on_node(node: dict, command: str) -> subprocess.CompletedProcess:
    return subprocess.run(ssh_argv(node, command), capture_output=True, text=True, timeout=60, check=False)


def summaries(result) -> list:
    """The preflight tables of the run, in order (mirror.yml: the first preflight, then the gate after hosts_sync)."""
    return [entry["result"]["msg"] for entry in result.tasks if entry["task"] == SUMMARY_TASK]


def row(table: list, alias: str) -> list:
    return next(line.split() for line in table if line.split()[:1] == [alias])


@pytest.fixture
def quick_start(sandbox_tansu, mirror_host_ready, tmp_path):
    state = sandbox_tansu
    mirror_host_ready(state)  # the virtualenv a first real run leaves, so that check mode can run the modules
    inventory = readme_inventory(state, tmp_path / "inventory.yml")
    yield state, inventory
    removed = run_tasks([{"name": "remove the block", "ansible.builtin.include_role": {"name": "kafkaops.mirror.hosts_sync"},
                          "vars": {"hosts_sync_state": "absent", "hosts_sync_backup": False}}],
                        hosts="secondary_kafka:mirrormaker", inventory=inventory)
    assert not removed.failed, removed.stdout[-3000:]


def test_readme_inventory_passes_the_first_preflight_before_hosts_sync(quick_start):
    state, inventory = quick_start
    node = mirrormaker_node(state)
    primary = state["clusters"]["primary"]["brokers"][0]
    primary_ip = next(n["ip"] for n in state["clusters"]["primary"]["nodes"] if n["name"] == primary["node"])
    hosts_before = on_node(node, "cat /etc/hosts").stdout
    assert on_node(node, f"getent ahosts {shlex.quote(primary['node'])}").returncode != 0, "the primary's FQDN resolves already"

    # The check can fail: without the resolution the first preflight stops on the primary's bootstrap name, as it did.
    unresolved = run_playbook(PLAYBOOK, inventory=inventory, tags=TAGS, check=True,
                              extra_vars={"preflight_resolve_through_hosts_sync": False})
    assert unresolved.failed
    assert "cluster primary-kafka-cluster: no metadata from " + primary["node"] in unresolved.task(FAIL_TASK)["msg"]

    # Check mode: nothing written, both preflights pass, the first says how it reached the primary.
    check = run_playbook(PLAYBOOK, inventory=inventory, tags=TAGS, check=True, diff=True)
    assert not check.failed, check.stdout[-5000:]
    first = summaries(check)[0]
    assert row(first, ALIASES["primary"])[1] == "ok" and row(first, ALIASES["secondary"])[1] == "ok", first
    note = [line for line in first if line.startswith("NOTE ")]
    assert note == [f"NOTE  cluster {ALIASES['primary']}: bootstrap {primary['node']}:{primary['port']} does not resolve on "
                    f"{node['name']} before hosts_sync; probed at {primary_ip}:{primary['port']}, the entry hosts_sync is about to write"], first
    assert on_node(node, "cat /etc/hosts").stdout == hosts_before
    assert on_node(node, f"getent ahosts {shlex.quote(primary['node'])}").returncode != 0

    # The real run: hosts_sync writes the entries, and the gate after it reaches the primary by its name.
    real = run_playbook(PLAYBOOK, inventory=inventory, tags=TAGS, diff=True)
    assert not real.failed, real.stdout[-5000:]
    first, gate = summaries(real)
    assert any(line.startswith("NOTE ") and primary["node"] in line for line in first)
    assert not any(line.startswith(("NOTE ", "ERROR")) for line in gate), gate
    primary_row = row(gate, ALIASES["primary"])
    assert primary_row[1] == "ok" and primary_row[3] == f"{len(state['clusters']['primary']['brokers'])}/{len(state['clusters']['primary']['brokers'])}", gate
    resolved = on_node(node, f"getent ahosts {shlex.quote(primary['node'])}")
    assert resolved.returncode == 0 and resolved.stdout.split()[0] == primary_ip, resolved.stdout
    assert f"kafkaops.mirror hosts_sync {ALIASES['primary']}" in on_node(node, "cat /etc/hosts").stdout

    # A second run: the names resolve now, so no NOTE, and nothing changes.
    again = run_playbook(PLAYBOOK, inventory=inventory, tags=TAGS)
    assert not again.failed and again.changed_count == 0, [t["task"] for t in again.tasks if t["result"].get("changed")]
    assert not any(line.startswith("NOTE ") for table in summaries(again) for line in table)
