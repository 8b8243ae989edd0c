"""Failover end to end on the noida sandbox: the mirrormaker2 role deploys MirrorMaker 2 (the sandbox stand-in, same
properties, real record formats) with sync.group.offsets off, as on Kafka 2.4; a group consumes part of a topic on the
primary and commits; after a checkpoint interval the failover playbook moves it; the same group resumes on the secondary.
Counts come from an independent consumer.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ReplicationPolicy
from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_records import Checkpoint
from sandbox import nodes
from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO
from tests.support.mirror_fixture import NOIDA_API, RECEIVE_MAX, ensure_topic, resume_and_count

pytestmark = pytest.mark.integration

SOURCE, TARGET = "primary", "secondary"
TOPIC = "fo2-orders"
PER_PARTITION = 150
CONSUMED = {0: 93, 1: 41}
OFFSET_LAG_MAX = 10
PROGRAM = "kafka-mirrormaker2"
DEPLOY = Path(__file__).resolve().parent / "deploy_mm2.yml"
ROLE_DEFAULTS = yaml.safe_load((REPO / "roles" / "mirrormaker2" / "defaults" / "main.yml").read_text())
APPLY_TASK = "kafkaops.mirror.failover : Translate the groups' offsets and commit them on the target"


def mm2_vars():
    return {
        "mirrormaker2_offset_lag_max": OFFSET_LAG_MAX,
        "mirrormaker2_max_lag": 0,
        "mirrormaker2_health_timeout": 120,
        "mirrormaker2_health_poll_interval": 2,
        "mirrormaker2_flows": [{"source": SOURCE, "target": TARGET, "topics": ["fo2-.*"], "groups": ["fo2-.*"],
                                "refresh_topics_interval_seconds": 2, "refresh_groups_interval_seconds": 2,
                                "emit_checkpoints_interval_seconds": 2, "sync_group_offsets": False}],
    }


def checkpoints_for(bootstrap, group):
    """{partition: Checkpoint} of `group`, read from the checkpoints topic with an independent consumer."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, api_version=NOIDA_API, enable_auto_commit=False, receive_message_max_bytes=RECEIVE_MAX)
    try:
        tp = TopicPartition(ReplicationPolicy().checkpoints_topic(SOURCE), 0)
        if tp.topic not in consumer.topics():
            return {}
        consumer.assign([tp])
        end = consumer.end_offsets([tp])[tp]
        consumer.seek_to_beginning(tp)
        found = {}
        while consumer.position(tp) < end:
            for record in consumer.poll(timeout_ms=300).get(tp, []):
                checkpoint = Checkpoint.decode(record.key, record.value)
                if checkpoint.group == group:
                    found[checkpoint.partition] = checkpoint
        return found
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def deployed(sandbox):
    inventory = Path(sandbox["dir"]) / "inventory.yml"
    mm_vars = yaml.safe_load(inventory.read_text())["all"]["children"]["mirrormaker"]["vars"]
    node = [n for n in sandbox["clusters"][TARGET]["nodes"] if n["name"] == sandbox["mirrormaker_node"]][0]
    # Paths and commands on the MirrorMaker node (a host of its own in the sandbox's ssh node mode).
    on_node = nodes.as_root(node)
    supervisorctl = on_node + shlex.split(mm_vars["mirrormaker2_supervisorctl"])
    program_file = f"{mm_vars['mirrormaker2_supervisor_conf_dir']}/{PROGRAM}.conf"
    config_dir = mm_vars.get("mirrormaker2_config_dir", ROLE_DEFAULTS["mirrormaker2_config_dir"])
    before = set(nodes.machine_path(node, config_dir).rglob("*"))
    primary = sandbox["clusters"][SOURCE]["bootstrap_servers"]
    ensure_topic(primary, TOPIC, 2)
    producer = KafkaProducer(bootstrap_servers=primary, api_version=NOIDA_API, linger_ms=5)
    for partition in range(2):
        for index in range(PER_PARTITION):
            producer.send(TOPIC, key=f"{TOPIC}-p{partition}-{index}".encode(), value=b"v%d" % index, partition=partition)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=primary, group_id="fo2-app", enable_auto_commit=False, api_version=NOIDA_API)
    consumer.assign([TopicPartition(TOPIC, p) for p in CONSUMED])
    consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(offset, "", -1) for p, offset in CONSUMED.items()})
    consumer.close()
    play = run_playbook(DEPLOY, inventory=inventory, extra_vars=mm2_vars(), timeout=600)
    try:
        assert not play.failed, play.stdout[-4000:]
        yield dict(state=sandbox, inventory=inventory)
    finally:
        # Stop what the role started through supervisord, so the session's sandbox runs nothing of ours.
        subprocess.run(supervisorctl + ["stop", PROGRAM], capture_output=True, check=False)
        subprocess.run(on_node + ["rm", "-f", program_file], capture_output=True, check=False)
        subprocess.run(supervisorctl + ["update"], capture_output=True, check=False)
        # And the files the role rendered: later tests on the session's sandbox (tests/integration/mirrormaker2) expect none.
        upper = nodes.machine_path(node, "/")
        created = set(nodes.machine_path(node, config_dir).rglob("*")) - before
        for path in sorted(created, key=lambda p: len(p.parts), reverse=True):
            subprocess.run(on_node + ["rm", "-d" if path.is_dir() else "-f", f"/{path.relative_to(upper)}"], capture_output=True, check=False)


def test_failover_after_mirrormaker2(deployed):
    state = deployed["state"]
    secondary = state["clusters"][TARGET]["bootstrap_servers"]
    deadline = time.monotonic() + 90
    checkpoints = {}
    while time.monotonic() < deadline and set(checkpoints) != set(CONSUMED):
        checkpoints = checkpoints_for(secondary, "fo2-app")
        time.sleep(1)
    assert {p: c.upstream_offset for p, c in checkpoints.items()} == CONSUMED, "MirrorMaker wrote no checkpoints for fo2-app"

    # A preview window of the whole partition: the target is read to its end, the figures are complete.
    extra = dict(failover_pause=False, failover_groups=["fo2-.*"], failover_topics=["fo2-.*"], failover_verify_window=PER_PARTITION,
                 failover_lag_timeout=60, failover_lag_poll_interval=1, **mm2_vars())
    run = run_playbook(REPO / "playbooks" / "failover.yml", inventory=deployed["inventory"], extra_vars=extra, diff=True)
    assert not run.failed, run.stdout[-4000:]
    result = run.task(APPLY_TASK)
    assert result["changed"] and set(result["committed"]) == {"fo2-app"}
    figures = resume_and_count(secondary, f"{SOURCE}.{TOPIC}", "fo2-app", CONSUMED, PER_PARTITION)
    preview = {row["partition"]: row["preview"] for row in result["offsets"]}
    print("FAILOVER FIGURES (mirrormaker2 role)", json.dumps({"consumer": figures, "module_preview": preview}))
    # No bound by offset.lag.max: MirrorSourceTask (3.5+) sends at most 10 offset syncs in flight and keeps only the latest
    # pending one per partition (firePendingOffsetSyncs), so a burst copied at once leaves few syncs, and a checkpoint
    # written while the copy was behind the group holds an early sync's d + 1. The preview says how many are re-read.
    for partition, figure in figures.items():
        assert figure["lost"] == 0 and preview[partition]["skipped"] == 0, (figure, preview[partition])
        assert preview[partition]["complete"], preview[partition]
        assert figure["re_read"] == preview[partition]["re_read"], (figure, preview[partition])
