# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ansible drives the sandbox through inventory.yml: every node answers, and modules on a node resolve
names through that node's hosts file (its python is the node's interpreter)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.ansible_play import run_tasks

pytestmark = pytest.mark.integration


def test_every_inventory_host_answers(sandbox):
    play = run_tasks([{"name": "ping", "ansible.builtin.ping": {}}], hosts="all", inventory=Path(sandbox["dir"]) / "inventory.yml")
    assert not play.failed, play.stdout + play.stderr
    workers = [n["name"] for c in sandbox["clusters"].values() for n in c["nodes"] if n["role"] == "worker"]
    assert sorted(t["host"] for t in play.tasks if t["task"] == "ping") == sorted(workers)


@pytest.mark.skipif(os.geteuid() != 0, reason="node isolation needs root (mount namespaces)")
def test_modules_on_a_node_resolve_through_its_hosts_file(sandbox):
    primary_worker = next(n for n in sandbox["clusters"]["primary"]["nodes"] if n["short"] == "wn1-primar")
    play = run_tasks(
        [{"name": "resolve a primary worker", "ansible.builtin.command": {"argv": ["getent", "hosts", primary_worker["name"]]},
          "register": "lookup", "failed_when": False, "changed_when": False}],
        hosts="primary_kafka:mirrormaker", inventory=Path(sandbox["dir"]) / "inventory.yml",
    )
    assert not play.failed, play.stdout + play.stderr
    results = {t["host"]: t["result"] for t in play.tasks if t["task"] == "resolve a primary worker"}
    assert set(results) == {*(n["name"] for n in sandbox["clusters"]["primary"]["nodes"] if n["role"] == "worker"), sandbox["mirrormaker_node"]}
    for host, result in results.items():
        if host == sandbox["mirrormaker_node"]:
            assert result["rc"] == 2 and result["stdout"] == "", "the secondary's node must not know the primary's names before hosts_sync"
        else:
            assert result["rc"] == 0 and result["stdout"].split()[0] == primary_worker["ip"]
