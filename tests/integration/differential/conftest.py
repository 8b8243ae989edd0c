# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the differential test: one real-Kafka lab, and the same scenario run through real MirrorMaker 2 and
through the stand-in (sandbox/mm2) for a release, read back with plain kafka-python.

The lab: two clusters of three Apache Kafka 3.9.2 brokers (KRaft, no ZooKeeper JVMs) on this worker's net
(`sandbox_net`, third octets LAB_SUBNET and LAB_SUBNET + 1, so it never meets the worker's noida or tansu sandboxes),
brokers advertising their IPs as the runbook's kafka-env snippet makes them, so this process and MirrorMaker reach them
without resolving a sandbox name. Every MirrorMaker 2 of every release (its own Kafka home from sandbox/kafka_dist.py)
and every stand-in mirrors between the same two clusters. They never see each other's data: each run has cluster
aliases and topic and group names of its own (`tag`), so its remote topics, internal topics, checkpoints, offset syncs,
Connect topics and group offsets are its own (the one topic they share, each cluster's `heartbeats`, is told apart by
its records' keys). The stand-in plays a release from a Kafka home of its own whose libs/kafka-clients-<release>.jar
says which (sandbox/mm2/release.py), holding a copy of the checkout's sandbox/ taken when the fixture starts.

The scenario (run_scenario): three source topics (`orders`, 4 partitions, keyed records and topic configs; `ledger`,
compacted, keyed; `events`, 2 partitions, no keys), records produced before MirrorMaker starts, a subscribed consumer
group committed at half of orders and events and a simple group (assign + commit) on ledger; MirrorMaker starts
(lifetime 1) and copies; more records are produced while it runs and it is killed with SIGKILL half-way through them;
the subscribed group commits at the end of orders; MirrorMaker starts again (lifetime 2), catches up and is stopped
cleanly; then everything is read back. Waits are on what the run writes, with deadlines, never fixed sleeps alone.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.partitioner.default import murmur2
from kafka.structs import OffsetAndMetadata

from sandbox import kafka_dist
from tests.support.checkout import REPO, collections_path
from tests.support.ip_advertising import assert_ip_advertising_as_ambari_stores
from tests.support.read_back import read_records
from tests.support.sandbox_fixture import running_sandbox

LAB_SUBNET = 44  # third octets 44 and 45 of the worker's net: no other test file uses them
LAB_RELEASE = "3.9.2"  # the brokers of both clusters; every MirrorMaker release mirrors between them
# Real MirrorMaker 2's JVM, small and quick to start on a 2-core machine (tuning only: what it writes is the same).
MM2_JVM_ENV = {"KAFKA_HEAP_OPTS": "-Xms64m -Xmx256m", "KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"}

# The scenario's shape.
ORDERS_PARTITIONS, EVENTS_PARTITIONS = 4, 2  # with ledger and the replicated heartbeats: 8 source partitions, below the
# 10 offset syncs real MirrorMaker keeps in flight (MirrorSourceTask.MAX_OUTSTANDING_OFFSET_SYNCS): none is dropped at start
ORDERS_CONFIGS = {"retention.ms": "86400000", "max.message.bytes": "2000000", "min.insync.replicas": "1"}  # the last is excluded by default
LEDGER_CONFIGS = {"cleanup.policy": "compact", "segment.ms": "600000"}
BEFORE = {"orders": 800, "ledger": 120, "events": 200}  # records produced before MirrorMaker starts
WHILE = {"orders": 1200, "ledger": 80, "events": 200}  # records produced while it runs; it is killed half-way through
PRODUCE_SECONDS = 6.0  # how long the records produced while it runs take
LEDGER_GROUP_OFFSET = 60
# A user topic whose name ends in `.internal`: every release before 4.0 takes it for internal and never replicates it; 4.0+
# (KIP-1074) replicates it. Compared through the topics comparison only (its remote topic exists or not).
USER_INTERNAL, USER_INTERNAL_RECORDS = "ops.internal", 10
FLUSH_INTERVAL_MS = 2000  # the herder's offset.flush.interval.ms: how far back a killed MirrorMaker copies again
WAIT_S = 150  # deadline of each wait on what a MirrorMaker writes (a real one's JVM starts in 10-30 s on 2 busy cores)

PROPERTIES = """# The differential test's flow {src} -> {dst} ({engine} MirrorMaker 2 of Kafka {release})
clusters = {src}, {dst}
{src}.bootstrap.servers = {primary}
{dst}.bootstrap.servers = {secondary}
{src}->{dst}.enabled = true
{src}->{dst}.topics = {tag}-.*
{src}->{dst}.groups = {tag}-.*
emit.heartbeats.interval.seconds = 1
emit.checkpoints.interval.seconds = 1
sync.group.offsets.enabled = true
sync.group.offsets.interval.seconds = 1
{dst}.offset.flush.interval.ms = {flush_ms}
"""


def _wait(predicate, what, timeout_s=WAIT_S, interval_s=0.5, engine=None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if engine is not None and engine.process.poll() is not None:
            raise AssertionError(f"{engine.name} ended (exit {engine.process.returncode}) while waiting for {what}:\n{engine.log_tail()}")
        time.sleep(interval_s)
    raise AssertionError(f"no {what} within {timeout_s} s" + (f"; {engine.name}'s log ends:\n{engine.log_tail()}" if engine else ""))


class Cluster:
    """Plain kafka-python clients of one lab cluster (none of the collection's or the stand-in's code)."""

    def __init__(self, bootstrap):
        self.bootstrap = bootstrap
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000, client_id="differential-test")

    def close(self):
        self.admin.close()

    def consumer(self, **options):
        return KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False, **{"group_id": None, **options})

    def topics(self):
        return set(self.admin.list_topics())

    def describe(self, names):
        """{topic: (partitions, replication factor)} of the topics the brokers know."""
        described = self.admin.describe_topics(sorted(names)) if names else []
        return {t["name"]: (len(t["partitions"]), len(t["partitions"][0]["replica_nodes"]))
                for t in described if t.get("error_code", 0) == 0 and t["partitions"]}

    def overrides(self, names):
        """{topic: {key: value}} of the topic-level overrides (DYNAMIC_TOPIC_CONFIG) of each topic a broker answered for. A
        broker that has not applied a new topic yet answers an error, which kafka-python 3.0.12 hands back as an empty config
        list: such a topic is left out, never read as "no overrides" (a topic has dozens of configs with filter all)."""
        if not names:
            return {}
        described = self.admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, n) for n in sorted(names)], config_filter="all")
        return {name: {key: entry["value"] for key, entry in entries.items() if entry.get("config_source") == "DYNAMIC_TOPIC_CONFIG"}
                for name, entries in described.get("topic", {}).items() if entries}

    def settled(self, names, timeout_s=60):
        """{topic: (partitions, replication factor, overrides)} of every name, once one describe and one config describe both
        answer for all of them. On KRaft each broker applies a new topic on its own time and the client asks any broker: a
        topic one broker lists may be unknown to the next one asked (seen in CI at a load of 100: a KeyError, and a
        compacted topic read as having no overrides)."""
        names = sorted(names)
        if not names:
            return {}

        def read():
            described, overrides = self.describe(names), self.overrides(names)
            if all(name in described and name in overrides for name in names):
                return {name: (*described[name], overrides[name]) for name in names}
            return None

        return _wait(read, f"{names} described by the brokers of {self.bootstrap}", timeout_s=timeout_s)

    def end_offsets(self, topic):
        consumer = self.consumer()
        try:
            partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
            return {tp.partition: end for tp, end in consumer.end_offsets(partitions).items()} if partitions else {}
        finally:
            consumer.close()

    def read(self, topic):
        """{partition: [(offset, key, value, headers, timestamp), ...]} of the whole topic, {} when it does not exist."""
        consumer = self.consumer(receive_message_max_bytes=256 * 1024 * 1024)
        try:
            return {partition: [(r.offset, r.key, r.value, tuple(r.headers or ()), r.timestamp) for r in records]
                    for partition, records in read_records(consumer, topic).items()}
        finally:
            consumer.close()

    def group_offsets(self, group):
        """{(topic, partition): offset} committed by `group` ({} when the cluster has no such group)."""
        offsets = self.admin.list_group_offsets({group: None}).get(group, {}) or {}
        return {(tp.topic, tp.partition): meta.offset for tp, meta in offsets.items() if meta is not None and meta.offset >= 0}

    def groups(self):
        return {g["group_id"]: g.get("protocol_type") for g in self.admin.list_groups()}


