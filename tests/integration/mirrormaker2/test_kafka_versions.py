# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HDInsight 5.0 run as the runbook runs it: the MirrorMaker host's Kafka is 2.4.1, whose MirrorMaker 2 ignores keys
newer than itself, and the clusters carry the runbook's aliases.

A sandbox of its own whose MirrorMaker node's Kafka home claims 2.4.1 (`up --kafka-version 2.4.1`: the
libs/kafka-clients-2.4.1.jar marker); the stand-in in that home then reads only what 2.4.1 reads. The whole of
mirror.yml runs, as on HDInsight, with a plan that excludes a topic and a group. The role must detect 2.4.1 and render
the 2.4-era keys (topics.blacklist, groups.blacklist): rendered as topics.exclude, the excluded topic would be
mirrored, which an independent kafka-python client on the target sees (the last test renders for a wrong version on
purpose and sees exactly that). The rendered file, read on the node, holds no key 2.4.1 ignores (the stand-in's own
table, written apart from the collection's).

The inventory's clusters are named as in the runbook, `kafka_cluster_alias` primary-kafka-cluster and
secondary-kafka-cluster (not valid as Ansible group names, so the groups stay primary_kafka / secondary_kafka), with
no mirror_source_alias / mirror_target_alias: every stage must run under those aliases, and the records must arrive in
primary-kafka-cluster.<topic>. One sandbox and one mirror.yml run serve both scenarios (each costs a whole flow).
"""
from __future__ import annotations

import json
import re
import struct
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from confluent_kafka import Consumer, TopicPartition

from sandbox import api, nodes
from sandbox.mm2 import release
from tests.support import mm2_kafka_io as kafka_io
from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO

pytestmark = pytest.mark.integration

MIRROR = REPO / "playbooks" / "mirror.yml"
ROLE_ONLY = Path(__file__).resolve().parent / "deploy.yml"
PREFLIGHT = REPO / "playbooks" / "preflight.yml"
INTERPRETER_SET = "kafkaops.mirror.mirror_host : Run the later plays' modules on this host with the virtualenv's Python"
HDINSIGHT_5_KAFKA = "2.4.1"
CONFIG_FILE = "/etc/kafka-mirrormaker2/connect-mirror-maker.properties"  # in the role's default config dir
MIRRORED, EXCLUDED = "hdi5-orders", "hdi5-orders.tmp"
GROUP, EXCLUDED_GROUP = "hdi5-app", "hdi5-test-app"
SOURCE_ALIAS, TARGET_ALIAS = "primary-kafka-cluster", "secondary-kafka-cluster"  # the runbook's
REMOTE, REMOTE_EXCLUDED = f"{SOURCE_ALIAS}.{MIRRORED}", f"{SOURCE_ALIAS}.{EXCLUDED}"
SHOW_VERSION = "kafkaops.mirror.mirrormaker2 : Show the Kafka version the configuration is rendered for"
FLOW = {"source": SOURCE_ALIAS, "target": TARGET_ALIAS, "topics": ["hdi5-.*"], "topics_exclude": [r"hdi5-.*\.tmp"],
        "groups": ["hdi5-.*"], "groups_exclude": ["hdi5-test-.*"], "refresh_topics_interval_seconds": 2,
        "refresh_groups_interval_seconds": 2, "emit_checkpoints_interval_seconds": 2}
PLAN = {"mirrormaker2_flows": [FLOW], "mirrormaker2_max_lag": 0, "mirrormaker2_health_timeout": 180, "mirrormaker2_health_poll_interval": 2,
        # The same plan for the stages that read it themselves: pre-creation and validation leave the excluded topic out too.
        "mirror_topics": "hdi5-.*", "mirror_topics_exclude": r"hdi5-.*\.tmp",
        "mirror_validation_topics": "hdi5-.*", "mirror_validation_exclude": r"hdi5-.*\.tmp"}


def commit(bootstrap, group, topic, offsets):
    """Commit `offsets` ({partition: offset}) for `group` as a subscribed member that has read that far would: MirrorMaker 2
    of 2.4-2.7 never checkpoints a simple group (assign + commit, protocol type ""), which an application group is not."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(0.5)
        assert consumer.assignment(), f"{group} got no partitions of {topic} within 60 s"
        consumer.commit(offsets=[TopicPartition(topic, partition, offset) for partition, offset in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def checkpoint_groups(bootstrap):
    """Groups named in the target's checkpoints (Checkpoint key: INT16 length + UTF-8 group, then topic and partition)."""
    groups = set()
    for records in kafka_io.read_all(bootstrap, f"{SOURCE_ALIAS}.checkpoints.internal").values():
        for key, _value, _headers, _timestamp in records:
            (length,) = struct.unpack(">h", key[:2])
            groups.add(key[2:2 + length].decode())
    return groups


def read_properties(state, path):
    """key -> value of a .properties file on the MirrorMaker node, read there as root (the file is 0600), as the role writes
    it: one `key=value` a line, backslash escapes, no continuation lines."""
    node = next(n for cluster in state["clusters"].values() for n in cluster["nodes"] if n["name"] == state["mirrormaker_node"])
    text = subprocess.run(nodes.ssh_argv(node, f"sudo cat {path}"), capture_output=True, text=True, check=True, timeout=60).stdout
    entries = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith(("#", "!")):
            key, value = re.match(r"^((?:[^=\\]|\\.)*)=(.*)$", line).groups()
            entries[re.sub(r"\\(.)", r"\1", key.strip())] = re.sub(r"\\(.)", r"\1", value.strip())
    return entries


def runbook_inventory(state) -> Path:
    """The sandbox's inventory with the runbook's cluster aliases and no mirror_*_alias variables."""
    inventory = yaml.safe_load((Path(state["dir"]) / "inventory.yml").read_text())
    for name in ("mirror_source_alias", "mirror_target_alias"):
        inventory["all"].get("vars", {}).pop(name, None)
    inventory["all"]["children"]["primary_kafka"]["vars"]["kafka_cluster_alias"] = SOURCE_ALIAS
    inventory["all"]["children"]["secondary_kafka"]["vars"]["kafka_cluster_alias"] = TARGET_ALIAS
    path = Path(state["dir"]) / "runbook-inventory.yml"
    path.write_text(yaml.safe_dump(inventory))
    return path


def mirror(state, reports):
    # The whole of mirror.yml with its defaults. The runbook's IP advertising and auto-create (off by default; each restarts
    # the stand-in brokers) run on real Kafka in tests/integration/real_kafka/test_real_kafka.py and in day_two: here they
    # would cost two broker restarts and prove nothing about the 2.4.1 release this file is about.
    return run_playbook(MIRROR, inventory=runbook_inventory(state), timeout=1500,
                        extra_vars=dict(PLAN, mirror_validation_report_dir=str(reports)))


def redeploy(hdinsight5, check=False, diff=False, **overrides):
    """The mirrormaker2 role again, alone, on the virtualenv mirror.yml's mirror_host stage made (saves re-running the rest)."""
    state, play = hdinsight5
    interpreter = play.task(INTERPRETER_SET)["ansible_facts"]["ansible_python_interpreter"]
    return run_playbook(ROLE_ONLY, inventory=Path(state["dir"]) / "runbook-inventory.yml", timeout=900, check=check, diff=diff,
                        skip_tags="mirror_host",
                        extra_vars=dict(PLAN, ansible_python_interpreter=interpreter, **overrides))


@pytest.fixture(scope="module")
def hdinsight5(tmp_path_factory, sandbox_net):
    directory = tmp_path_factory.mktemp("hdinsight5")
    # Subnet 3: beside the session's sandbox on the same net, never on its addresses.
    state = api.up(directory, net=sandbox_net, subnet=3, kafka_version=HDINSIGHT_5_KAFKA)
    try:
        primary = state["clusters"]["primary"]["bootstrap_servers"]
        kafka_io.create(primary, MIRRORED, 2)
        kafka_io.create(primary, EXCLUDED, 1)
        kafka_io.produce(primary, MIRRORED, 400, 2)
        kafka_io.produce(primary, EXCLUDED, 40, 1)
        groups = {GROUP: {0: 100, 1: 100}, EXCLUDED_GROUP: {0: 50, 1: 50}}
        for group, offsets in groups.items():
            commit(primary, group, MIRRORED, offsets)
        yield state, mirror(state, Path(directory) / "reports")
    finally:
        api.down(directory)


def test_role_detects_2_4_1_in_the_kafka_home(hdinsight5):
    _state, play = hdinsight5
    assert not play.failed, play.stdout[-6000:]
    shown = play.task(SHOW_VERSION)
    assert f"MirrorMaker runs Kafka {HDINSIGHT_5_KAFKA} (detected in /usr/hdp/current/kafka-broker/libs)" in shown["msg"]


def test_every_stage_runs_under_the_runbook_aliases(hdinsight5):
    _state, play = hdinsight5
    assert not play.failed, play.stdout[-6000:]
    assert "skipping: no hosts matched" not in play.stdout
    ran = {entry["action"] for entry in play.tasks if entry["status"] == "ok"}
    assert {"kafkaops.mirror.kafka_cluster_info", "kafkaops.mirror.kafka_topic", "kafkaops.mirror.kafka_mirror_status"} <= ran


def test_validation_passed_on_the_runbook_prefixed_topic(hdinsight5):
    state, play = hdinsight5
    assert not play.failed, play.stdout[-6000:]
    [report_file] = list((Path(state["dir"]) / "reports").rglob("report.json"))
    report = json.loads(report_file.read_text())
    assert report["exit_code"] == 0, report["message"]
    assert REMOTE in json.dumps(report) and REMOTE_EXCLUDED not in json.dumps(report)


def test_rendered_file_uses_2_4_keys_and_nothing_2_4_1_ignores(hdinsight5):
    state, play = hdinsight5
    assert not play.failed, play.stdout[-6000:]
    rendered = read_properties(state, CONFIG_FILE)
    assert rendered[f"{SOURCE_ALIAS}->{TARGET_ALIAS}.topics.blacklist"] == r"hdi5-.*\.tmp"
    assert rendered[f"{SOURCE_ALIAS}->{TARGET_ALIAS}.groups.blacklist"] == "hdi5-test-.*"
    aliases = {SOURCE_ALIAS, TARGET_ALIAS}
    ignored = []
    for key in rendered:
        scope, dot, rest = key.partition(".")
        bare = rest if dot and ("->" in scope or scope in aliases) else key
        if not release.reads(bare, (2, 4, 1)):
            ignored.append(key)
    assert not ignored, f"keys MirrorMaker 2 of Kafka 2.4.1 ignores: {ignored}"


def test_mirrored_as_planned_by_an_independent_client(hdinsight5):
    state, play = hdinsight5
    assert not play.failed, play.stdout[-6000:]
    primary = state["clusters"]["primary"]["bootstrap_servers"]
    secondary = state["clusters"]["secondary"]["bootstrap_servers"]
    source = kafka_io.read_all(primary, MIRRORED)
    # Keys, values, headers and timestamps, partition by partition.
    assert kafka_io.wait_for(lambda: kafka_io.read_all(secondary, REMOTE) == source, 60), f"{REMOTE} differs from {MIRRORED}"
    # Checkpoints come every 2 s and topics are looked for every 2 s: by the time the included group's checkpoint
    # arrives, the excluded topic and group had several chances to be mirrored.
    assert kafka_io.wait_for(lambda: GROUP in checkpoint_groups(secondary), 60), "no checkpoint for the included group"
    time.sleep(6)
    assert REMOTE_EXCLUDED not in kafka_io.topics(secondary), "the excluded topic was mirrored: topics.blacklist was not honoured"
    assert EXCLUDED_GROUP not in checkpoint_groups(secondary), "the excluded group was checkpointed: groups.blacklist was not honoured"


def test_detection_runs_in_check_mode_and_a_second_run_changes_nothing(hdinsight5):
    state, play = hdinsight5
    assert not play.failed, play.stdout[-6000:]
    again = redeploy(hdinsight5, check=True, diff=True)
    assert not again.failed, again.stdout[-6000:]
    assert f"MirrorMaker runs Kafka {HDINSIGHT_5_KAFKA}" in again.task(SHOW_VERSION)["msg"]
    assert again.changed_count == 0, again.stdout[-6000:]


def test_preflight_gates_features_on_the_detected_release_not_the_brokers(hdinsight5):
    """sync.group.offsets (KIP-545, 2.7) is refused because MirrorMaker runs 2.4.1, read from the Kafka home, although
    both clusters' brokers answer ApiVersions like 3.3: preflight and the mirrormaker2 role judge the same release."""
    state, play = hdinsight5
    assert not play.failed, play.stdout[-6000:]
    interpreter = play.task(INTERPRETER_SET)["ansible_facts"]["ansible_python_interpreter"]
    plan = dict(PLAN, mirrormaker2_flows=[dict(FLOW, sync_group_offsets=True)])
    refused = run_playbook(PREFLIGHT, inventory=Path(state["dir"]) / "runbook-inventory.yml", timeout=600, check=True, skip_tags="mirror_host",
                           extra_vars=dict(plan, ansible_python_interpreter=interpreter, preflight_clock_check=False,
                                           preflight_stale_state_check=False))
    assert refused.failed and refused.changed_count == 0
    failure = refused.task("kafkaops.mirror.preflight : Fail when any finding is an error")["msg"]
    assert f"cluster {TARGET_ALIAS}: sync.group.offsets needs Kafka 2.7 or later (KIP-545); MirrorMaker runs Kafka {HDINSIGHT_5_KAFKA}" in failure
    table = "\n".join(refused.task("kafkaops.mirror.preflight : Show the preflight summary")["msg"])
    assert f"MirrorMaker runs Kafka {HDINSIGHT_5_KAFKA}" in table


def test_a_kafka_home_without_jars_fails_naming_it_and_both_variables(hdinsight5):
    state, play = hdinsight5
    assert not play.failed, play.stdout[-6000:]
    before = read_properties(state, CONFIG_FILE)
    failed = redeploy(hdinsight5, mirrormaker2_kafka_home="/opt/no-kafka-here")
    assert failed.failed
    assert "no kafka-clients-<version>.jar or kafka_<scala>-<version>.jar in /opt/no-kafka-here/libs" in failed.stdout, failed.stdout[-4000:]
    assert "point mirrormaker2_kafka_home at the Kafka installation" in failed.stdout and "or set mirrormaker2_kafka_version" in failed.stdout
    assert failed.changed_count == 0 and read_properties(state, CONFIG_FILE) == before


def test_a_file_rendered_for_the_wrong_version_mirrors_the_excluded_topic(hdinsight5):
    """The control: told the host runs 3.9, the role renders topics.exclude, which 2.4.1 ignores, so the excluded topic
    travels. This is what the tests above would see if the role rendered for the wrong version."""
    state, play = hdinsight5
    assert not play.failed, play.stdout[-6000:]
    wrong = redeploy(hdinsight5, mirrormaker2_kafka_version="3.9")
    assert not wrong.failed, wrong.stdout[-6000:]
    assert read_properties(state, CONFIG_FILE)[f"{SOURCE_ALIAS}->{TARGET_ALIAS}.topics.exclude"] == r"hdi5-.*\.tmp"
    secondary = state["clusters"]["secondary"]["bootstrap_servers"]
    assert kafka_io.wait_for(lambda: REMOTE_EXCLUDED in kafka_io.topics(secondary), 60), \
        "MirrorMaker 2 of Kafka 2.4.1 (the stand-in) honoured topics.exclude"
