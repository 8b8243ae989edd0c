# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hosts_sync on the noida sandbox: the secondary's nodes learn the primary's worker and ZooKeeper names, from the
primary nodes' hosts files or from the primary's Ambari (same block), and resolve them. The block is removed at the
end, so later tests on the session's sandbox see the HDInsight default (own cluster only) again.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.ansible_play import run_tasks

pytestmark = pytest.mark.integration

WRITE_TASK = "kafkaops.mirror.hosts_sync : Write the managed block of primary"


def sync(state, **role_vars):
    task = {"name": "sync hosts", "ansible.builtin.include_role": {"name": "kafkaops.mirror.hosts_sync"}, "vars": role_vars}
    return run_tasks([task], hosts="secondary_kafka", inventory=Path(state["dir"]) / "inventory.yml")


def resolve_on_mirrormaker_node(state, name):
    task = {"name": "resolve", "ansible.builtin.command": {"argv": ["getent", "hosts", name]}, "register": "lookup",
            "failed_when": False, "changed_when": False}
    play = run_tasks([task], hosts="mirrormaker", inventory=Path(state["dir"]) / "inventory.yml")
    return play.task("resolve")


def test_hosts_sync_on_the_sandbox(sandbox):
    primary = sandbox["clusters"]["primary"]
    targets = [n for n in sandbox["clusters"]["secondary"]["nodes"] if n["role"] == "worker"]
    original = {n["name"]: Path(n["hosts_file"]).read_bytes() for n in targets}
    expected = sorted(f"{n['ip']}\t{n['name']}\t{n['short']}" for n in primary["nodes"] if n["role"] in ("worker", "zookeeper"))
    try:
        play = sync(sandbox)
        assert not play.failed, play.stdout[-4000:]
        for node in targets:
            text = Path(node["hosts_file"]).read_text()
            assert text.startswith(original[node["name"]].decode())
            lines = text.splitlines()
            block = lines[lines.index("# BEGIN kafkaops.mirror hosts_sync primary") + 1:lines.index("# END kafkaops.mirror hosts_sync primary")]
            assert sorted(block) == expected
        if os.geteuid() == 0:  # node isolation (the node's own /etc/hosts) needs root
            worker = next(n for n in primary["nodes"] if n["short"] == "wn1-primar")
            assert resolve_on_mirrormaker_node(sandbox, worker["name"])["stdout"].split()[0] == worker["ip"]

        # Ambari's host list gives the same entries, so switching the source changes nothing.
        from_ambari = sync(sandbox, hosts_sync_source="ambari")
        assert not from_ambari.failed, from_ambari.stdout[-4000:]
        assert from_ambari.changed_count == 0
    finally:
        removed = sync(sandbox, hosts_sync_state="absent", hosts_sync_backup=False)
        assert not removed.failed, removed.stdout[-4000:]
    assert {n["name"]: Path(n["hosts_file"]).read_bytes() for n in targets} == original
