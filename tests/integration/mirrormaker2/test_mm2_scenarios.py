# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 17's MirrorMaker 2 scenarios against the independent stand-in (sandbox/mm2) on the session sandbox.

Two stand-in processes serve every test, started once with second-long intervals, each with cluster aliases of its own
(so its internal topics are its own whatever else runs on the sandbox):
- Kafka 3.9 (the stand-in run from the checkout plays 3.9.0): IdentityReplicationPolicy with separator `_`,
  offset-syncs.topic.location=target, exactly.once.source.support=enabled on the target, topic configs synced.
- Kafka 2.7.0 (a Kafka home whose libs/kafka-clients-2.7.0.jar says so, as on a node): one flow syncing topic configs,
  one flow not.
The collection pre-creates the remote topics first (kafka_topic with copy_from, as mirror.yml's kafka_topics stage);
afterwards its status, failover and validation naming read what the stand-ins wrote. Every outcome is read back with
independent kafka-python clients (tests/support/mm2_kafka_io.py and the helpers below); none of the collection's code.
"""
from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.structs import OffsetAndMetadata

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import run_status
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import status_argument_spec
from mirror_validation.naming import FlowNames as JobFlowNames
from tests.support import mm2_kafka_io as kafka_io
from tests.support.ansible_play import run_tasks
from tests.support.checkout import REPO, collections_path

pytestmark = pytest.mark.integration

# The 3.9 flow: source alias scenp, target alias scens.
SCEN_SOURCE, SCEN_TARGET = "scenp", "scens"
ORDERS, APP_HEARTBEATS, SCEN_CONF = "scen-orders", "scen-app-heartbeats", "scen-conf"
ORDERS_RECORDS, APP_HEARTBEATS_RECORDS = 40, 5
SYNCS_ON_TARGET, CHECKPOINTS = "mm2-offset-syncs_scenp_internal", "scenp_checkpoints_internal"
REMOTE_APP_HEARTBEATS = "scenp_scen-app-heartbeats"  # IdentityReplicationPolicy.formatRemoteTopic: looksLikeHeartbeat
APP_GROUP, LATE_GROUP = "scen-app", "scen-late"  # MirrorMaker checkpoints scen-app only; scen-late is translated from syncs
# The 2.7.0 flows: old -> news syncs topic configs, olt -> news does not (aliases of the same two clusters).
OLD_ORDERS, OLD_CONF, OLT_CONF = "old-orders", "old-conf", "olt-conf"
OLD_GROUP, SIMPLE_GROUP = "old-app", "old-simple"
SOURCE_RETENTION = "3600000"
STAND_IN_2_7 = "2.7.0"
# Quirk (noida-db 0.2.3 + kafka-python 3.0.12): pin the protocol level (see mm2_kafka_io.API_VERSION).
API = "2.7"

COMMON = """
replication.factor = 1
checkpoints.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset.storage.replication.factor = 1
config.storage.replication.factor = 1
status.storage.replication.factor = 1
emit.heartbeats.enabled = false
refresh.topics.interval.seconds = 1
refresh.groups.interval.seconds = 1
emit.checkpoints.interval.seconds = 1
sync.topic.configs.interval.seconds = 1
"""
CONFIG_3_9 = """clusters = scenp, scens
scenp.bootstrap.servers = {primary}
scens.bootstrap.servers = {secondary}
scenp->scens.enabled = true
scenp->scens.topics = scen-.*
scenp->scens.groups = scen-app
# Heartbeats for this flow only (the status's health reads them); no other pair of these aliases runs a herder.
scenp->scens.emit.heartbeats.enabled = true
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
replication.policy.separator = _
offset-syncs.topic.location = target
scens.exactly.once.source.support = enabled
scens.offset.flush.interval.ms = 500
""" + COMMON
CONFIG_2_7 = """clusters = old, olt, news
old.bootstrap.servers = {primary}
olt.bootstrap.servers = {primary}
news.bootstrap.servers = {secondary}
old->news.enabled = true
old->news.topics = old-.*
old->news.groups = old-.*
olt->news.enabled = true
olt->news.topics = olt-.*
olt->news.sync.topic.configs.enabled = false
news.offset.flush.interval.ms = 500
""" + COMMON


def bootstrap(state, alias):
    return state["clusters"][alias]["bootstrap_servers"]


def commit_subscribed(servers, group, topic, offsets):
    """Commit as a subscribed member (protocol type `consumer`), as an application's group does."""
    consumer = KafkaConsumer(bootstrap_servers=servers, api_version=kafka_io.API_VERSION, group_id=group, enable_auto_commit=False)
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(timeout_ms=200)
        assert consumer.assignment(), f"{group} got no partitions of {topic} within 60 s"
        consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()})
    finally:
        consumer.close()


