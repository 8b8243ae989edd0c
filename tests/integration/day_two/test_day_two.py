# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Day two: playbooks/mirror.yml against a mirror that is already running, on one sandbox, in order.

Day one mirrors two topics (mirror.yml's mirror stages only, without IP advertising on the source). Overnight one of
them is deleted on the source and the sandbox is rebooted (`down`, `up` in the same directory): supervisord on the
MirrorMaker node starts MirrorMaker 2 again with yesterday's properties, as a real service manager would. Before day
two, new topics appear on the source and a producer keeps writing to the remaining one. Day two is one whole mirror.yml run
that turns IP advertising on (ambari_kafka restarts the source broker while MirrorMaker replicates), during which the
MirrorMaker 2 process is killed once (supervisord restarts it) and the producer then stops (the validation job wants a
target that stops moving); its validation stage must pass. The last step fails the consumers over (failover.yml); the
source keeps receiving records after the cut-over, and the whole mirror.yml run again must not undo it (MirrorMaker stays
stopped, nothing more reaches the target, the moved group's offsets stay). Resuming with
mirrormaker2_resume_after_failover is tested in tests/integration/mirrormaker2/test_mirrormaker2_absent.py (CI time).

The flow renders refresh.topics.interval.seconds 600 (Kafka's default) on purpose: within the 240 s health wait, only
the role's restart of the running MirrorMaker can make it replicate the new topics. Every scenario is asserted on its
own, on state read back with independent clients (plain kafka-python, supervisorctl inside the node, the files on the
node); each step's time is printed and written to tests/output/day-two-timings.json for the closing note.
"""
from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from sandbox import api
from sandbox.node_init import SUPERVISOR_CONFIG
from tests.support import mm2_kafka_io as kafka_io
from tests.support.ansible_play import run_playbook
from tests.support.step_timer import StepTimer
from tests.support.checkout import REPO

pytestmark = [pytest.mark.integration, pytest.mark.spark,
              pytest.mark.skipif(os.geteuid() != 0, reason="the MirrorMaker node runs its own supervisord (ssh node mode, root)")]

SUBNET = 20  # a sandbox of its own (third octets 20 and 21): it is rebooted, failed over and left with MirrorMaker stopped
MIRROR, FAILOVER = REPO / "playbooks" / "mirror.yml", REPO / "playbooks" / "failover.yml"
ROLE = "kafkaops.mirror.mirrormaker2 : "
RESTART_FOR_TOPICS = ROLE + "Restart MirrorMaker so that it replicates the topics it does not know yet"
REPORT_WITHOUT_SOURCE = ROLE + "Report remote topics whose source topic is gone"
VALIDATION_REPORT = "kafkaops.mirror.mirror_validation : Keep the report as a fact"
HOLD_AFTER_FAILOVER = ROLE + "Keep MirrorMaker stopped, a failover cut its flow over"
VALIDATION_SKIPPED = "Skip the validation of a flow that a failover cut over"
CUTOVER_RECORD = "/etc/kafka-mirrormaker2/failed-over.json"  # the mirrormaker2 role's record, read back on the node
AFTER_CUTOVER_RECORDS, AFTER_CUTOVER_FIRST_KEY = 30, 10_000  # keys key-10000.. were never produced before
PROGRAM = "kafka-mirrormaker2"  # mirrormaker2_service_name's default
PROPERTIES = "/etc/kafka-mirrormaker2/connect-mirror-maker.properties"
SUPERVISORCTL = f"{Path(sys.executable).parent / 'supervisorctl'} -c {SUPERVISOR_CONFIG}"

ORDERS, DOOMED, NEW_TOPICS, GROUP = "d2-orders", "d2-doomed", {"d2-new-a": 2, "d2-new-b": 1}, "d2-app"
ORDERS_PARTITIONS, DAY_ONE_RECORDS, NEW_RECORDS = 2, 200, 60
FLOW = {"source": "primary", "target": "secondary", "topics": ["d2-.*"], "groups": ["d2-.*"],
        "refresh_topics_interval_seconds": 600, "refresh_groups_interval_seconds": 5, "emit_checkpoints_interval_seconds": 5}
# A MirrorMaker killed with -9 copies again what it copied since its last source-offset commit (offset.flush.interval.ms,
# Connect's default 60 s, a worker setting: MirrorMakerConfig.workerConfig reads it scoped by the target alias):
# committing every second keeps the duplicates of the kill within the validation's 1 %.
PLAN = {"mirrormaker2_flows": [FLOW], "mirrormaker2_properties": {"secondary.offset.flush.interval.ms": 1000},
        "mirrormaker2_health_timeout": 240, "mirrormaker2_health_poll_interval": 2,
        "mirror_topics": "d2-.*", "mirror_validation_topics": "d2-.*", "mirror_validation_catch_up_timeout": 120}
TIMINGS = REPO / "tests" / "output" / "day-two-timings.json"
RESTART_HOLD_S = 4  # see SteadyProducer


class Lab:
    """The sandbox and what each step leaves for the next ones."""

    def __init__(self, directory, state):
        self.directory, self.state = directory, state
        self.plays, self.facts = {}, {}
        self.timer = StepTimer("day two", TIMINGS)
        self.timed = self.timer.timed

    @property
    def inventory(self):
        return Path(self.directory) / "inventory.yml"

    def bootstrap(self, alias):
        return self.state["clusters"][alias]["bootstrap_servers"]

    @property
    def node(self):
        return next(n for n in self.state["clusters"]["secondary"]["nodes"] if n["name"] == self.state["mirrormaker_node"])

    def on_node(self, command):
        """A command as root inside the MirrorMaker node (its files and its supervisord)."""
        return subprocess.run([self.node["exec"], "sh", "-c", command], capture_output=True, text=True, check=False, timeout=60)

    def mirrormaker_pid(self):
        """The MirrorMaker program's PID when supervisord has it RUNNING, else None."""
        status = self.on_node(f"{SUPERVISORCTL} status {PROGRAM}").stdout.split()
        return int(status[3].rstrip(",")) if len(status) > 3 and status[1] == "RUNNING" else None

    def mirror(self, step, tags, **extra):
        """mirror.yml with the stages `tags` (None: all; mirror_host is tagged always) and the plan."""
        play = self.timed(step, lambda: run_playbook(MIRROR, inventory=self.inventory, tags=tags, timeout=1800, extra_vars=dict(PLAN, **extra)))
        self.plays[step] = play
        return play


def admin(bootstrap):
    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000, api_version=kafka_io.API_VERSION)


def group_offsets(bootstrap, group):
    client = admin(bootstrap)
    try:
        return {(tp.topic, tp.partition): meta.offset for tp, meta in client.list_group_offsets({group: None}).get(group, {}).items()}
    finally:
        client.close()


def commit(bootstrap, group, topic, offsets):
    """Commit `offsets` ({partition: offset}) for `group`, as a consumer that has read that far would."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, api_version=kafka_io.API_VERSION)
    try:
        consumer.commit({TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1) for partition, offset in offsets.items()})
    finally:
        consumer.close()


def keys_of(records):
    return {record[0] for partition in records.values() for record in partition}


def ambari(state, alias, method, path, body=None):
    """One request to a cluster's Ambari emulator (basic auth, X-Requested-By), its JSON answer or {}."""
    settings = state["clusters"][alias]["ambari"]
    token = base64.b64encode(f"{settings['username']}:{settings['password']}".encode()).decode()
    request = urllib.request.Request(settings["url"] + path, data=json.dumps(body).encode() if body is not None else None, method=method,
                                     headers={"Authorization": f"Basic {token}", "X-Requested-By": "kafkaops-test",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=20) as response:
        text = response.read().decode()
    return json.loads(text) if text.strip() else {}


def source_restart_under_way(state):
    requests = ambari(state, "primary", "GET", f"/api/v1/clusters/{state['clusters']['primary']['ambari']['cluster_name']}/requests"
                                               "?fields=Requests/request_status")
    return any(item.get("Requests", {}).get("request_status") in ("PENDING", "QUEUED", "IN_PROGRESS") for item in requests.get("items", []))


class SteadyProducer(threading.Thread):
    """Writes to the source all through day two, as applications do; keeps the keys the broker acknowledged.

    Quirk (noida-db 0.2.3): a record acknowledged just before the broker stops (SIGTERM, exit 0) can be missing when it is
    back, and its offset then goes to the next record; MirrorMaker, which had copied the lost one, never sees the one
    written at the reused offset (seen twice: validation's "missing 1, unexpected 1" at the restart's offset). A Kafka
    broker's clean shutdown keeps every acknowledged record. So the producer holds its writes while a restart request of
    the source's Ambari is under way (the emulator is told to hold each request request_delay_s before it stops the
    broker, long enough for the last writes to be acknowledged); MirrorMaker keeps replicating through the restart."""

    def __init__(self, state, topic, partitions, rate_per_s=20):
        super().__init__(daemon=True)
        self.state, self.topic, self.partitions, self.pause = state, topic, partitions, 1.0 / rate_per_s
        self.acknowledged, self.stopping, self.held_s = set(), threading.Event(), 0.0

    def run(self):
        # Retries ride out the source broker's restart; a record the broker never acknowledged is not expected anywhere.
        producer = KafkaProducer(bootstrap_servers=self.state["clusters"]["primary"]["bootstrap_servers"], api_version=kafka_io.API_VERSION,
                                 acks="all", retries=20, retry_backoff_ms=500, request_timeout_ms=10000, delivery_timeout_ms=120000,
                                 linger_ms=20)
        index = 0
        try:
            while not self.stopping.is_set():
                if index % 5 == 0 and source_restart_under_way(self.state):
                    producer.flush(60)
                    self.held_s += 0.2
                    time.sleep(0.2)
                    continue
                key = b"steady-%d" % index
                producer.send(self.topic, key=key, value=b"v", partition=index % self.partitions).add_callback(
                    lambda _meta, k=key: self.acknowledged.add(k))
                index += 1
                time.sleep(self.pause)
            producer.flush(60)
        finally:
            producer.close(30)

    def stop(self):
        self.stopping.set()
        self.join(120)


class MirrorMakerKiller(threading.Thread):
    """Kills MirrorMaker (SIGKILL) once, a few seconds after the role has restarted it for the new topics (its PID is then
    no longer the one supervisord started at boot), so that it dies while the health wait runs; supervisord restarts it.
    Then the producers stop (`producer`), as the validation stage wants a target that stops moving."""

    def __init__(self, lab, boot_pid, producer, deadline_s=1200):
        super().__init__(daemon=True)
        self.lab, self.boot_pid, self.producer, self.deadline = lab, boot_pid, producer, time.monotonic() + deadline_s
        self.killed, self.stopping = None, threading.Event()

    def run(self):
        while not self.stopping.is_set() and time.monotonic() < self.deadline:
            pid = self.lab.mirrormaker_pid()
            if pid and pid != self.boot_pid:
                time.sleep(5)
                os.kill(pid, signal.SIGKILL)
                self.killed = pid
                break
            time.sleep(1)
        self.producer.stopping.set()


@pytest.fixture(scope="module")
def lab(tmp_path_factory, sandbox_net):
    directory = tmp_path_factory.mktemp("day-two")
    state = api.up(directory, provider="noida", net=sandbox_net, subnet=SUBNET)
    try:
        yield Lab(directory, state)
    finally:
        api.down(directory)


def test_day_one_mirrors_the_topics_of_the_day(lab):
    primary = lab.bootstrap("primary")
    kafka_io.create(primary, ORDERS, ORDERS_PARTITIONS)
    kafka_io.create(primary, DOOMED, 1)
    kafka_io.produce(primary, ORDERS, DAY_ONE_RECORDS, ORDERS_PARTITIONS)
    kafka_io.produce(primary, DOOMED, 50, 1)
    commit(primary, GROUP, ORDERS, {0: 40, 1: 40})

    # Lean: the stages that set up the mirror (the target's auto-create through Ambari, pre-creation, MirrorMaker); the
    # connectivity checks and fixes run in the whole day-two run.
    play = lab.mirror("day one", tags="ambari_kafka,kafka_topics,mirrormaker2", mirror_source_ip_advertising=False,
                      mirror_target_auto_create_topics=True)

    assert not play.failed, play.stdout[-6000:]
    secondary = lab.bootstrap("secondary")
    for topic in (ORDERS, DOOMED):
        assert kafka_io.wait_for(lambda t=topic: keys_of(kafka_io.read_all(secondary, "primary." + t)) == keys_of(kafka_io.read_all(primary, t)), 60)
    lab.facts["doomed_offsets"] = kafka_io.end_offsets(secondary, "primary." + DOOMED)


def test_reboot_brings_mirrormaker_back_with_yesterdays_properties(lab):
    properties = lab.on_node(f"cat {PROPERTIES}").stdout
    # The run may end with MirrorMaker just (re)started, STARTING for supervisord's first second.
    before = kafka_io.wait_for(lab.mirrormaker_pid, 30)
    assert before and "refresh.topics.interval.seconds=600" in properties

    # Overnight, while MirrorMaker is down, one of yesterday's topics is deleted on the source. Quirk (noida-db 0.2.3): the
    # broker has no auto.create.topics.enable and creates any topic a client asks metadata for, so a running stand-in, still
    # assigned to the topic, would bring it back at once; an HDInsight source (auto-create off) would not.
    assert lab.on_node(f"{SUPERVISORCTL} stop {PROGRAM}").returncode == 0
    primary = lab.bootstrap("primary")
    client = admin(primary)
    try:
        client.delete_topics([DOOMED])
    finally:
        client.close()
    assert kafka_io.wait_for(lambda: DOOMED not in kafka_io.topics(primary), 30)

    def reboot():
        api.down(lab.directory)
        return api.up(lab.directory, provider="noida", net=lab.state["net"], subnet=SUBNET)

    lab.state = lab.timed("reboot", reboot)

    booted = kafka_io.wait_for(lab.mirrormaker_pid, 60)
    assert booted and booted != before, lab.on_node(f"{SUPERVISORCTL} status").stdout
    assert lab.on_node(f"cat {PROPERTIES}").stdout == properties
    lab.facts["boot_pid"] = booted


def test_day_two_plan_in_check_mode_names_the_restart_and_changes_nothing(lab):
    primary = lab.bootstrap("primary")
    for topic, partitions in NEW_TOPICS.items():
        kafka_io.create(primary, topic, partitions)
        kafka_io.produce(primary, topic, NEW_RECORDS, partitions)

    play = lab.timed("day two, check mode (mirrormaker2 stage)", lambda: run_playbook(
        MIRROR, inventory=lab.inventory, tags="mirrormaker2", check=True, diff=True, timeout=900, extra_vars=PLAN))

    assert not play.failed, play.stdout[-6000:]
    planned = play.task(RESTART_FOR_TOPICS)
    assert planned["changed"] and "would restart" in planned["msg"] and all(topic in planned["msg"] for topic in NEW_TOPICS), planned
    assert lab.mirrormaker_pid() == lab.facts["boot_pid"], "check mode restarted MirrorMaker"
    assert not {"primary." + topic for topic in NEW_TOPICS} & kafka_io.topics(lab.bootstrap("secondary"))


def test_day_two_run(lab):
    """The run itself; the scenarios are asserted one by one in the tests after this one."""
    lab.facts["source_broker_pid"] = api.status(lab.directory)["processes"]["primary-broker"]["pid"]
    ambari(lab.state, "primary", "POST", "/_sandbox/faults", {"request_delay_s": RESTART_HOLD_S})
    producer = SteadyProducer(lab.state, ORDERS, ORDERS_PARTITIONS)
    killer = MirrorMakerKiller(lab, lab.facts["boot_pid"], producer)
    producer.start()
    killer.start()
    try:
        play = lab.mirror("day two (whole mirror.yml, validation included)", tags=None, mirror_source_ip_advertising=True,
                          mirror_validation_report_dir=str(Path(lab.directory) / "reports"))
    finally:
        killer.stopping.set()
        producer.stop()
        killer.join(30)
        ambari(lab.state, "primary", "DELETE", "/_sandbox/faults")
    print(f"day two: the producer held its writes {producer.held_s:.0f} s while the source broker restarted")
    lab.facts.update(killed=killer.killed, acknowledged=producer.acknowledged)
    assert not play.failed, play.stdout[-8000:]


def test_new_source_topics_are_mirrored_by_a_restart_with_its_reason(lab):
    play = lab.plays["day two (whole mirror.yml, validation included)"]
    restart = play.task(RESTART_FOR_TOPICS)
    assert restart["changed"] and all(topic in restart["msg"] for topic in NEW_TOPICS), restart
    primary, secondary = lab.bootstrap("primary"), lab.bootstrap("secondary")
    for topic in NEW_TOPICS:
        assert keys_of(kafka_io.read_all(secondary, "primary." + topic)) == keys_of(kafka_io.read_all(primary, topic))


def test_deleted_source_topic_is_reported_and_left_alone(lab):
    play = lab.plays["day two (whole mirror.yml, validation included)"]
    assert "primary." + DOOMED in play.task(REPORT_WITHOUT_SOURCE)["msg"]
    assert DOOMED not in kafka_io.topics(lab.bootstrap("primary")), "the deleted source topic was created again"
    # Neither deleted nor created again on the target: the remote topic keeps yesterday's records.
    assert kafka_io.end_offsets(lab.bootstrap("secondary"), "primary." + DOOMED) == lab.facts["doomed_offsets"]


def test_killed_mirrormaker_is_restarted_and_nothing_is_lost(lab):
    killed = lab.facts["killed"]
    assert killed, "MirrorMaker was never killed: the role did not restart it during the run"
    assert lab.mirrormaker_pid() not in (None, killed), "supervisord did not start MirrorMaker again"
    report = lab.plays["day two (whole mirror.yml, validation included)"].task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    orders = next(topic for topic in report["topics"] if topic["source_topic"] == ORDERS)
    assert orders["status"] == "passed" and orders["totals"]["missing"] == 0, orders["totals"]
    assert orders["totals"]["duplicate_ratio"] <= 0.01, orders["totals"]


def test_source_broker_restart_while_replicating_loses_nothing(lab):
    assert api.status(lab.directory)["processes"]["primary-broker"]["pid"] != lab.facts["source_broker_pid"], \
        "ambari_kafka did not restart the source broker for IP advertising"
    acknowledged = lab.facts["acknowledged"]
    assert len(acknowledged) > 100, "the producer hardly wrote during the run"
    on_source = keys_of(kafka_io.read_all(lab.bootstrap("primary"), ORDERS))
    mirrored = keys_of(kafka_io.read_all(lab.bootstrap("secondary"), "primary." + ORDERS))
    missing = on_source - mirrored
    assert not missing, f"{len(missing)} source record(s) never reached the target, e.g. {sorted(missing)[:5]}"
    # What the source broker itself lost in its restart (acknowledged, then not in the partition) is no MirrorMaker loss;
    # it is shown, and bounded so that a broker that loses more than the last moment's writes fails the test.
    lost_by_broker = acknowledged - on_source
    print(f"day two: {len(acknowledged)} records acknowledged during the run, {len(lost_by_broker)} of them not on the source after its restart")
    assert len(lost_by_broker) <= 5, f"the source broker lost {len(lost_by_broker)} acknowledged records in its restart: {sorted(lost_by_broker)[:5]}"


def test_mirror_after_failover_keeps_the_cut_over(lab):
    inventory = lab.inventory
    failover = lab.timed("failover.yml", lambda: run_playbook(FAILOVER, inventory=inventory, timeout=900, extra_vars={
        "failover_pause": False, "failover_groups": ["d2-.*"], "failover_topics": ["d2-.*"], "failover_lag_timeout": 180,
        "failover_lag_poll_interval": 2}))
    assert not failover.failed, failover.stdout[-6000:]
    primary, secondary = lab.bootstrap("primary"), lab.bootstrap("secondary")
    moved = group_offsets(secondary, GROUP)
    assert moved and all(topic == "primary." + ORDERS for topic, _partition in moved), moved
    record = json.loads(lab.on_node(f"cat {CUTOVER_RECORD}").stdout or "{}")
    assert record.get("flows", {}).get("primary->secondary", {}).get("groups") == ["d2-.*"], record
    topics = {ORDERS: ORDERS_PARTITIONS, **NEW_TOPICS}
    remote_ends = {topic: kafka_io.end_offsets(secondary, "primary." + topic) for topic in topics}

    # After the cut-over the source keeps receiving records (a producer not moved yet): they must stay off the target, whose
    # topics the moved consumers now read.
    for topic, partitions in topics.items():
        kafka_io.produce(primary, topic, AFTER_CUTOVER_RECORDS, partitions, start=AFTER_CUTOVER_FIRST_KEY)

    # IP advertising as day two left it (false would remove the snippet and roll the source).
    play = lab.mirror("mirror.yml after failover.yml (whole)", tags=None, mirror_source_ip_advertising=True,
                      mirror_validation_report_dir=str(Path(lab.directory) / "reports-after-failover"))

    assert not play.failed, play.stdout[-6000:]
    held = play.task(HOLD_AFTER_FAILOVER)["msg"]
    assert "flow primary->secondary was failed over at " in held and "set mirrormaker2_resume_after_failover: true" in held, held
    assert "primary->secondary skipped" in play.task(VALIDATION_SKIPPED)["msg"]
    status = lab.on_node(f"{SUPERVISORCTL} status {PROGRAM}")
    assert lab.mirrormaker_pid() is None and "RUNNING" not in status.stdout, f"MirrorMaker runs again: {status.stdout}"
    assert {topic: kafka_io.end_offsets(secondary, "primary." + topic) for topic in topics} == remote_ends, \
        "mirror.yml copied records produced after the cut-over into the topics the consumers now read"
    assert group_offsets(secondary, GROUP) == moved, "mirror.yml moved the failed-over group's offsets on the target"
