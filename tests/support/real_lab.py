# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real-Kafka lab (sandbox provider apache) as the integration tests drive it: playbooks against its inventory, and
clients of their own to read its state back.

The lab's FQDNs resolve only inside its nodes, as on HDInsight, so the read-back clients (read_back.py,
steady_producer.py) run under a worker node's python; MirrorMaker's JVM is found in /proc, Ambari's restart log by a
fresh GET to the emulator.
"""
from __future__ import annotations

import base64
import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

from sandbox import kafka_dist, processes
from sandbox.providers import ApacheProvider
from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO

SUPPORT = REPO / "tests" / "support"
MM2_MAIN_CLASS = "org.apache.kafka.connect.mirror.MirrorMaker"
MM2_PROPERTIES = Path("/etc/kafka-mirrormaker2/connect-mirror-maker.properties")


def mirror_plan(prefix: str, health_timeout: int) -> dict:
    """Extra vars for playbooks/mirror.yml on the lab, for the topics and groups `<prefix>-.*`: one flow primary -> secondary
    that finds new topics and groups and checkpoints within seconds, so a test waits little for them."""
    flow = {"source": "primary", "target": "secondary", "topics": [f"{prefix}-.*"], "groups": [f"{prefix}-.*"],
            "refresh_topics_interval_seconds": 10, "refresh_groups_interval_seconds": 5, "emit_checkpoints_interval_seconds": 5}
    return {"mirrormaker2_flows": [flow], "mirrormaker2_health_timeout": health_timeout, "mirrormaker2_health_poll_interval": 2,
            # The lab's 2 cores: MirrorMaker's heap as small as its work allows (HDInsight's head nodes have GBs).
            "mirrormaker2_heap_opts": "-Xms128m -Xmx384m",
            "mirror_topics": f"{prefix}-.*", "mirror_validation_topics": f"{prefix}-.*", "mirror_validation_catch_up_timeout": 180}


def node_java8() -> str | None:
    """The Java 8 a real-Kafka lab's MirrorMaker node gets (sandbox.api.up(mirrormaker_java8)), as an HDInsight 5.x node has:
    the oldest runtime's (make test builds it); None where it cannot be obtained (the tests that need it skip, saying why)."""
    from tests.support import oldest_runtime  # pylint: disable=import-outside-toplevel

    try:
        return oldest_runtime.java_home("8")
    except oldest_runtime.RuntimeUnavailable:
        return None


# MirrorMaker's own log on its node (roles/mirrormaker2: mirrormaker2_log_dir's mirrormaker.log).
MM2_APP_LOG = Path("/etc/kafka-mirrormaker2/logs/mirrormaker.log")


def watch_log_rollovers(log: Path, rollovers: int, max_bytes: int, kept: int, timeout: float) -> dict:
    """Watch a rolling log (`log` as this machine sees the node's file) until it has rolled at least `rollovers` times, and
    return the old files kept then (names, sorted). Both log4j 1 (reload4j) and log4j2
    (fileIndex min) roll `name` into `name.1`, so each rollover gives `name.1` a new inode; a poll may miss one, never
    invent one. Fails when an old file beyond `kept` appears, or one rolled file is over `max_bytes` by more than one
    event's worth (both logging systems check the size around each event, so a file ends up to one event past it)."""
    seen, largest, deadline = set(), 0, time.monotonic() + timeout
    one_event = 256 * 1024  # generous: the longest events MirrorMaker logs at DEBUG are whole client configurations, a few KB
    while True:
        present = sorted(p.name for p in log.parent.glob(log.name + ".*"))
        beyond = [name for name in present if name.rsplit(".", 1)[1].isdigit() and int(name.rsplit(".", 1)[1]) > kept]
        assert not beyond, f"the log kept {present}, more than {kept} old files"
        for name in present:
            try:
                stat = (log.parent / name).stat()
            except FileNotFoundError:  # rolled away between the listing and the stat
                continue
            largest = max(largest, stat.st_size)
            if name == log.name + ".1":
                seen.add(stat.st_ino)
        assert largest <= max_bytes + one_event, f"a rolled file has {largest} bytes, over {max_bytes}: {present}"
        if len(seen) >= rollovers:
            return present
        assert time.monotonic() < deadline, f"{log} rolled {len(seen)} time(s) of {rollovers} in {timeout:.0f} s; files: {present}"
        time.sleep(0.2)


def java_of(pid: int, java_home: str) -> tuple:
    """(the executable a process runs, as this machine names it, and JAVA_VERSION of the `release` file in `java_home` as
    the process sees its root: the node's bind mounts exist only in its mount namespace)."""
    exe = os.readlink(f"/proc/{pid}/exe")
    release = Path(f"/proc/{pid}/root{java_home}/release").read_text()
    return exe, next(line.split("=", 1)[1].strip('"') for line in release.splitlines() if line.startswith("JAVA_VERSION="))