def commit_simple(servers, group, topic, offsets):
    """Commit with assign + commit: a simple group (empty protocol type)."""
    consumer = KafkaConsumer(bootstrap_servers=servers, api_version=kafka_io.API_VERSION, group_id=group, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(topic, p) for p in offsets])
        consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()})
    finally:
        consumer.close()


def committed_count(servers, topic):
    """Records of `topic` a read_committed consumer gets (transaction markers and aborted records are no records)."""
    consumer = KafkaConsumer(bootstrap_servers=servers, api_version=kafka_io.API_VERSION, group_id=None, enable_auto_commit=False,
                             isolation_level="read_committed", receive_message_max_bytes=kafka_io.RECEIVE_MAX)
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        if not partitions:
            return 0
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        ends, count = consumer.end_offsets(partitions), 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(consumer.position(tp) < ends[tp] for tp in partitions):
            count += sum(len(batch) for batch in consumer.poll(timeout_ms=200).values())
        return count
    finally:
        consumer.close()


def overrides(servers, topic):
    """The topic's own config overrides (DYNAMIC_TOPIC_CONFIG), as the broker describes them."""
    admin = KafkaAdminClient(bootstrap_servers=servers, api_version=kafka_io.API_VERSION, request_timeout_ms=15000)
    try:
        described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all").get("topic", {})
    finally:
        admin.close()
    return {key: entry["value"] for key, entry in described.get(topic, {}).items() if entry.get("config_source") == "DYNAMIC_TOPIC_CONFIG"}


def leading_names(servers, topic):
    """The first field of every key in an MM2 internal topic: the group of a Checkpoint key, the source topic of an OffsetSync key
    (both begin with a STRING: INT16 length + UTF-8)."""
    names = set()
    for records in kafka_io.read_all(servers, topic).values():
        for key, _value, _headers, _timestamp in records:
            (length,) = struct.unpack(">h", key[:2])
            names.add(key[2:2 + length].decode())
    return names


def kafka_home_2_7(directory: Path) -> Path:
    """A Kafka home that says 2.7.0 (libs/kafka-clients-2.7.0.jar) holding a copy of the stand-in, which plays the release of
    the home it sits in (sandbox/mm2/release.py), as the sandbox's MirrorMaker node does."""
    home = directory / "kafka-2.7.0"
    shutil.copytree(REPO / "sandbox", home / "stand-in" / "sandbox", ignore=shutil.ignore_patterns("__pycache__"))
    (home / "libs").mkdir()
    (home / "libs" / f"kafka-clients-{STAND_IN_2_7}.jar").touch()
    (home / "bin").mkdir()
    (home / "bin" / "connect-mirror-maker.sh").write_text("#!/bin/sh\n# marker: the stand-in finds its Kafka home by this script\n")
    return home


class StandIn:
    """One stand-in process (`python -m sandbox.mm2 <properties>`); stopped by its own PID."""

    def __init__(self, name, directory: Path, config: str, python_path: Path):
        self.log_path = directory / f"{name}.log"
        config_path = directory / f"{name}.properties"
        config_path.write_text(config)
        env = dict(os.environ, PYTHONPATH=str(python_path), ANSIBLE_COLLECTIONS_PATH=str(collections_path()))
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "sandbox.mm2", str(config_path)], env=env, stdout=log,
                                            stderr=subprocess.STDOUT, cwd=str(directory))

    def log(self):
        return self.log_path.read_text()[-3000:]

    def pause(self):
        self.process.send_signal(signal.SIGSTOP)

    def resume(self):
        self.process.send_signal(signal.SIGCONT)

    def stop(self):
        self.resume()
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def pre_create(state):
    """The collection's pre-creation (kafka_topic copy_from named as MirrorMaker 2 names remote topics), one play for all flows."""
    target = dict(bootstrap_servers=[bootstrap(state, "secondary")], api_version=API)
    source = dict(bootstrap_servers=[bootstrap(state, "primary")], api_version=API, replication_factor=1)
    tasks = [
        {"name": "identity flow", "kafkaops.mirror.kafka_topic": dict(target, copy_from=dict(
            source, topics="scen-.*", source_alias=SCEN_SOURCE, replication_policy="identity", replication_policy_separator="_",
            mirrormaker_version="3.9.0"),
            topics=[dict(name=SCEN_CONF, configs={"segment.ms": 600000, "min.insync.replicas": 1})])},
        {"name": "2.7 flow", "kafkaops.mirror.kafka_topic": dict(target, copy_from=dict(
            source, topics="old-.*", source_alias="old", mirrormaker_version=STAND_IN_2_7),
            topics=[dict(name=f"old.{OLD_CONF}", configs={"min.insync.replicas": 1, "retention.ms": SOURCE_RETENTION})])},
        {"name": "2.7 flow without config sync", "kafkaops.mirror.kafka_topic": dict(target, copy_from=dict(
            source, topics="olt-.*", source_alias="olt", mirrormaker_version=STAND_IN_2_7, sync_topic_configs=False),
            topics=[dict(name=f"olt.{OLT_CONF}", configs={"min.insync.replicas": 1, "segment.ms": 600000})])},
    ]
    play = run_tasks(tasks, timeout=300)
    assert not play.failed, play.stdout[-4000:]
    return play


