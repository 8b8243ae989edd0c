# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README's HDInsight quick start, as written, on real Apache Kafka: playbooks/mirror.yml with the README's inventory
shape (issue 27 item 4) on a lab of its own (primary 2.4.1 with ZooKeeper, secondary 3.2.0, two brokers each, FQDNs
advertised as HDInsight's brokers do):

- MirrorMaker on the secondary's head node hn0, as HDInsight's runbooks run it (`up(mirrormaker_node="hn0")`): hn0 is in
  group `mirrormaker` only, not in `secondary_kafka`;
- bootstrap servers as FQDN:port (the primary's wn0 and wn1, the secondary's wn0), as in the README;
- the runbook's aliases, primary-kafka-cluster and secondary-kafka-cluster.

The README's commands, in its order: preflight.yml (which prepares the MirrorMaker host, then only reads), mirror.yml
--tags hosts_sync, mirror.yml --check --diff, mirror.yml. hn0's hosts file holds its own cluster only, so the primary's
FQDNs do not resolve there before hosts_sync: preflight.yml reaches each README bootstrap server at the address hosts_sync
is about to write and says so in one exact NOTE each, and writes nothing; without that resolution
(preflight_resolve_through_hosts_sync false) mirror.yml's first preflight stops on the name (the check can fail). A
whole check run needs hosts_sync first (kafka_topics reads the primary through its advertised names), which is why the
README runs it on its own before; the real run's preflights then pass on the names.

What the lab changes from the README's inventory (sandbox/inventory.py; docs/development.md, "How close the lab is to
HDInsight 5.x"): each host's address, port and key; `ansible_python_interpreter` (the node's /usr/bin/python3, 3.11 here);
MirrorMaker under hn0's supervisord instead of `mirrormaker2_service_manager: systemd` (no systemd here), on the Java 8 that hn0's
PATH finds first (the machine's 17 stays under /usr/lib/jvm, for Spark); pip from the lab's
wheelhouse; the topics narrowed to qs-.*; and the validation stage left out.

Read back with clients of its own: tests/support/read_back.py under a worker's python (the lab's FQDNs resolve only inside
its nodes), MirrorMaker's program read from hn0's own supervisord inside the node, its JVM found in /proc and placed by its
mount namespace, getent over SSH on hn0. Last, on the lab the test leaves behind, MirrorMaker's log on hn0 rolls at the
size asked (log4j 1). The validation stage (Spark) is skipped: tests/integration/real_kafka runs it.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from sandbox import processes
from sandbox.nodes import as_root, machine_path, ssh_argv
from sandbox.providers import ApacheProvider
from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO
from tests.support.real_lab import MM2_APP_LOG, java_of, mirrormaker_jvms, node_java8, watch_log_rollovers
from tests.support.sandbox_fixture import running_sandbox

pytestmark = [pytest.mark.integration, pytest.mark.skipif(os.geteuid() != 0, reason="hn0 is an SSH host only as root (ssh node mode)")]

PLAYBOOK = REPO / "playbooks" / "mirror.yml"
PREFLIGHT = REPO / "playbooks" / "preflight.yml"
READ_BACK = REPO / "tests" / "support" / "read_back.py"
SUBNET = 46  # a lab of its own on the worker's net, third octets 46 and 47: no other test file uses them
ALIASES = {"primary": "primary-kafka-cluster", "secondary": "secondary-kafka-cluster"}  # the runbook's, as in the README
TOPIC, PARTITIONS, PER_PARTITION = "qs-orders", 3, 200
README_BOOTSTRAP = {"primary": 2, "secondary": 1}  # how many brokers the README lists: the primary's wn0 and wn1, the secondary's wn0
# Two brokers per cluster, the fewest the README's bootstrap list names: replication has tests of its own on three brokers
# (tests/integration/real_kafka), and two brokers fewer for the whole test are CI time on 2 cores. The collection's
# replication factors are `auto`, so the README's inventory needs no change for it.
BROKERS = 2
SUMMARY_TASK = "kafkaops.mirror.preflight : Show the preflight summary"
FAIL_TASK = "kafkaops.mirror.preflight : Fail when any finding is an error"
# The first preflight's stages only: mirror_host runs anyway (tagged always).
BEFORE_HOSTS_SYNC_TAGS = "preflight,hosts_sync"
PLAN = {
    "mirrormaker2_flows": [{"source": ALIASES["primary"], "target": ALIASES["secondary"], "topics": ["qs-.*"], "groups": ["qs-.*"],
                            "refresh_topics_interval_seconds": 10, "refresh_groups_interval_seconds": 5}],
    "mirrormaker2_health_timeout": 300, "mirrormaker2_health_poll_interval": 2,
    # The lab's 2 cores: MirrorMaker's heap as small as its work allows (HDInsight's head nodes have GBs), JIT and GC as light
    # as the brokers'.
    "mirrormaker2_heap_opts": "-Xms128m -Xmx384m", "mirrormaker2_jvm_performance_opts": ApacheProvider.JVM_OPTIONS,
    "mirror_topics": "qs-.*",
}


def node(state: dict, alias: str, prefix: str) -> dict:
    return next(n for n in state["clusters"][alias]["nodes"] if n["short"].startswith(f"{prefix}-"))


def client(state: dict, alias: str, *args) -> dict:
    """read_back.py on the cluster's wn1 (its own names resolve there, as on HDInsight's nodes)."""
    cluster = state["clusters"][alias]
    proc = subprocess.run([node(state, alias, "wn1")["python"], str(READ_BACK), cluster["bootstrap_servers"], *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def readme_inventory(state: dict, path: Path) -> Path:
    """The sandbox's inventory (hosts, logins, the lab's MirrorMaker variables) in the README's shape: the README's bootstrap
    lists as FQDN:port and the runbook's aliases."""
    inventory = yaml.safe_load((Path(state["dir"]) / "inventory.yml").read_text())
    groups = inventory["all"]["children"]
    for alias, count in README_BOOTSTRAP.items():
        groups[f"{alias}_kafka"]["vars"]["kafka_cluster_alias"] = ALIASES[alias]
        groups[f"{alias}_kafka"]["vars"]["kafka_bootstrap_servers"] = ",".join(
            f"{broker['node']}:{broker['port']}" for broker in state["clusters"][alias]["brokers"][:count])
    path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory, sandbox_net):
    with running_sandbox(tmp_path_factory.mktemp("quick-start-hn0"), f"the quick start's lab (apache, net {sandbox_net}, subnet {SUBNET})",
                         down_timeout=90, provider="apache", net=sandbox_net, subnet=SUBNET, mirrormaker_node="hn0", brokers=BROKERS, timeout=600,
                         mirrormaker_java8=node_java8()) as state:
        if state.get("mirrormaker_java_home"):
            # HDInsight 5.x's hn0 runs Java 8 as its `java`: the node's PATH finds the bound Java 8 first (/usr/local/bin
            # precedes /usr/bin), and the README sets no mirrormaker2_java_home.
            hn0 = node(state, "secondary", "hn0")
            subprocess.run([*as_root(hn0), "ln", "-sf", f"{state['mirrormaker_java_home']}/bin/java", "/usr/local/bin/java"], check=True, timeout=30)
        yield state


def summaries(play) -> list:
    """The preflight tables of a run, in order (mirror.yml: the first preflight, then the gate after hosts_sync)."""
    return [entry["result"]["msg"] for entry in play.tasks if entry["task"] == SUMMARY_TASK]


def on_hn0(hn0: dict, command: str) -> subprocess.CompletedProcess:
    """`command` over SSH on hn0, as the runbook's user runs it."""
    return subprocess.run(ssh_argv(hn0, command), capture_output=True, text=True, timeout=60, check=False)


def test_the_readme_quick_start_mirrors_with_mirrormaker_on_hn0(lab, tmp_path):
    state = lab
    hn0, wn0 = node(state, "secondary", "hn0"), node(state, "secondary", "wn0")
    assert state["mirrormaker_node"] == hn0["name"] and "ssh" in hn0, "hn0 is an SSH host and the MirrorMaker node"
    inventory = readme_inventory(state, tmp_path / "inventory.yml")
    groups = yaml.safe_load(inventory.read_text())["all"]["children"]
    assert list(groups["mirrormaker"]["hosts"]) == [hn0["name"]] and hn0["name"] not in groups["secondary_kafka"]["hosts"]
    assert all(":" in server and not server.split(":")[0][0].isdigit()
               for alias in ALIASES for server in groups[f"{alias}_kafka"]["vars"]["kafka_bootstrap_servers"].split(","))

    client(state, "primary", "create", TOPIC, PARTITIONS, BROKERS)
    client(state, "primary", "keyed", TOPIC, PARTITIONS, PER_PARTITION)
    primary = state["clusters"]["primary"]["brokers"][0]
    hosts_before = on_hn0(hn0, "cat /etc/hosts").stdout
    assert on_hn0(hn0, f"getent hosts {shlex.quote(primary['node'])}").returncode == 2, "hn0 knows the primary's names before hosts_sync"

    # The README's commands, in order. 1: preflight.yml, which prepares the MirrorMaker host and then only reads.
    ips = {n["name"]: n["ip"] for n in state["clusters"]["primary"]["nodes"]}
    bootstrap = state["clusters"]["primary"]["brokers"][:README_BOOTSTRAP["primary"]]
    notes = [f"NOTE  cluster {ALIASES['primary']}: bootstrap {broker['node']}:{broker['port']} does not resolve on {hn0['name']} before "
             f"hosts_sync; probed at {ips[broker['node']]}:{broker['port']}, the entry hosts_sync is about to write" for broker in bootstrap]
    preflight = run_playbook(PREFLIGHT, inventory=inventory, extra_vars=PLAN, node_python=True)
    assert not preflight.failed, preflight.stdout[-5000:]
    assert [line for line in summaries(preflight)[0] if line.startswith("NOTE ")] == notes, summaries(preflight)
    assert on_hn0(hn0, "cat /etc/hosts").stdout == hosts_before, "preflight.yml wrote hn0's hosts file"

    # mirror.yml's first preflight, before hosts_sync: without the resolution through hosts_sync it stops on the primary's
    # name. (With it, the preflight role gives the NOTE lines preflight.yml gave above: the same role and tasks.)
    unresolved = run_playbook(PLAYBOOK, inventory=inventory, extra_vars={**PLAN, "preflight_resolve_through_hosts_sync": False},
                              tags=BEFORE_HOSTS_SYNC_TAGS, check=True)
    assert unresolved.failed
    assert f"cluster {ALIASES['primary']}: no metadata from {primary['node']}" in unresolved.task(FAIL_TASK)["msg"]

    # 2: mirror.yml --tags hosts_sync: the primary's names into the target's hosts files, hn0's included. (A whole check
    # run before it cannot read the primary through names no hosts file holds yet: kafka_topics stops there.)
    synced = run_playbook(PLAYBOOK, inventory=inventory, extra_vars=PLAN, tags="hosts_sync", diff=True, node_python=True)
    assert not synced.failed, synced.stdout[-5000:]
    assert on_hn0(hn0, f"getent hosts {shlex.quote(primary['node'])}").returncode == 0, "hosts_sync left hn0 without the primary's names"

    # 3: mirror.yml --check --diff, the whole playbook: it passes and creates nothing.
    check = run_playbook(PLAYBOOK, inventory=inventory, extra_vars=PLAN, check=True, diff=True, node_python=True)
    assert not check.failed, check.stdout[-5000:]
    assert f"{ALIASES['primary']}.{TOPIC}" not in client(state, "secondary", "topics")["topics"], "check mode created the remote topic"

    # 4: mirror.yml (the validation stage aside: tests/integration/real_kafka runs it).
    started = time.monotonic()
    play = run_playbook(PLAYBOOK, inventory=inventory, extra_vars=PLAN, skip_tags="mirror_validation", diff=True, timeout=2400,
                        node_python=True)
    print(f"mirror.yml on the quick start's inventory: {time.monotonic() - started:.0f} s")
    assert not play.failed, play.stdout[-6000:]
    first, gate = summaries(play)
    assert not any(line.startswith(("NOTE ", "ERROR")) for line in first + gate), (first, gate)
    primary_row = next(line.split() for line in gate if line.split()[:1] == [ALIASES["primary"]])
    brokers = len(state["clusters"]["primary"]["brokers"])
    assert primary_row[1] == "ok" and primary_row[3] == f"{brokers}/{brokers}", gate

    # The remote topic and every record, read on the secondary by a client of this test's own.
    remote = f"{ALIASES['primary']}.{TOPIC}"
    deadline = time.monotonic() + 180
    while True:
        keys = client(state, "secondary", "keys", remote)["keys"]
        arrived = {p: set(keys.get(str(p), [])) for p in range(PARTITIONS)}
        if all(arrived[p] == {f"p{p}-{i}" for i in range(PER_PARTITION)} for p in range(PARTITIONS)) or time.monotonic() > deadline:
            break
        time.sleep(5)
    for partition in range(PARTITIONS):
        assert arrived[partition] == {f"p{partition}-{i}" for i in range(PER_PARTITION)}, (partition, len(arrived[partition]))
    topics = client(state, "secondary", "topics")["topics"]
    assert topics[remote] == {"partitions": PARTITIONS, "replication_factor": BROKERS}
    # The primary's heartbeats come from MirrorMaker's reverse herder, whose own internal topics take it 30 s and more to
    # create (Kafka 3.2.0, seen in the differential test too), then a topic refresh: they can follow the records by a minute.
    deadline = time.monotonic() + 180
    while f"{ALIASES['primary']}.heartbeats" not in topics and time.monotonic() < deadline:
        time.sleep(5)
        topics = client(state, "secondary", "topics")["topics"]
    assert f"{ALIASES['primary']}.heartbeats" in topics, sorted(topics)

    # MirrorMaker 2 runs on hn0: its program in hn0's own supervisord (read inside the node), its JVM in hn0's mount namespace.
    supervisorctl = shlex.split(groups["mirrormaker"]["vars"]["mirrormaker2_supervisorctl"])
    status = subprocess.run([hn0["exec"], *supervisorctl, "status", "kafka-mirrormaker2"], capture_output=True, text=True, timeout=60, check=False)
    assert status.stdout.split()[:2] == ["kafka-mirrormaker2", "RUNNING"], status.stdout + status.stderr
    on_wn0 = subprocess.run([wn0["exec"], *supervisorctl, "status"], capture_output=True, text=True, timeout=60, check=False)
    assert "kafka-mirrormaker2" not in on_wn0.stdout, on_wn0.stdout
    jvms = mirrormaker_jvms(hn0)
    assert len(jvms) == 1 and processes.mount_namespace(jvms[0]) == hn0["mount_namespace"], jvms
    if state.get("mirrormaker_java_home"):  # the java on hn0's PATH, Java 8, as the role's probe said before anything changed
        exe, version = java_of(jvms[0], state["mirrormaker_java_home"])
        assert exe.endswith(state["mirrormaker_java_home"] + "/bin/java") and version.startswith("1.8.0_"), (exe, version)
        probe = next(t["result"] for t in play.tasks if t["task"].startswith("kafkaops.mirror.mirrormaker2 : Fail when this Java cannot run"))
        assert probe["msg"].startswith("MirrorMaker will run on Java 8 ("), probe
    assert mirrormaker_jvms(wn0) == []
    hostname = subprocess.run([hn0["exec"], "hostname"], capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    assert hostname == hn0["short"]

    # hosts_sync wrote hn0's hosts file: the primary's FQDNs resolve there now, read over SSH as the runbook's user would.
    for broker in state["clusters"]["primary"]["brokers"]:
        resolved = on_hn0(hn0, f"getent hosts {shlex.quote(broker['node'])}")
        assert resolved.returncode == 0 and resolved.stdout.split()[0] == broker["host"], (broker, resolved.stdout)

    # Issue 27 item 8 on log4j 1 (reload4j, Kafka 3.2.0's MirrorMaker): with a 1 MB size and one old file (DEBUG, to fill it
    # within seconds), the log on hn0 rolls at 1 MB twice and never keeps a second old file (one old file, not two: the second
    # rollover is the one that must drop a file, and each MB of DEBUG takes about a minute here). Last: the lab ends here.
    small = run_playbook(PLAYBOOK, inventory=inventory, tags="mirrormaker2",
                         extra_vars={**PLAN, "mirrormaker2_log_level": "DEBUG", "mirrormaker2_log_max_file_size_mb": 1, "mirrormaker2_log_max_files": 1})
    assert not small.failed, small.stdout[-5000:]
    kept = watch_log_rollovers(machine_path(hn0, str(MM2_APP_LOG)), rollovers=2, max_bytes=1 << 20, kept=1, timeout=300)
    assert kept == ["mirrormaker.log.1"], kept
