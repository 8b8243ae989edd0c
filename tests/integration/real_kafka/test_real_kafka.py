# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runbooks' migration on real Apache Kafka and real MirrorMaker 2, in order, on the worker's real-Kafka lab
(tests/integration/conftest.py sandbox_apache: primary 2.4.1 with ZooKeeper, secondary 3.2.0, three brokers each,
HDInsight's replication factor 3 and min.insync.replicas 2; MirrorMaker 2 of 3.2.0 on the secondary's wn0).

1. mirror.yml end to end: the remote topics, their records and their replication factor read back independently, and the
   MirrorMaker that runs is Apache's (its Java process, found on this machine by its main class and properties file).
2. failover.yml, preview then for real: the group's position on the target never skips a record it had not consumed.
3. A rolling restart through Ambari (IP advertising turned on, as mirror.yml does when asked) under an acks=all producer:
   no send fails, each broker restarts only when every partition is back in sync (sampled every 100 ms, not assumed),
   and the real brokers advertise their IP addresses afterwards.

Every check reads state with clients of its own: tests/support/read_back.py and steady_producer.py under a node's python
(the lab's FQDNs resolve only inside its nodes, as on HDInsight), Ambari's restart log by a fresh GET, /proc.
"""
from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from sandbox import probes
from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO

pytestmark = [pytest.mark.integration, pytest.mark.spark,
              pytest.mark.skipif(os.geteuid() != 0, reason="the lab's nodes are SSH hosts (root)")]

MIRROR, FAILOVER = REPO / "playbooks" / "mirror.yml", REPO / "playbooks" / "failover.yml"
SUPPORT = REPO / "tests" / "support"
ORDERS, PARTITIONS, PER_PARTITION = "rk-orders", 3, 400
GROUP, CONSUMED = "rk-app", {0: 150, 1: 0, 2: 399}
STEADY = "rk-steady"
FLOW = {"source": "primary", "target": "secondary", "topics": ["rk-.*"], "groups": ["rk-.*"],
        "refresh_topics_interval_seconds": 10, "refresh_groups_interval_seconds": 5, "emit_checkpoints_interval_seconds": 5}
PLAN = {"mirrormaker2_flows": [FLOW], "mirrormaker2_health_timeout": 240, "mirrormaker2_health_poll_interval": 2,
        # The lab's 2 cores: MirrorMaker's heap as small as its work allows (HDInsight's head nodes have GBs).
        "mirrormaker2_heap_opts": "-Xms128m -Xmx384m",
        "mirror_topics": "rk-.*", "mirror_validation_topics": "rk-.*", "mirror_validation_catch_up_timeout": 180}
VALIDATION_REPORT = "kafkaops.mirror.mirror_validation : Keep the report as a fact"
APPLY_TASK = "kafkaops.mirror.failover : Translate the groups' offsets and commit them on the target"


class Lab:
    def __init__(self, state: dict):
        self.state = state
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

    def play(self, playbook: Path, check: bool = False, tags: str | None = None, **extra):
        return run_playbook(playbook, inventory=self.inventory, extra_vars={**PLAN, **extra}, check=check, tags=tags, diff=True, timeout=1200)

    def steady_producer(self, alias: str, topic: str, rate: int = 50) -> subprocess.Popen:
        cluster = self.state["clusters"][alias]
        return subprocess.Popen([self.node(alias, 2)["python"], str(SUPPORT / "steady_producer.py"), cluster["bootstrap_servers"], topic,
                                 str(rate)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stop_producer(process: subprocess.Popen) -> dict:
    process.send_signal(signal.SIGTERM)  # the node's python execs down to the interpreter: this PID is the producer's
    try:
        stdout, stderr = process.communicate(timeout=600)  # a send in flight finishes first (up to its 130 s timeout)
    except subprocess.TimeoutExpired:
        process.kill()  # never leave it producing after the test
        process.communicate()
        raise
    assert process.returncode == 0, stderr[-3000:]
    return json.loads(stdout.strip().splitlines()[-1])


def mirrormaker_processes(mount_namespace: str) -> list:
    """(pid, argv) of the Apache MirrorMaker 2 JVMs in one node's mount namespace (the node's processes are this machine's
    too; other labs of the same test run have MirrorMakers of their own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                namespace = os.readlink(entry / "ns" / "mnt")
            except OSError:
                continue
            if b"org.apache.kafka.connect.mirror.MirrorMaker" in argv and namespace == mount_namespace:
                found.append((int(entry.name), [a.decode() for a in argv if a]))
    return found


@pytest.fixture(scope="module")
def lab(sandbox_apache, mirror_host_ready):
    lab = Lab(sandbox_apache)
    mirror_host_ready(sandbox_apache)
    lab.client("primary", "create", ORDERS, PARTITIONS, 3)
    produce_keyed(lab, ORDERS)
    for partition, offset in CONSUMED.items():
        lab.client("primary", "commit", GROUP, ORDERS, partition, offset)
    return lab


def produce_keyed(lab: Lab, topic: str) -> None:
    """PER_PARTITION records per partition, keyed p<partition>-<index>: a key tells where its record came from."""
    script = ("import sys; from kafka import KafkaProducer\n"
              "p = KafkaProducer(bootstrap_servers=sys.argv[1], acks='all', linger_ms=5)\n"
              f"[p.send('{topic}', key=b'p%d-%d' % (n, i), value=b'v%d' % i, partition=n) for n in range({PARTITIONS}) for i in range({PER_PARTITION})]\n"
              "p.flush(); p.close()\n")
    subprocess.run([lab.node("primary", 1)["python"], "-c", script, lab.state["clusters"]["primary"]["bootstrap_servers"]], check=True, timeout=120)


def test_runbook_migration_on_real_kafka(lab):
    play = lab.play(MIRROR)
    assert not play.failed, play.stdout[-5000:]
    report = play.task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    assert report["passed"], report

    remote = f"primary.{ORDERS}"
    topics = lab.client("secondary", "topics")["topics"]
    assert topics[remote] == {"partitions": PARTITIONS, "replication_factor": 3}
    keys = lab.client("secondary", "keys", remote)["keys"]
    for partition in range(PARTITIONS):
        assert sorted(set(keys[str(partition)])) == sorted(f"p{partition}-{i}" for i in range(PER_PARTITION)), partition
    # MirrorMaker 2's internal topics on a 3-broker target: replicated as HDInsight's min.insync.replicas 2 needs (the
    # offset syncs are on the source, 3.2.0's default location).
    assert topics["primary.checkpoints.internal"]["replication_factor"] == 3
    assert lab.client("primary", "topics")["topics"]["mm2-offset-syncs.secondary.internal"]["replication_factor"] == 3
    node = next(n for n in lab.state["clusters"]["secondary"]["nodes"] if n["name"] == lab.state["mirrormaker_node"])
    running = [argv for _pid, argv in mirrormaker_processes(node["mount_namespace"])
               if "/etc/kafka-mirrormaker2/connect-mirror-maker.properties" in argv]
    assert len(running) == 1, running
    assert any(arg.endswith("/libs/*") for arg in running[0]), running[0]


def test_failover_preview_then_apply_never_skips_a_record(lab):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # checkpoints every 5 s once MirrorMaker saw the group
        preview = lab.play(FAILOVER, check=True, failover_pause=False, failover_groups=["rk-.*"], failover_topics=["rk-.*"],
                           failover_verify_window=PER_PARTITION, failover_lag_timeout=60, failover_lag_poll_interval=1)
        assert not preview.failed, preview.stdout[-5000:]
        if {row["partition"] for row in preview.task(APPLY_TASK).get("offsets", []) if row["group"] == GROUP} == set(CONSUMED):
            break
        time.sleep(5)
    assert lab.client("secondary", "group", GROUP)["offsets"] == {}, "check mode committed offsets"
    run = lab.play(FAILOVER, failover_pause=False, failover_groups=["rk-.*"], failover_topics=["rk-.*"], failover_verify_window=PER_PARTITION,
                   failover_lag_timeout=60, failover_lag_poll_interval=1)
    assert not run.failed, run.stdout[-5000:]
    committed = lab.client("secondary", "group", GROUP)["offsets"]
    keys = lab.client("secondary", "keys", f"primary.{ORDERS}")["keys"]
    for partition, consumed in CONSUMED.items():
        offset = committed[f"primary.{ORDERS}:{partition}"]
        # The first record the group reads on the target is at or before its next unconsumed one: nothing skipped.
        unread = keys[str(partition)][offset:]
        assert f"p{partition}-{consumed}" in unread or consumed == PER_PARTITION, (partition, offset)
        assert {f"p{partition}-{i}" for i in range(consumed, PER_PARTITION)} <= set(unread), (partition, offset)


def test_rolling_restart_under_an_acks_all_producer(lab):
    lab.client("primary", "create", STEADY, 6, 3)
    before = {entry["request_id"] for entry in lab.restarts("primary")}
    producer = lab.steady_producer("primary", STEADY)
    try:
        time.sleep(3)
        play = lab.play(MIRROR, tags="ambari_kafka", mirror_source_ip_advertising=True, ambari_kafka_poll_interval=0.5)
    finally:
        result = stop_producer(producer)
    assert not play.failed, play.stdout[-5000:]
    assert result["failed"] == [] and result["acknowledged"] == result["sent"] > 100, result["failed"][:5]

    restarts = sorted((e for e in lab.restarts("primary") if e["request_id"] not in before), key=lambda e: e["stopped_ms"])
    assert sorted(e["host_name"] for e in restarts) == sorted(b["node"] for b in lab.state["clusters"]["primary"]["brokers"])
    samples = [s for s in result["samples"] if s[1] is not None]
    assert len(samples) > len(result["samples"]) / 2, f"the in-sync watch failed: {[s for s in result['samples'] if s[1] is None][:3]}"
    for previous, current in zip(restarts, restarts[1:]):
        assert previous["started_ms"] <= current["stopped_ms"], "two brokers were down at once"
        known = [s for s in samples if s[0] < current["stopped_ms"]]
        under = known[-1][1] if known else "?"
        assert known and known[-1][1] == [], f"{current['host_name']} stopped while partitions {under} were under-replicated"
    # Ambari's snippet reached the real brokers: each now tells clients its IP address.
    for broker in lab.state["clusters"]["primary"]["brokers"]:
        advertised = {b.host for b in probes.kafka_metadata(broker["host"], broker["port"])}
        assert advertised == {b["host"] for b in lab.state["clusters"]["primary"]["brokers"]}
    keys = lab.client("primary", "keys", STEADY)["keys"]
    assert len({k for batch in keys.values() for k in batch}) == result["acknowledged"]