@pytest.fixture(scope="module")
def scenarios(sandbox, tmp_path_factory):
    state = sandbox
    directory = tmp_path_factory.mktemp("mm2-scenarios")
    primary, secondary = bootstrap(state, "primary"), bootstrap(state, "secondary")
    kafka_io.create(primary, ORDERS, 2)
    kafka_io.create(primary, APP_HEARTBEATS, 1)
    kafka_io.create(primary, OLD_ORDERS, 1)
    for conf in (SCEN_CONF, OLD_CONF, OLT_CONF):
        kafka_io.create(primary, conf, 1, {"retention.ms": SOURCE_RETENTION})
    kafka_io.produce(primary, ORDERS, ORDERS_RECORDS, 2)
    kafka_io.produce(primary, APP_HEARTBEATS, APP_HEARTBEATS_RECORDS, 1)
    kafka_io.produce(primary, OLD_ORDERS, 30, 1)
    commit_subscribed(primary, APP_GROUP, ORDERS, {0: 10, 1: 10})
    commit_simple(primary, LATE_GROUP, ORDERS, {0: 15, 1: 15})
    commit_subscribed(primary, OLD_GROUP, OLD_ORDERS, {0: 12})
    commit_simple(primary, SIMPLE_GROUP, OLD_ORDERS, {0: 12})
    play = pre_create(state)
    config = {"primary": primary, "secondary": secondary}
    stand_ins = {"3.9": StandIn("stand-in-3.9", directory, CONFIG_3_9.format(**config), REPO),
                 "2.7": StandIn("stand-in-2.7", directory, CONFIG_2_7.format(**config), kafka_home_2_7(directory) / "stand-in")}
    try:
        yield {"state": state, "primary": primary, "secondary": secondary, "pre_create": play, "stand_ins": stand_ins}
    finally:
        for stand_in in stand_ins.values():
            stand_in.stop()


def status(scenarios):
    """kafka_mirror_status's reading of the 3.9 flow (the module's own work, run in this process)."""
    params = {"bootstrap_servers": [scenarios["secondary"]], "api_version": API, "source_alias": SCEN_SOURCE, "target_alias": SCEN_TARGET,
              "source": {"bootstrap_servers": [scenarios["primary"]], "api_version": API}, "replication_policy": "identity",
              "replication_policy_separator": "_", "offset_syncs_topic_location": "target", "mirrormaker_version": "3.9.0",
              "topics": ["scen-.*"], "groups": [APP_GROUP], "wait_for": ["offset_syncs", "lag"]}
    validated = ArgumentSpecValidator(status_argument_spec()).validate(params)
    assert not validated.error_messages, validated.error_messages
    return run_status(validated.validated_parameters, KafkaConnection)


def wait_mirrored(scenarios, timeout_s=60):
    """The 3.9 flow's status once every record is on the target and synced, read back independently too."""
    secondary = scenarios["secondary"]
    ready = kafka_io.wait_for(lambda: committed_count(secondary, ORDERS) == ORDERS_RECORDS + scenarios.get("added", 0)
                              and committed_count(secondary, REMOTE_APP_HEARTBEATS) == APP_HEARTBEATS_RECORDS
                              and APP_GROUP in leading_names(secondary, CHECKPOINTS), timeout_s)
    assert ready, scenarios["stand_ins"]["3.9"].log()

    def healthy():
        result = status(scenarios)
        return result if result["healthy"] else None

    result = kafka_io.wait_for(healthy, 30)
    assert result, status(scenarios)
    return result