# --- engines -----------------------------------------------------------------------------------------------------------

class Engine:
    """One MirrorMaker 2 process that this test starts and ends by its PID (SIGKILL mid-copy, SIGTERM at the end)."""

    def __init__(self, name, argv, env, cwd: Path):
        self.name, self.argv, self.env, self.cwd = name, argv, env, cwd
        self.process = None
        self.lifetime = 0

    def start(self):
        self.lifetime += 1
        log = (self.cwd / f"lifetime-{self.lifetime}.log").open("w")
        with log:
            self.process = subprocess.Popen(self.argv, env=self.env, cwd=str(self.cwd), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def kill(self):
        """kill -9 of the one process (the real launcher execs down to the JVM, so its PID is the JVM's)."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self, timeout_s=60):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def log_tail(self, chars=4000):
        path = self.cwd / f"lifetime-{self.lifetime}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""


def real_engine(release, properties: Path, workdir: Path) -> Engine:
    home = kafka_dist.ensure_home(release)
    env = {**os.environ, **MM2_JVM_ENV, "LOG_DIR": str(workdir / "logs")}
    return Engine(f"real MirrorMaker 2 {release}", [str(home / "bin" / "connect-mirror-maker.sh"), str(properties)], env, workdir)


def stand_in_home(release, directory: Path) -> Path:
    """A Kafka home that says `release` (libs/kafka-clients-<release>.jar, the jar real version detection reads) holding a copy
    of the stand-in: it plays the release of the home it sits in (sandbox/mm2/release.py)."""
    home = directory / f"stand-in-home-{release}"
    if not home.exists():
        sandbox = Path(os.environ.get("DIFFERENTIAL_STAND_IN", str(REPO))) / "sandbox"
        shutil.copytree(sandbox, home / "stand-in" / "sandbox", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (home / "libs").mkdir()
        (home / "libs" / f"kafka-clients-{release}.jar").touch()
        (home / "bin").mkdir()
        (home / "bin" / "connect-mirror-maker.sh").write_text("#!/bin/sh\n# marker: the stand-in finds its Kafka home by this script\n")
    return home


def stand_in_engine(release, properties: Path, workdir: Path, homes: Path) -> Engine:
    home = stand_in_home(release, homes)
    env = {**os.environ, "PYTHONPATH": str(home / "stand-in"), "ANSIBLE_COLLECTIONS_PATH": str(collections_path())}
    return Engine(f"stand-in playing {release}", [sys.executable, "-m", "sandbox.mm2", str(properties)], env, workdir)


# --- the scenario --------------------------------------------------------------------------------------------------------

@dataclass
class Run:
    """What one engine wrote in one run of the scenario, read back after it stopped."""

    engine: str
    release: str
    tag: str
    src: str
    dst: str
    seconds: float = 0.0
    source: dict = field(default_factory=dict)  # topic -> {partition: [(offset, key, value, headers, timestamp)]}
    target: dict = field(default_factory=dict)  # remote topic -> the same
    topics: dict = field(default_factory=dict)  # "primary"/"secondary" -> {normalized name: (partitions, rf, overrides)}
    offset_syncs_topic: str = ""
    offset_syncs: list = field(default_factory=list)  # [(topic, partition, upstream, downstream)] in topic order
    syncs_before_restart: int = 0  # how many of offset_syncs lifetime 1 wrote (all written before the restart)
    checkpoints_topic: str = ""
    checkpoints: list = field(default_factory=list)  # [Checkpoint] in topic order
    target_ends_at_restart: dict = field(default_factory=dict)  # remote topic -> {partition: end offset} while it was down
    heartbeats: dict = field(default_factory=dict)  # (cluster, topic) -> [Heartbeat]
    source_groups: dict = field(default_factory=dict)  # group -> {(topic, partition): offset} on the source at the end
    target_groups: dict = field(default_factory=dict)  # group -> {(remote topic, partition): offset} on the target at the end
    group_protocols: dict = field(default_factory=dict)  # group -> protocol type on the source
    before_ends: dict = field(default_factory=dict)  # topic -> {partition: end offset} before MirrorMaker first started
    connect_offsets: dict = field(default_factory=dict)  # normalized Connect source-offset key -> (partition, murmur2 partition)
    killed_after: dict = field(default_factory=dict)  # remote topic -> records it had when the kill came
    produced_when_killed: int = 0

    def topic(self, name):
        """The run's name of a scenario topic (`orders` -> `<tag>-orders`)."""
        return f"{self.tag}-{name}"

    def remote(self, name):
        return f"{self.src}.{self.topic(name)}"

    def normalize(self, name):
        """A name of this run with its aliases and topic prefix replaced, comparable across runs."""
        return name.replace(self.src, "{src}").replace(self.dst, "{dst}").replace(f"{self.tag}-", "")

    @property
    def groups(self):
        return {"app": f"{self.tag}-app", "audit": f"{self.tag}-audit"}


def _record(topic_name, index):
    return f"{topic_name}|{index}".encode(), [("seq", str(index).encode())]


def _produce(bootstrap, run, counts, start, seconds=0.0, progress=None):
    """Records `start..start+count-1` of each topic: orders and ledger keyed (the client's murmur2 partitioner, as Java's),
    events without a key on partition index % 2; each with a header and an explicit timestamp an hour back."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    base_ms = int(time.time() * 1000) - 3_600_000
    total = sum(counts.values())
    pause = seconds / max(1, total / 20)
    sent = 0
    # Interleaved in proportion to each topic's count, so that every topic has records on both sides of the kill.
    schedule = sorted((step / count, name, start[name] + step) for name, count in counts.items() for step in range(count))
    try:
        for _fraction, name, index in schedule:
            value, headers = _record(name, index)
            key = None if name == "events" else (b"cust-%d" % (index % 37) if name == "orders" else b"acct-%d" % (index % 11))
            partition = index % EVENTS_PARTITIONS if name == "events" else None
            producer.send(run.topic(name), key=key, value=value, headers=headers, partition=partition, timestamp_ms=base_ms + index)
            sent += 1
            if seconds and sent % 20 == 0:
                producer.flush()
                if progress is not None:
                    progress["sent"] = sent
                time.sleep(pause)
        producer.flush()
    finally:
        producer.close()
        if progress is not None:
            progress["sent"] = sent


def _commit_subscribed(bootstrap, group, offsets, attempts=4, attempt_s=30):
    """A consumer group of the consumer protocol (subscribe, join, commit) committing {(topic, partition): offset}.

    A broker asked right after the topics were created may not know them yet (KRaft metadata reaches each broker on its own
    time, slowly at a load of 20+); the leader then assigns nothing ("No partition metadata for topic"), and kafka-python did
    not join again within 60 s even with a 1 s metadata_max_age_ms (seen with 3.9.2 brokers at loads of 20-60). So each
    attempt is a fresh consumer with fresh metadata, `attempts` of `attempt_s` seconds."""
    topics = sorted({topic for topic, _partition in offsets})
    for attempt in range(1, attempts + 1):
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, auto_offset_reset="earliest",
                                 metadata_max_age_ms=1000)
        try:
            consumer.subscribe(topics)
            try:
                _wait(lambda c=consumer: c.poll(timeout_ms=200, max_records=1) is not None and len(c.assignment()) == len(offsets),
                      f"group {group}'s assignment", timeout_s=attempt_s, interval_s=0)
            except AssertionError:
                if attempt == attempts:
                    raise
                continue
            consumer.commit({TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()})
            return
        finally:
            consumer.close()


def _commit_simple(cluster, group, offsets):
    """A simple group (no group protocol: what assign + commit makes), through OffsetCommit with no member."""
    cluster.admin.alter_group_offsets(group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()})


def _checkpoints_topic_records(cluster, run):
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint

    return [Checkpoint.decode(key, value) for _o, key, value, _h, _t in cluster.read(run.checkpoints_topic).get(0, []) if value is not None]


def _last_checkpoints(cluster, run):
    last = {}
    for checkpoint in _checkpoints_topic_records(cluster, run):
        last[(checkpoint.group, checkpoint.topic, checkpoint.partition)] = checkpoint
    return last


def run_scenario(lab, engine_kind, release, workdir: Path, homes: Path, before_start=None) -> Run:
    """The scenario through one engine. `before_start(source, target)` runs just before MirrorMaker's first start (the
    fixture runs both engines at once and starts the stand-in only once the real one has created `heartbeats`)."""
    started = time.monotonic()
    tag = f"{'r' if engine_kind == 'real' else 's'}{release.replace('.', '')}{uuid.uuid4().hex[:4]}"
    run = Run(engine=engine_kind, release=release, tag=tag, src=f"src_{tag}", dst=f"dst_{tag}")
    # Internal topic names of the releases graded here (3.1+: the policy's separator, '.', inside them too).
    run.offset_syncs_topic = f"mm2-offset-syncs.{run.dst}.internal"
    run.checkpoints_topic = f"{run.src}.checkpoints.internal"
    primary, secondary = lab["primary"], lab["secondary"]
    source, target = Cluster(primary), Cluster(secondary)
    workdir.mkdir(parents=True, exist_ok=True)
    properties = workdir / "connect-mirror-maker.properties"
    properties.write_text(PROPERTIES.format(src=run.src, dst=run.dst, primary=primary, secondary=secondary, tag=tag, engine=engine_kind,
                                            release=release, flush_ms=FLUSH_INTERVAL_MS))
    engine = real_engine(release, properties, workdir) if engine_kind == "real" else stand_in_engine(release, properties, workdir, homes)
    try:
        # Source topics and the records before MirrorMaker starts.
        source.admin.create_topics({
            run.topic("orders"): {"num_partitions": ORDERS_PARTITIONS, "replication_factor": 3, "configs": ORDERS_CONFIGS},
            run.topic("ledger"): {"num_partitions": 1, "replication_factor": 3, "configs": LEDGER_CONFIGS},
            run.topic("events"): {"num_partitions": EVENTS_PARTITIONS, "replication_factor": 3, "configs": {}},
        })
        source.admin.create_topics({run.topic(USER_INTERNAL): {"num_partitions": 1, "replication_factor": 3, "configs": {}}})
        _wait(lambda: len(source.describe([run.topic(n) for n in (*BEFORE, USER_INTERNAL)])) == len(BEFORE) + 1, "source topics in the metadata",
              timeout_s=30)
        _produce(primary, run, BEFORE, {name: 0 for name in BEFORE})
        producer = KafkaProducer(bootstrap_servers=primary, acks="all")
        for index in range(USER_INTERNAL_RECORDS):
            producer.send(run.topic(USER_INTERNAL), key=b"op-%d" % index, value=b"op|%d" % index)
        producer.close()
        half = {}
        for name in ("orders", "events"):
            for partition, end in source.end_offsets(run.topic(name)).items():
                half[(run.topic(name), partition)] = end // 2
        _commit_subscribed(primary, run.groups["app"], half)
        _commit_simple(source, run.groups["audit"], {(run.topic("ledger"), 0): LEDGER_GROUP_OFFSET})
        before_ends = run.before_ends = {name: source.end_offsets(run.topic(name)) for name in BEFORE}

        # Lifetime 1: copies what is there, checkpoints both groups and syncs their offsets to the target.
        if before_start is not None:
            before_start(source, target)
        engine.start()
        if engine_kind == "real":
            # The stand-in's run waits for these (_heartbeats_created), and only a running real MirrorMaker makes them: its
            # reverse herder (heartbeats to the source) creates three internal topics of its own first, which took over 30 s on
            # a loaded machine, longer than the scenario below keeps the first lifetime running.
            _wait(lambda: "heartbeats" in source.topics() and "heartbeats" in target.topics(), "its heartbeats topics on both clusters",
                  engine=engine)

        def copied(ends):
            return all(sum(target.end_offsets(run.remote(name)).values() or [0]) >= sum(ends[name].values()) for name in ends)

        _wait(lambda: copied(before_ends), "copy of the records produced before MirrorMaker started", engine=engine)
        # Not every group partition gets a checkpoint in every run: a real MirrorMaker under load drops or replaces offset syncs
        # (see test_offset_syncs_mean_the_same), and a partition without a sync at or before the group's offset has none.
        _wait(lambda: _last_checkpoints(target, run), "a first checkpoint", engine=engine)
        time.sleep(FLUSH_INTERVAL_MS / 1000.0 + 1.0)  # at least one offset commit after the copy: the kill comes later

        # Records while it runs; kill -9 half-way through them.
        progress = {"sent": 0}
        producing = threading.Thread(target=_produce, args=(primary, run, WHILE, {n: sum(before_ends[n].values()) for n in WHILE}),
                                     kwargs={"seconds": PRODUCE_SECONDS, "progress": progress}, daemon=True)
        producing.start()
        half_way = sum(WHILE.values()) // 2
        orders_before = sum(before_ends["orders"].values())
        _wait(lambda: progress["sent"] >= half_way and sum(target.end_offsets(run.remote("orders")).values()) > orders_before,
              "the copy of the records produced while MirrorMaker runs", timeout_s=60, interval_s=0.1, engine=engine)
        engine.kill()
        run.produced_when_killed = progress["sent"]
        producing.join(timeout=60)
        run.target_ends_at_restart = {run.remote(name): target.end_offsets(run.remote(name)) for name in BEFORE}
        run.killed_after = {topic: sum(ends.values()) for topic, ends in run.target_ends_at_restart.items()}
        run.syncs_before_restart = sum(source.end_offsets(run.offset_syncs_topic).values())

        # The subscribed group reads orders to its end while MirrorMaker is down; events stay at half of what was there before.
        end_orders = source.end_offsets(run.topic("orders"))
        _commit_simple(source, run.groups["app"], {(run.topic("orders"), p): end for p, end in end_orders.items()})
        source_ends = {name: source.end_offsets(run.topic(name)) for name in BEFORE}

        # Lifetime 2: resumes from its last committed source offsets, catches up, checkpoints the group at the end of orders.
        engine.start()

        def caught_up():
            """Every source record (by its value, unique in the scenario) is in its remote partition."""
            for name in BEFORE:
                copies = target.read(run.remote(name))
                for partition, records in run.source[name].items():
                    if not {r[2] for r in records} <= {r[2] for r in copies.get(partition, [])}:
                        return False
            return True

        run.source = {name: source.read(run.topic(name)) for name in BEFORE}
        _wait(lambda: all(sum(target.end_offsets(run.remote(n)).values()) >= sum(source_ends[n].values()) for n in BEFORE) and caught_up(),
              "copy of every source record after the restart", engine=engine, interval_s=1.0)
        at_end = {(run.groups["app"], run.remote("orders"), p): end for p, end in end_orders.items()}
        _wait(lambda: all(getattr(_last_checkpoints(target, run).get(key), "upstream_offset", None) == end for key, end in at_end.items()),
              "checkpoints of the group at the end of orders", engine=engine)
        _wait(lambda: all(target.group_offsets(run.groups["app"]).get(key[1:]) == _last_checkpoints(target, run)[key].downstream_offset
                          for key in at_end), "the group's offsets at the end of orders on the target", engine=engine)
        time.sleep(3.0)  # a few more rounds of checkpoints, group offset syncs and offset commits after catching up
        engine.stop()
        if engine.process.returncode not in (0, 130, 143, -signal.SIGTERM):
            raise AssertionError(f"{engine.name} ended with {engine.process.returncode} at a clean stop:\n{engine.log_tail()}")

        # Read back everything the run wrote.
        _read_back(run, source, target)
    finally:
        engine.stop(timeout_s=30)
        run.seconds = round(time.monotonic() - started, 1)
        source.close()
        target.close()
    return run


def _read_back(run, source, target):
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Heartbeat, OffsetSync

    run.source = {name: source.read(run.topic(name)) for name in BEFORE}
    run.target = {run.remote(name): target.read(run.remote(name)) for name in BEFORE}
    for side, cluster in (("primary", source), ("secondary", target)):
        names = {t for t in cluster.topics() if run.src in t or run.dst in t or t.startswith(f"{run.tag}-")}
        names |= {"heartbeats"} & cluster.topics()
        run.topics[side] = {run.normalize(t): found for t, found in cluster.settled(names).items()}
    run.offset_syncs = [tuple(OffsetSync.decode(key, value)) for _o, key, value, _h, _t in source.read(run.offset_syncs_topic).get(0, [])
                        if value is not None]
    run.checkpoints = _checkpoints_topic_records(target, run)
    for side, cluster in (("primary", source), ("secondary", target)):
        for topic in sorted({"heartbeats", f"{run.src}.heartbeats", f"{run.dst}.heartbeats"} & cluster.topics()):
            beats = [Heartbeat.decode(key, value) for _o, key, value, _h, _t in cluster.read(topic).get(0, []) if value is not None]
            run.heartbeats[(side, run.normalize(topic))] = [b for b in beats if {b.source_alias, b.target_alias} <= {run.src, run.dst}]
    offsets_topic = f"mm2-offsets.{run.src}.internal"
    partitions = len(target.end_offsets(offsets_topic))
    for partition, records in target.read(offsets_topic).items():
        for _o, key, value, _h, _t in records:
            if key and value:
                # (where it is, where the producer's default partitioner puts its key bytes: murmur2, as Java's Utils.murmur2)
                run.connect_offsets[run.normalize(key.decode())] = (partition, (murmur2(key) & 0x7FFFFFFF) % partitions)
    protocols = source.groups()
    for group in run.groups.values():
        run.source_groups[group] = source.group_offsets(group)
        run.target_groups[group] = target.group_offsets(group)
        run.group_protocols[group] = protocols.get(group)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, sandbox_net):
    """Two 3-broker Kafka 3.9.2 clusters (KRaft) advertising their IPs, on this worker's net, third octets LAB_SUBNET and + 1."""
    started = time.monotonic()
    # advertise_ip: the runbook's IP-advertising snippet in each cluster's kafka-env, stored by Ambari and what the
    # brokers start with, so this process and MirrorMaker reach the brokers by IP (docs/development.md).
    with running_sandbox(tmp_path_factory.mktemp("differential-lab"),
                         f"the differential test's lab (apache {LAB_RELEASE}, net {sandbox_net}, subnet {LAB_SUBNET})", down_timeout=90,
                         provider="apache", net=sandbox_net, subnet=LAB_SUBNET, node_mode="local",
                         releases={"primary": LAB_RELEASE, "secondary": LAB_RELEASE}, kafka_version=LAB_RELEASE, timeout=600, advertise_ip=True) as state:
        # up(advertise_ip=True) on real Kafka, checked here rather than on a lab of its own (test_sandbox_up_options: CI time).
        assert_ip_advertising_as_ambari_stores(state)
        yield {"state": state, "primary": state["clusters"]["primary"]["bootstrap_servers"],
               "secondary": state["clusters"]["secondary"]["bootstrap_servers"], "startup_seconds": round(time.monotonic() - started, 1)}


