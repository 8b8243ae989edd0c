# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The docker molecule scenario's playbooks, run where no Docker daemon is: against sandbox hosts shaped like its containers.

molecule/docker/prepare.yml (less its container bootstrap: apt, supervisord and the Kafka download, which the sandbox
node already has), its converge and its verify run with an inventory built from molecule/docker/molecule.yml: the
platforms' names and groups and the provisioner's group variables, read from that file. The broker hosts point at sandbox
workers but have no usable Python, as the apache/kafka containers have none, so a module run on them fails the play.
Only what cannot hold outside Docker is taken from the sandbox instead: the bootstrap servers (the container names
resolve on Docker's network only) and the MirrorMaker host settings in MIRRORMAKER_OVERRIDES.

The seeded data and the group are then read back on the target with a plain kafka-python client.
"""
from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest
import yaml
from kafka import KafkaConsumer, TopicPartition

from sandbox import api, seed
from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO

pytestmark = [pytest.mark.integration, pytest.mark.spark]  # the converge runs the validation job

SCENARIO_DIR = REPO / "molecule" / "docker"
SCENARIO = yaml.safe_load((SCENARIO_DIR / "molecule.yml").read_text())
PLAYBOOKS = {step: (SCENARIO_DIR / path).resolve() for step, path in SCENARIO["provisioner"]["playbooks"].items()}
SUBNET = 14  # a sandbox of its own (third octets 14 and 15): the mirror leaves topics, groups and MirrorMaker behind
BROKER_GROUPS = ("primary_kafka", "secondary_kafka")
# apache/kafka images have no Python: any module run on a broker host fails on this interpreter.
NO_PYTHON = "/nonexistent/apache-kafka-image-has-no-python"
# The sandbox's value replaces the container scenario's for these MirrorMaker host variables, because:
MIRRORMAKER_OVERRIDES = {
    # the container's /opt/kafka comes from the skipped container bootstrap; the node's Kafka home claims the broker
    # image's release in libs/kafka-clients-<version>.jar, so version detection still reads the scenario's release
    "mirrormaker2_kafka_home": "Kafka home",
    # the node's supervisord runs with its own config and socket, reached with this venv's supervisorctl
    "mirrormaker2_supervisorctl": "supervisorctl",
    # sandbox nodes reach no package index: pip installs the mirror_host pins from the sandbox's wheelhouse
    "mirror_host_pip_environment": "pip settings",
    # Spark must bind the node's own address (127.N.C.10), not what the node's hostname resolves to
    "mirror_validation_environment": "Spark environment",
}
# Quirks (noida-db 0.2.3 + kafka-python 3.0.12): pin the API level (DescribeCluster v0 KeyError) and accept whole-partition fetches.
CLIENT = {"api_version": (2, 7), "request_timeout_ms": 15000, "receive_message_max_bytes": 256 * 1024 * 1024}
MIRRORED = [topic for topic in seed.TOPICS if topic.name in ("orders", "payments", "clickstream")]


def broker_image_release() -> str:
    """The Kafka release of the scenario's broker containers (apache/kafka:<release>)."""
    [release] = {platform["image"].rsplit(":", 1)[1] for platform in SCENARIO["platforms"] if set(platform["groups"]) & set(BROKER_GROUPS)}
    return release


def docker_shaped_inventory(state: dict) -> dict:
    """molecule.yml's hosts, groups and group variables, each host reached at a sandbox node of the same role."""
    sandbox_groups = yaml.safe_load((Path(state["dir"]) / "inventory.yml").read_text())["all"]["children"]
    mirrormaker_node = next(iter(sandbox_groups["mirrormaker"]["hosts"]))
    stand_ins = {"mirrormaker": mirrormaker_node}
    for group in BROKER_GROUPS:  # a broker host of its own, never the MirrorMaker node (the target's wn0)
        stand_ins[group] = next(host for host in sandbox_groups[group]["hosts"] if host != mirrormaker_node)
    group_vars = copy.deepcopy(SCENARIO["provisioner"]["inventory"]["group_vars"])
    children = {}
    for platform in SCENARIO["platforms"]:
        [group] = platform["groups"]
        host_vars = dict(sandbox_groups[group]["hosts"][stand_ins[group]])  # how to log in to the node: SSH as sshuser
        if group in BROKER_GROUPS:
            host_vars["ansible_python_interpreter"] = NO_PYTHON
        children.setdefault(group, {"hosts": {}, "vars": group_vars.get(group, {})})["hosts"][platform["name"]] = host_vars
    for group in BROKER_GROUPS:  # container names resolve on Docker's network only
        children[group]["vars"]["kafka_bootstrap_servers"] = sandbox_groups[group]["vars"]["kafka_bootstrap_servers"]
    children["mirrormaker"]["vars"].update({name: sandbox_groups["mirrormaker"]["vars"][name] for name in MIRRORMAKER_OVERRIDES})
    return {"all": {"vars": group_vars.get("all", {}), "children": children}}


@pytest.fixture(name="scenario", scope="module")
def docker_scenario_on_the_sandbox(tmp_path_factory, sandbox_net):
    directory = tmp_path_factory.mktemp("molecule-docker")
    state = api.up(directory, provider="noida", net=sandbox_net, subnet=SUBNET, kafka_version=broker_image_release())
    try:
        inventory = Path(directory) / "docker-shaped-inventory.yml"
        inventory.write_text(yaml.safe_dump(docker_shaped_inventory(state), sort_keys=False))
        reports = {"mirror_validation_report_dir": str(Path(directory) / "reports")}
        plays, seconds = {}, {}
        for step, options in (("prepare", {"env": {"ANSIBLE_SKIP_TAGS": "container_bootstrap"}}),
                              ("converge", {"extra_vars": reports}), ("verify", {"extra_vars": reports})):
            started = time.monotonic()
            plays[step] = run_playbook(PLAYBOOKS[step], inventory=inventory, timeout=1200, **options)
            seconds[step] = round(time.monotonic() - started, 1)
            if plays[step].failed:
                break
        print(f"docker scenario on the sandbox: {seconds} s")  # the CI budget figure (pytest -s / --durations)
        yield state, plays
    finally:
        api.down(directory)


def end_offsets_and_sample(bootstrap: str, topic: str) -> tuple:
    """({partition: end offset}, {partition: (key, value, headers) of its first record}) read with kafka-python."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, **CLIENT)
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        ends = {tp.partition: offset for tp, offset in consumer.end_offsets(partitions).items()}
        firsts = {}
        for tp in partitions:
            consumer.assign([tp])
            consumer.seek(tp, 0)
            deadline = time.monotonic() + 30
            while tp.partition not in firsts and time.monotonic() < deadline:
                for record in consumer.poll(timeout_ms=1000, max_records=1).get(tp, []):
                    firsts[tp.partition] = (record.key, record.value, list(record.headers))
        return ends, firsts
    finally:
        consumer.close()


def test_prepare_converge_and_verify_pass(scenario):
    _state, plays = scenario
    for step in ("prepare", "converge", "verify"):
        assert step in plays, f"{step} did not run: an earlier step failed"
        failures = [(entry["host"], entry["task"], entry["result"]) for entry in plays[step].tasks if entry["status"] in ("failed", "unreachable")]
        assert not plays[step].failed, (step, failures or plays[step].stderr[-4000:])
    seeding = plays["prepare"].task("Seed topics, records and the group orders-app on the primary")
    assert seeding["changed"], seeding
    assert any("MirrorMaker runs Kafka " + broker_image_release() in str(entry["result"].get("msg", "")) for entry in plays["converge"].tasks)


def test_no_module_ran_on_the_broker_hosts(scenario):
    _state, plays = scenario
    brokers = {platform["name"] for platform in SCENARIO["platforms"] if set(platform["groups"]) & set(BROKER_GROUPS)}
    on_brokers = [(step, entry["task"], entry["status"]) for step, play in plays.items() for entry in play.tasks if entry["host"] in brokers]
    assert on_brokers, "no play targeted the broker hosts: hosts_sync and ambari_kafka should have reached and skipped them"
    assert {status for _step, _task, status in on_brokers} == {"skipped"}, on_brokers


def test_the_seeded_topics_and_group_arrived_on_the_target(scenario, kafka_admin):
    state, plays = scenario
    assert not plays["converge"].failed
    alias = SCENARIO["provisioner"]["inventory"]["group_vars"]["primary_kafka"]["kafka_cluster_alias"]
    target = state["clusters"]["secondary"]["bootstrap_servers"]
    for topic in MIRRORED:
        ends, firsts = end_offsets_and_sample(target, f"{alias}.{topic.name}")
        assert ends == dict(enumerate(seed.per_partition(topic))), topic.name
        assert firsts == {p: seed.record(topic, p, 0) for p in range(topic.partitions)}, topic.name
    offsets = kafka_admin(state, "secondary").list_group_offsets(seed.GROUP)[seed.GROUP]
    synced = {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == f"{alias}.{seed.GROUP_TOPIC}"}
    # MirrorMaker translates a group's offset to the last offset sync at or before it, never past the source's commit
    assert sorted(synced) == list(range(len(seed.group_targets()))), offsets
    assert all(0 < synced[p] <= committed for p, committed in enumerate(seed.group_targets())), synced