def test_separator_and_offset_syncs_on_the_target_are_found_where_mirrormaker_writes_them(scenarios):
    """3.9, separator `_`, offset-syncs.topic.location=target: MirrorConnectorConfig.offsetSyncsTopic names the topic after the
    other cluster (the source) and DefaultReplicationPolicy.internalSeparator (KIP-690) puts `_` in the internal names."""
    primary, secondary = scenarios["primary"], scenarios["secondary"]
    result = wait_mirrored(scenarios)
    on_target, on_source = kafka_io.topics(secondary), kafka_io.topics(primary)
    assert {SYNCS_ON_TARGET, CHECKPOINTS} <= on_target
    assert not {name for name in on_source if "scenp" in name or "scens" in name}, "nothing of the 3.9 flow may be on the source"
    assert {ORDERS, APP_HEARTBEATS} <= leading_names(secondary, SYNCS_ON_TARGET)
    # The product reads those topics: offset syncs for every partition, checkpoints of the group, no problem.
    assert result["offset_syncs_topic"] == SYNCS_ON_TARGET and result["problems"] == []
    assert all(partition["last_offset_sync"] for partition in result["partitions"] if partition["has_records"])
    assert result["lag_total"] == 0
    assert result["checkpoints"].get(APP_GROUP) == 2
    # The validation job names them the same (its own generated copy of the vocabulary).
    job_names = JobFlowNames(SCEN_SOURCE, SCEN_TARGET, "identity", "_", "target")
    assert (job_names.offset_syncs_topic, job_names.checkpoints_topic) == (SYNCS_ON_TARGET, CHECKPOINTS)


def test_identity_policy_pre_creates_app_heartbeats_under_the_name_mirrormaker_writes(scenarios):
    """IdentityReplicationPolicy keeps `scen-orders` but writes `scen-app-heartbeats` as `scenp_scen-app-heartbeats`
    (looksLikeHeartbeat): the collection pre-created that topic, and MirrorMaker's records are in it."""
    primary, secondary = scenarios["primary"], scenarios["secondary"]
    wait_mirrored(scenarios)
    created = scenarios["pre_create"].task("identity flow")["created"]
    assert REMOTE_APP_HEARTBEATS in created and ORDERS in created and APP_HEARTBEATS not in created
    assert APP_HEARTBEATS not in kafka_io.topics(secondary)
    assert kafka_io.read_all(secondary, REMOTE_APP_HEARTBEATS) == kafka_io.read_all(primary, APP_HEARTBEATS)


def test_exactly_once_lag_counts_records_not_transaction_markers(scenarios):
    """exactly.once.source.support=enabled (3.5+): each commit marker takes a target offset. With MirrorMaker held, one more
    record per source partition is missing on the target: the lag says 1 each (from offsets it said 0)."""
    primary, secondary = scenarios["primary"], scenarios["secondary"]
    wait_mirrored(scenarios)
    ends = kafka_io.end_offsets(secondary, ORDERS)
    assert sum(ends.values()) > committed_count(secondary, ORDERS), "no transaction marker on the target: exactly-once is off"
    stand_in = scenarios["stand_ins"]["3.9"]
    stand_in.pause()
    try:
        kafka_io.produce(primary, ORDERS, 2, 2, start=ORDERS_RECORDS)
        scenarios["added"] = 2
        held = status(scenarios)
        assert committed_count(secondary, ORDERS) == ORDERS_RECORDS, "the held stand-in copied records"
        assert {p["partition"]: p["lag"] for p in held["partitions"] if p["topic"] == ORDERS} == {0: 1, 1: 1}, held["partitions"]
        assert not held["healthy"]
    finally:
        stand_in.resume()
    wait_mirrored(scenarios)


