# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hosts_sync between two clusters whose names share their first six characters (kafka-prod-50 -> kafka-prod-51, a version
migration): HDInsight gives both clusters' nodes the same short names (wn0-kafkap), so only the FQDNs and the short names
that mean one host are copied, and the role says which short names it left out and why.

The sandbox's topology refuses such cluster names (sandbox/topology.py), so the nodes here are hand-written hosts files as
HDInsight writes them, read back from disk after each run."""
from __future__ import annotations

import sys

import pytest
import yaml

from tests.support.ansible_play import run_tasks

pytestmark = pytest.mark.integration

BEGIN, END = "# BEGIN kafkaops.mirror hosts_sync prod50", "# END kafkaops.mirror hosts_sync prod50"
REPORT_TASK = "kafkaops.mirror.hosts_sync : Say which short names are not copied and why"
WRITE_TASK = "kafkaops.mirror.hosts_sync : Write the managed block of prod50"


def node_text(cluster_suffix, ip_prefix, workers=3, zookeepers=3):
    """A node's /etc/hosts as HDInsight writes it: every node of its cluster with FQDN and short name (cluster kafka-prod-5x)."""
    lines = ["127.0.0.1\tlocalhost", f"{ip_prefix}.2\thn0-kafkap.{cluster_suffix}.internal.cloudapp.net\thn0-kafkap headnodehost"]
    lines += [f"{ip_prefix}.{10 + k}\twn{k}-kafkap.{cluster_suffix}.internal.cloudapp.net\twn{k}-kafkap" for k in range(workers)]
    lines += [f"{ip_prefix}.{20 + k}\tzk{k}-kafkap.{cluster_suffix}.internal.cloudapp.net\tzk{k}-kafkap" for k in range(zookeepers)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def clusters(tmp_path):
    # The source has a fourth worker (wn3) that the target lacks: its short name means one host and is copied.
    source_text, target_text = node_text("p50abc", "127.20.80", workers=4), node_text("p51def", "127.20.81")
    sources = {f"wn{k}-kafkap.p50abc.internal.cloudapp.net": tmp_path / f"src{k}" / "hosts" for k in range(2)}
    targets = {f"wn{k}-kafkap.p51def.internal.cloudapp.net": tmp_path / f"tgt{k}" / "hosts" for k in range(2)}
    for path, text in [(p, source_text) for p in sources.values()] + [(p, target_text) for p in targets.values()]:
        path.parent.mkdir(parents=True)
        path.write_text(text)
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
        "children": {
            "primary_kafka": {"vars": {"kafka_cluster_alias": "prod50"},
                              "hosts": {name: {"hosts_sync_file": str(path)} for name, path in sources.items()}},
            "secondary_kafka": {"hosts": {name: {"hosts_sync_file": str(path)} for name, path in targets.items()}},
        }}}))
    return {"inventory": inventory, "targets": targets, "target_text": target_text}


def sync(clusters, check=False, **role_vars):
    task = {"name": "sync hosts", "ansible.builtin.include_role": {"name": "kafkaops.mirror.hosts_sync"}, "vars": role_vars}
    return run_tasks([task], hosts="secondary_kafka", inventory=clusters["inventory"], check=check, diff=True)


def block(text):
    lines = text.splitlines()
    return lines[lines.index(BEGIN) + 1:lines.index(END)]


def test_colliding_short_names_are_left_out_fqdns_copied_and_reported(clusters):
    play = sync(clusters)
    assert not play.failed, play.stdout[-3000:]
    for name, path in clusters["targets"].items():
        text = path.read_text()
        assert text.startswith(clusters["target_text"]), "the node's own lines stay byte for byte"
        assert block(text) == [
            "127.20.80.10\twn0-kafkap.p50abc.internal.cloudapp.net",
            "127.20.80.11\twn1-kafkap.p50abc.internal.cloudapp.net",
            "127.20.80.12\twn2-kafkap.p50abc.internal.cloudapp.net",
            "127.20.80.13\twn3-kafkap.p50abc.internal.cloudapp.net\twn3-kafkap",
            "127.20.80.20\tzk0-kafkap.p50abc.internal.cloudapp.net",
            "127.20.80.21\tzk1-kafkap.p50abc.internal.cloudapp.net",
            "127.20.80.22\tzk2-kafkap.p50abc.internal.cloudapp.net",
        ]
        # Every short name of the node's own cluster still means its own host (read back from the file).
        own = {names.split()[-1]: ip for ip, names in (line.split("\t", 1) for line in clusters["target_text"].splitlines()[1:])}
        for short, ip in own.items():
            mapped = [line.split("\t")[0] for line in text.splitlines() if short in line.split("\t")[1:] or short in line.split()[1:]]
            assert set(mapped) == {ip}, f"{short} maps to {mapped} in {path}"
        report = play.task(REPORT_TASK, host=name)["msg"]
        assert "6 short name(s) of prod50 left out" in report
        for short in ("wn0-kafkap", "wn1-kafkap", "wn2-kafkap", "zk0-kafkap", "zk1-kafkap", "zk2-kafkap"):
            assert f"{short}: line " in report
        assert "wn3-kafkap:" not in report
        assert "the source's wn0-kafkap is 127.20.80.10" in report and "share their first six characters" in report
        assert play.task(WRITE_TASK, host=name)["changed"]

    before = {name: path.read_bytes() for name, path in clusters["targets"].items()}
    again = sync(clusters)
    assert not again.failed and again.changed_count == 0
    assert {name: path.read_bytes() for name, path in clusters["targets"].items()} == before


def test_check_mode_reports_the_same_and_writes_nothing(clusters):
    play = sync(clusters, check=True)
    assert not play.failed, play.stdout[-3000:]
    name = next(iter(clusters["targets"]))
    assert "6 short name(s) of prod50 left out" in play.task(REPORT_TASK, host=name)["msg"]
    assert all(path.read_text() == clusters["target_text"] for path in clusters["targets"].values())


def test_inventory_names_of_the_node_cluster_count_without_a_hosts_line(clusters):
    # A node whose hosts file lists nothing of its cluster (names from DNS): the inventory names still say wn0/wn1 are taken.
    bare = "127.0.0.1\tlocalhost\n"
    for path in clusters["targets"].values():
        path.write_text(bare)
    play = sync(clusters)
    assert not play.failed, play.stdout[-3000:]
    lines = block(next(iter(clusters["targets"].values())).read_text())
    assert "127.20.80.10\twn0-kafkap.p50abc.internal.cloudapp.net" in lines
    assert "127.20.80.12\twn2-kafkap.p50abc.internal.cloudapp.net\twn2-kafkap" in lines
    assert "127.20.80.20\tzk0-kafkap.p50abc.internal.cloudapp.net\tzk0-kafkap" in lines