def _delete_heartbeats(clusters):
    """Each cluster's `heartbeats` is the one topic every run writes: deleted before a release's runs, so that they create it."""
    for cluster in clusters:
        if "heartbeats" in cluster.topics():
            cluster.admin.delete_topics(["heartbeats"])
        _wait(lambda c=cluster: "heartbeats" not in c.topics(), "the previous run's heartbeats topic deleted", timeout_s=60)


def _heartbeats_created(source, target):
    """The stand-in's run starts its MirrorMaker only once the real one has created `heartbeats` on both clusters, so that the
    topic read back is real MirrorMaker's creation (the stand-in's is read by stand_in_heartbeats_topic)."""
    _wait(lambda: "heartbeats" in source.topics() and "heartbeats" in target.topics(), "real MirrorMaker 2's heartbeats topics")


def stand_in_heartbeats_topic(lab, release, workdir: Path, homes: Path) -> dict:
    """{side: (partitions, replication factor, overrides)} of `heartbeats` as the stand-in creates it: deleted on both clusters
    (both engines stopped), a stand-in started with aliases and topics of its own until both clusters have it again, stopped."""
    source, target = Cluster(lab["primary"]), Cluster(lab["secondary"])
    tag = f"h{release.replace('.', '')}{uuid.uuid4().hex[:4]}"
    workdir.mkdir(parents=True, exist_ok=True)
    properties = workdir / "connect-mirror-maker.properties"
    properties.write_text(PROPERTIES.format(src=f"src_{tag}", dst=f"dst_{tag}", primary=lab["primary"], secondary=lab["secondary"], tag=tag,
                                            engine="stand-in (heartbeats only)", release=release, flush_ms=FLUSH_INTERVAL_MS))
    engine = stand_in_engine(release, properties, workdir, homes)
    try:
        _delete_heartbeats((source, target))
        engine.start()
        # Described, not only listed: a broker may list a topic before its partitions reach the broker a describe asks (KRaft).
        _wait(lambda: all("heartbeats" in cluster.describe(["heartbeats"]) for cluster in (source, target)), "the stand-in's heartbeats topics",
              engine=engine)
        return {side: cluster.settled(["heartbeats"])["heartbeats"] for side, cluster in (("primary", source), ("secondary", target))}
    finally:
        engine.stop(timeout_s=30)
        source.close()
        target.close()