def offsets_play(scenarios):
    """kafka_mirror_offsets (check mode) for the 3.9 flow and the 2.7 flow, in one play."""
    target = dict(bootstrap_servers=[scenarios["secondary"]], api_version=API,
                  source=dict(bootstrap_servers=[scenarios["primary"]], api_version=API), verify=False, apply=True)
    tasks = [
        {"name": "3.9 failover", "kafkaops.mirror.kafka_mirror_offsets": dict(
            target, source_alias=SCEN_SOURCE, target_alias=SCEN_TARGET, replication_policy="identity", replication_policy_separator="_",
            offset_syncs_topic_location="target", mirrormaker_version="3.9.0", groups=["scen-.*"], offset_syncs=True)},
        {"name": "2.7 failover", "kafkaops.mirror.kafka_mirror_offsets": dict(
            # Checkpoints only: with offset syncs a simple group would be translated from them.
            target, source_alias="old", target_alias="news", mirrormaker_version=STAND_IN_2_7, groups=["old-.*"], offset_syncs=False)},
    ]
    play = run_tasks(tasks, check=True, timeout=300)
    assert not play.failed, play.stdout[-4000:]
    return play


def test_failover_translates_from_the_syncs_on_the_target_and_names_the_release_for_a_simple_group(scenarios):
    """The 3.9 flow's scen-late has no checkpoint (MirrorMaker's groups leave it out): it is translated from the offset syncs
    found on the target. On 2.7.0, MirrorCheckpointConnector.findConsumerGroups drops simple groups
    (`.filter(x -> !x.isSimpleConsumerGroup())`, gone in 2.8.0): old-simple has no checkpoint and the plan says why."""
    secondary = scenarios["secondary"]
    wait_mirrored(scenarios)
    assert kafka_io.wait_for(lambda: OLD_GROUP in leading_names(secondary, "old.checkpoints.internal"), 60), \
        scenarios["stand_ins"]["2.7"].log()
    time.sleep(3)  # three more checkpoint rounds (and group refreshes) in which old-simple could have been checkpointed
    assert SIMPLE_GROUP not in leading_names(secondary, "old.checkpoints.internal")

    play = offsets_play(scenarios)
    recent = play.task("3.9 failover")
    assert recent["offset_syncs_found"] is True and recent["checkpoints_found"] is True
    rows = {(row["group"], row["partition"]): row for row in recent["offsets"]}
    assert {rows[(LATE_GROUP, p)]["basis"] for p in (0, 1)} == {"offset_sync"}
    assert all(rows[(LATE_GROUP, p)]["translated_offset"] is not None for p in (0, 1))
    assert {rows[(APP_GROUP, p)]["basis"] for p in (0, 1)} == {"checkpoint"}

    old = play.task("2.7 failover")
    rows = {row["group"]: row for row in old["offsets"]}
    assert rows[OLD_GROUP]["basis"] == "checkpoint", rows[OLD_GROUP]
    assert rows[SIMPLE_GROUP]["translated_offset"] is None
    assert f"MirrorMaker {STAND_IN_2_7} never checkpoints simple groups" in rows[SIMPLE_GROUP]["reason"], rows[SIMPLE_GROUP]


def test_topic_config_sync_keeps_the_copies_and_the_user_is_told_what_it_undoes(scenarios):
    """MirrorSourceConnector.syncTopicConfigs: 2.7.0 replaces the remote topic's configs with the source's (AlterConfigs),
    3.9 sets the source's and deletes what the source leaves at default (incrementalAlterConfigs), keeping
    config.properties.exclude keys; sync.topic.configs.enabled=false leaves the remote topic alone. The copies (the source's
    overrides) stay in every case; what the sync undoes was announced by the pre-creation."""
    secondary, play = scenarios["secondary"], scenarios["pre_create"]

    def sync_warnings(task):
        return [str(warning) for warning in play.task(task).get("warnings", []) if "topic config sync" in str(warning)]

    [recent] = sync_warnings("identity flow")
    assert "segment.ms=600000" in recent and "min.insync.replicas" not in recent and "Kafka 3.9.0" in recent
    [old] = sync_warnings("2.7 flow")
    assert "min.insync.replicas=1" in old and "retention.ms" not in old and f"Kafka {STAND_IN_2_7}" in old
    assert sync_warnings("2.7 flow without config sync") == []

    wanted = {SCEN_CONF: {"retention.ms": SOURCE_RETENTION, "min.insync.replicas": "1"},
              f"old.{OLD_CONF}": {"retention.ms": SOURCE_RETENTION}}
    synced = kafka_io.wait_for(lambda: all(overrides(secondary, topic) == configs for topic, configs in wanted.items()), 60)
    assert synced, {topic: overrides(secondary, topic) for topic in wanted}
    assert overrides(secondary, f"olt.{OLT_CONF}") == {"min.insync.replicas": "1", "segment.ms": "600000"}