def jvms_reading(main_class: str, config_file: Path, text: str) -> list:
    """(pid, argv) of every JVM on this machine that runs `main_class` and whose `config_file` (read through the process's own
    root: a node's file) holds `text`, such as a lab's bootstrap address: other labs' JVMs are this machine's processes too."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = [a.decode() for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
            if main_class not in argv:
                continue
            config = (entry / "root" / str(config_file).lstrip("/")).read_text()
        except OSError:
            continue
        if text in config:
            found.append((int(entry.name), argv))
    return found


def mirrormaker_jvms(node: dict) -> list:
    """PIDs of the Apache MirrorMaker 2 JVMs inside `node`: the processes whose mount namespace holds the node's overlay."""
    found = []
    for pid in processes.in_node(node["upper"]):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if MM2_MAIN_CLASS.encode() in argv:
            found.append(pid)
    return found


class RealLab:
    """One lab's state (sandbox.api.up's answer) and the extra vars every play of a test module starts from."""

    def __init__(self, state: dict, plan: dict):
        self.state = state
        # MirrorMaker on the node's Java 8 where the lab has one (sandbox.api.up(mirrormaker_java8)), as on HDInsight 5.x, up
        # to 3.9; Kafka 4.0's needs Java 17 (KIP-1013), the node's default.
        java8 = ({"mirrormaker2_java_home": state["mirrormaker_java_home"]}
                 if state.get("mirrormaker_java_home") and int(state["kafka_version"].split(".")[0]) < 4 else {})
        # The lab's 2 cores: MirrorMaker's JIT and GC as light as the brokers' (sandbox.providers.ApacheProvider.JVM_OPTIONS).
        self.plan = {**java8, "mirrormaker2_jvm_performance_opts": ApacheProvider.JVM_OPTIONS, **plan}
        self.inventory = Path(state["dir"]) / "inventory.yml"

    def node(self, alias: str, index: int) -> dict:
        return next(n for n in self.state["clusters"][alias]["nodes"] if n["role"] == "worker" and n["short"].startswith(f"wn{index}-"))

    def client(self, alias: str, *args, node: int = 1) -> dict:
        """tests/support/read_back.py on a worker of `alias` (names resolve there as on that cluster's nodes)."""
        cluster = self.state["clusters"][alias]
        proc = subprocess.run([self.node(alias, node)["python"], str(SUPPORT / "read_back.py"), cluster["bootstrap_servers"], *map(str, args)],
                              capture_output=True, text=True, timeout=240, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def produce_keyed(self, topic: str, partitions: int, per_partition: int) -> None:
        """`per_partition` records per partition of the primary's `topic`, keyed p<partition>-<index> (read_back.py's `keyed`)."""
        self.client("primary", "keyed", topic, partitions, per_partition)

    def assert_copied_whole(self, remote: str, partitions: int, per_partition: int) -> dict:
        """The secondary's `remote` topic has its source's partitions, the replication factor the role's `auto` gives (3, or
        the broker count of a smaller lab) and every key produce_keyed wrote there; returns the secondary's topics
        (read_back.py's `topics`) for further checks."""
        topics = self.client("secondary", "topics")["topics"]
        replication_factor = min(3, len(self.state["clusters"]["secondary"]["brokers"]))
        assert topics[remote] == {"partitions": partitions, "replication_factor": replication_factor}, topics.get(remote)
        keys = self.client("secondary", "keys", remote)["keys"]
        for partition in range(partitions):
            assert sorted(set(keys[str(partition)])) == sorted(f"p{partition}-{i}" for i in range(per_partition)), partition
        return topics

    def kafka_tool(self, alias: str, main_class: str, *args) -> str:
        """One of Kafka's command-line tools (`main_class` of the cluster's own release's home) run on this machine, against
        the first broker's inter-broker listener: the lab's brokers advertise it by IP, their client listener by FQDNs this
        machine cannot resolve. Returns its output; fails the test with it when the tool fails."""
        cluster = self.state["clusters"][alias]
        launcher = kafka_dist.home_path(cluster["release"]) / "bin" / "kafka-run-class.sh"
        env = {**os.environ, "KAFKA_HEAP_OPTS": "-Xmx128m", "KAFKA_JVM_PERFORMANCE_OPTS": ApacheProvider.JVM_OPTIONS,
               "KAFKA_LOG4J_OPTS": "-Dlog4j.configuration=file:/dev/null"}
        proc = subprocess.run([str(launcher), main_class, "--bootstrap-server", f"{cluster['brokers'][0]['host']}:{ApacheProvider.INTERNAL_PORT}",
                               *map(str, args)], capture_output=True, text=True, timeout=120, env=env, check=False)
        assert proc.returncode == 0, f"{main_class} {args}: " + proc.stdout[-2000:] + proc.stderr[-3000:]
        return proc.stdout

    def wait_settled(self, alias: str, timeout: float = 180) -> None:
        """Until every partition of `alias` (internal topics included) has all its replicas in sync and its preferred replica
        (the first) as leader: a test file that starts after another killed or restarted brokers starts from a whole,
        balanced cluster. Without the election the controller moves the leaders back by itself at its next imbalance check
        (leader.imbalance.check.interval.seconds, 300 s), in the middle of whatever the next file measures; this runs it
        now, as kafka-leader-election.sh does (KIP-460, 2.4+). read_back.py's `in-sync` (kafka-python 3.0.12's
        describe_cluster fails on 3.2.0, KeyError endpoint_type, so brokers are not listed)."""
        deadline, seen, elected = time.monotonic() + timeout, None, False
        while time.monotonic() < deadline:
            seen = self.client(alias, "in-sync")
            if not seen["under_replicated"] and not seen["not_preferred"]:
                return
            if not seen["under_replicated"] and not elected:
                print(f"{alias}: {len(seen['not_preferred'])} partition(s) led by a replica other than their preferred one; electing")
                self.kafka_tool(alias, "kafka.admin.LeaderElectionCommand", "--election-type", "PREFERRED", "--all-topic-partitions")
                elected = True
                continue
            time.sleep(3)
        raise AssertionError(f"{alias} not in sync with its preferred leaders after {timeout} s: {seen}")

    def play(self, playbook: Path, check: bool = False, tags: str | None = None, skip_tags: str | None = None, **extra):
        """`playbook` on the lab with its plan and `extra` as extra vars (node_python skipped: run_playbook says why)."""
        return run_playbook(playbook, inventory=self.inventory, extra_vars={**self.plan, **extra}, check=check, tags=tags,
                            skip_tags=skip_tags, diff=True, timeout=1200)

    def remove_mirrormaker(self) -> None:
        """mirror.yml --tags mirrormaker2 with mirrormaker2_state absent, on the lab's own inventory: MirrorMaker stopped and what
        the role wrote removed, a failover's cut-over record with it. The files that share a lab and its default MirrorMaker
        service (SHARED_LABS in tests/integration/conftest.py) end with it, so that none of them finds another's MirrorMaker or
        cut-over: in ci41, test_secure_mirror's failover left its cut-over and the next file's mirror.yml kept MirrorMaker stopped."""
        gone = run_playbook(REPO / "playbooks" / "mirror.yml", inventory=Path(self.state["dir"]) / "inventory.yml", tags="mirrormaker2",
                            extra_vars={**self.plan, "mirrormaker2_state": "absent"}, timeout=600)
        assert not gone.failed, gone.stdout[-3000:]

    def supervisorctl(self, *args) -> str:
        return subprocess.run([*self.state["supervisorctl"], *args], capture_output=True, text=True, timeout=120, check=False).stdout

    def broker_pid(self, alias: str, broker_id: int) -> int:
        program = self.state["clusters"][alias]["brokers"][broker_id]["program"]
        return int(self.supervisorctl("pid", program).strip())

    def restarts(self, alias: str) -> list:
        """Ambari's restart log of the cluster, by a fresh GET to its emulator."""
        ambari = self.state["clusters"][alias]["ambari"]
        request = urllib.request.Request(f"{ambari['url']}/_sandbox/restarts", headers={
            "Authorization": "Basic " + base64.b64encode(f"{ambari['username']}:{ambari['password']}".encode()).decode(),
            "X-Requested-By": "tests"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            return json.loads(reply.read())["restarts"]

    def steady_producer(self, alias: str, topic: str, rate: int = 50) -> subprocess.Popen:
        cluster = self.state["clusters"][alias]
        return subprocess.Popen([self.node(alias, 2)["python"], str(SUPPORT / "steady_producer.py"), cluster["bootstrap_servers"], topic,
                                 str(rate)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def mirrormaker_node(self) -> dict:
        """The MirrorMaker node's entry in the lab's state (name, ip, upper, ...)."""
        return next(n for n in self.state["clusters"]["secondary"]["nodes"] if n["name"] == self.state["mirrormaker_node"])

    def mirrormaker_node_root(self) -> Path:
        """The MirrorMaker node's files as it wrote them (its overlay's upper directory)."""
        return Path(self.mirrormaker_node()["upper"])

    def mirrormakers(self) -> list:
        """(pid, argv) of every Apache MirrorMaker 2 JVM on this machine whose properties name this lab's secondary."""
        return jvms_reading(MM2_MAIN_CLASS, MM2_PROPERTIES, self.state["clusters"]["secondary"]["bootstrap_servers"].split(",")[0])
