# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-node hosts files and node pythons: each node sees its own cluster's names, and only those."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

RESOLVE = """
import json, os, socket, sys
result = {"pid": os.getpid()}
for name in sys.argv[1:]:
    try:
        result[name] = socket.gethostbyname(name)
    except OSError:
        result[name] = None
print(json.dumps(result))
"""


def run_as(node: dict, names: list) -> dict:
    process = subprocess.Popen([node["python"], "-c", RESOLVE, *names], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    result = json.loads(out)
    result["wrapper_pid"] = process.pid
    return result


def fingerprint(path: str) -> tuple:
    data = Path(path).read_bytes()
    stat = os.stat(path)
    return hashlib.sha256(data).hexdigest(), stat.st_ino, stat.st_mtime_ns


def test_hosts_files_are_seeded_like_hdinsight_nodes(sandbox):
    for alias, cluster in sandbox["clusters"].items():
        other = next(c for a, c in sandbox["clusters"].items() if a != alias)
        expected_entries = [(n["ip"], n["name"], n["short"]) for n in cluster["nodes"]]
        assert len(expected_entries) == 7  # hn0, wn0-2, zk0-2
        for node in cluster["nodes"]:
            lines = [line.split() for line in Path(node["hosts_file"]).read_text().splitlines() if line.strip()]
            assert lines[0] == ["127.0.0.1", "localhost"]
            entries = [tuple(fields) for fields in lines if not fields[0].startswith(("127.0.0.1", "::1"))]
            assert entries == expected_entries
            assert not any(n["name"] in " ".join(map(" ".join, lines)) for n in other["nodes"])


def test_addresses_and_names_follow_the_contract(sandbox):
    net = sandbox["net"]
    for index, (alias, short) in enumerate((("primary", "primar"), ("secondary", "second")), start=1):
        nodes = {n["short"]: n for n in sandbox["clusters"][alias]["nodes"]}
        assert nodes[f"hn0-{short}"]["ip"] == f"127.{net}.{index}.2" and nodes[f"hn0-{short}"]["role"] == "head"
        for k in range(3):
            assert nodes[f"wn{k}-{short}"]["ip"] == f"127.{net}.{index}.{10 + k}" and nodes[f"wn{k}-{short}"]["role"] == "worker"
            assert nodes[f"zk{k}-{short}"]["ip"] == f"127.{net}.{index}.{20 + k}" and nodes[f"zk{k}-{short}"]["role"] == "zookeeper"
        assert all(n["name"].startswith(n["short"] + ".") and n["name"].endswith(".internal.cloudapp.net") for n in nodes.values())
        assert sandbox["clusters"][alias]["ambari"]["url"] == f"http://127.{net}.{index}.2:8080"
        assert sandbox["clusters"][alias]["bootstrap_servers"] == f"127.{net}.{index}.10:9092"


@pytest.mark.skipif(os.geteuid() != 0, reason="node isolation needs root (mount namespaces); without it a node python is plain python")
def test_node_python_resolves_its_own_cluster_only(sandbox):
    assert sandbox["nodes_isolated"] is True
    before = fingerprint("/etc/hosts")
    primary, secondary = sandbox["clusters"]["primary"], sandbox["clusters"]["secondary"]
    own = {n["name"]: n["ip"] for n in primary["nodes"]}
    own.update({n["short"]: n["ip"] for n in primary["nodes"]})
    foreign = [n["name"] for n in secondary["nodes"]] + [n["short"] for n in secondary["nodes"]]
    for node in primary["nodes"]:
        result = run_as(node, list(own) + foreign)
        assert {name: result[name] for name in own} == own
        assert [name for name in foreign if result[name] is not None] == []
        # exec all the way down: the PID the caller (supervisord, Ansible) sees is the interpreter's own
        assert result["pid"] == result["wrapper_pid"]
    mirrormaker = next(n for n in secondary["nodes"] if n["name"] == sandbox["mirrormaker_node"])
    seen = run_as(mirrormaker, [primary["nodes"][1]["name"], secondary["nodes"][1]["name"]])
    assert seen[primary["nodes"][1]["name"]] is None and seen[secondary["nodes"][1]["name"]] == secondary["nodes"][1]["ip"]
    assert fingerprint("/etc/hosts") == before


@pytest.mark.skipif(os.geteuid() != 0, reason="node isolation needs root (mount namespaces)")
def test_an_edited_hosts_file_is_what_the_node_resolves(fresh_sandbox):
    state = fresh_sandbox("noida")
    mirrormaker = next(n for n in state["clusters"]["secondary"]["nodes"] if n["name"] == state["mirrormaker_node"])
    source_worker = next(n for n in state["clusters"]["primary"]["nodes"] if n["role"] == "worker")
    assert run_as(mirrormaker, [source_worker["name"]])[source_worker["name"]] is None
    line = f"{source_worker['ip']}\t{source_worker['name']}\t{source_worker['short']}\n"
    # A host node's /etc/hosts is edited from inside the node (its upper dir belongs to its mounted overlay).
    edit = subprocess.run([mirrormaker["exec"], "sh", "-c", f"printf '{line}' >> /etc/hosts"], capture_output=True, text=True, check=False)
    assert edit.returncode == 0, edit.stderr
    assert run_as(mirrormaker, [source_worker["name"]])[source_worker["name"]] == source_worker["ip"]


def test_mirror_maker_script_runs_the_stand_in_on_the_node_s_own_python(sandbox):
    mirrormaker = next(n for n in sandbox["clusters"]["secondary"]["nodes"] if n["name"] == sandbox["mirrormaker_node"])
    script = Path(mirrormaker["upper"]) / sandbox["kafka_home"].lstrip("/") / "bin" / "connect-mirror-maker.sh"
    assert os.access(script, os.X_OK)
    assert "exec /usr/bin/python3 -m sandbox.mm2 \"$@\"" in script.read_text()