@pytest.fixture(scope="module")
def differential(lab, tmp_path_factory):
    """`differential(release)` -> {"real": Run, "stand-in": Run}: the scenario through both engines, once per release per module.

    Both engines run at the same time (each run's aliases, topics and groups are its own; conftest docstring), which saves
    the stand-in's whole run (about 50 s a release) on top of the real one's. The one topic they share is each cluster's
    `heartbeats`: the stand-in starts once real MirrorMaker 2 has created it, and after both have stopped it is deleted and
    created again by a short stand-in run of its own (stand_in_heartbeats_topic), whose description stands for the
    stand-in's in the topics comparison. DIFFERENTIAL_STAND_IN=DIR grades the `sandbox` package in DIR instead of the
    checkout's (a deliberately broken stand-in, for instance, without touching the shared checkout)."""
    homes = tmp_path_factory.mktemp("stand-in-homes")
    runs = {}

    def get(release):
        if release not in runs:
            started = time.monotonic()
            try:
                clusters = (Cluster(lab["primary"]), Cluster(lab["secondary"]))
                try:
                    _delete_heartbeats(clusters)
                finally:
                    for cluster in clusters:
                        cluster.close()
                with ThreadPoolExecutor(max_workers=2) as pool:
                    futures = {kind: pool.submit(run_scenario, lab, kind, release, tmp_path_factory.mktemp(f"{kind}-{release}"), homes,
                                                 None if kind == "real" else _heartbeats_created)
                               for kind in ("real", "stand-in")}
                    done = {kind: future.result() for kind, future in futures.items()}
                heartbeats = stand_in_heartbeats_topic(lab, release, tmp_path_factory.mktemp(f"heartbeats-{release}"), homes)
                for side, described in heartbeats.items():
                    done["stand-in"].topics[side]["heartbeats"] = described
                runs[release] = done
            except Exception as exc:  # pylint: disable=broad-except  # every test of the release reports the same failure
                runs[release] = exc
            print(f"\n{release}: both engines in {round(time.monotonic() - started, 1)} s")
        if isinstance(runs[release], Exception):
            raise runs[release]
        return runs[release]

    return get
