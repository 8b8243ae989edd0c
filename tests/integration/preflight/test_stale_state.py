# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stale MirrorMaker 2 state on the sandbox, the classic case: a mirror, then the target torn down and up again.

The mirror is the test fixture's MirrorMaker pass (tests/support/mirror_fixture.py: records copied, real offset syncs and a
group's checkpoints written with the sandbox's one record writer). "Torn down and up again" is done inside the shared session
sandbox as the deletion and recreation of the remote topic on the target: what a rebuilt target loses that matters to the
translation, while the source keeps the offset-syncs topic. kafka_mirror_status and the preflight role must then name the
internal topics that hold state for the old topic, the partitions and offsets, and the fix; an independent client reads
back what they are compared with. The flow has aliases of its own (east -> west), so its internal topics are none that
another test of the session reads.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from tests.support.ansible_play import run_module, run_tasks
from tests.support.mirror_fixture import NOIDA_API, ensure_topic, mirror_pass
from tests.support.mm2_kafka_io import end_offsets, produce, topics, wait_for

pytestmark = pytest.mark.integration

SOURCE_ALIAS, TARGET_ALIAS = "east", "west"
TOPIC, REMOTE, GROUP = "stale-orders", "east.stale-orders", "stale-app"
SYNCS_TOPIC, CHECKPOINTS_TOPIC = "mm2-offset-syncs.west.internal", "east.checkpoints.internal"  # written on primary / secondary
PARTITIONS, PER_PARTITION_RECORDS, COMMITTED = 2, 30, {0: 20, 1: 25}
FAIL_TASK = "kafkaops.mirror.preflight : Fail when any finding is an error"


def bootstrap(state, cluster):
    return state["clusters"][cluster]["bootstrap_servers"]


def commit_source_group(state):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(state, "primary"), group_id=GROUP, enable_auto_commit=False, api_version=NOIDA_API)
    try:
        consumer.commit({TopicPartition(TOPIC, partition): OffsetAndMetadata(offset, "", -1) for partition, offset in COMMITTED.items()})
    finally:
        consumer.close()


def recreate_remote_topic(state):
    """The target torn down and up again, as far as this flow goes: its remote topic deleted and created again, empty."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap(state, "secondary"), api_version=NOIDA_API, request_timeout_ms=15000)
    try:
        admin.delete_topics([REMOTE])
        assert wait_for(lambda: REMOTE not in topics(bootstrap(state, "secondary")), 30), f"{REMOTE} was not deleted"
    finally:
        admin.close()
    ensure_topic(bootstrap(state, "secondary"), REMOTE, PARTITIONS)


def mirror_status(state):
    return run_module("kafka_mirror_status", {
        "bootstrap_servers": [bootstrap(state, "secondary")], "source": {"bootstrap_servers": [bootstrap(state, "primary")]},
        "source_alias": SOURCE_ALIAS, "target_alias": TARGET_ALIAS, "topics": ["stale-.*"], "groups": ["stale-.*"],
        "mirrormaker_version": "3.9"})


def preflight(state, tmp_path):
    """The preflight role in check mode on this controller (the sandbox's brokers advertise IPs, so no MirrorMaker host is
    needed), with the sandbox's inventory under this flow's aliases."""
    inventory = yaml.safe_load((Path(state["dir"]) / "inventory.yml").read_text())
    for group, alias in (("primary_kafka", SOURCE_ALIAS), ("secondary_kafka", TARGET_ALIAS)):
        inventory["all"]["children"][group]["vars"]["kafka_cluster_alias"] = alias
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(inventory))
    role_vars = {"preflight_clock_check": False, "preflight_check_topic_creation": False, "preflight_mirrormaker_version": "3.9",
                 "preflight_flows": [{"source": SOURCE_ALIAS, "target": TARGET_ALIAS, "topics": ["stale-.*"], "groups": ["stale-.*"]}]}
    task = {"name": "preflight", "ansible.builtin.include_role": {"name": "kafkaops.mirror.preflight"}, "vars": role_vars}
    return run_tasks([task], inventory=path, check=True)


@pytest.fixture(scope="module")
def mirrored(sandbox):
    """The flow east -> west mirrored once: the last offset sync per partition, as the pass wrote them."""
    ensure_topic(bootstrap(sandbox, "primary"), TOPIC, PARTITIONS)
    produce(bootstrap(sandbox, "primary"), TOPIC, PARTITIONS * PER_PARTITION_RECORDS, PARTITIONS)
    commit_source_group(sandbox)
    syncs = mirror_pass(bootstrap(sandbox, "primary"), bootstrap(sandbox, "secondary"), SOURCE_ALIAS, TARGET_ALIAS, TOPIC, [GROUP],
                        offset_lag_max=10)
    yield {partition: partition_syncs[-1] for partition, partition_syncs in syncs.items()}
    for cluster, names in (("primary", [TOPIC, SYNCS_TOPIC]), ("secondary", [REMOTE, CHECKPOINTS_TOPIC])):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap(sandbox, cluster), api_version=NOIDA_API, request_timeout_ms=15000)
        try:
            admin.delete_topics([name for name in names if name in admin.list_topics()])
        finally:
            admin.close()


def test_the_current_mirror_is_not_stale(sandbox, mirrored):
    assert end_offsets(bootstrap(sandbox, "secondary"), REMOTE) == {p: PER_PARTITION_RECORDS for p in range(PARTITIONS)}
    status = mirror_status(sandbox)
    assert not status.get("failed"), status.get("msg")
    assert status["stale_state"] == [] and status["checkpoints"] == {GROUP: PARTITIONS}


def test_state_left_for_the_recreated_remote_topic_is_reported(sandbox, mirrored, tmp_path):
    recreate_remote_topic(sandbox)
    # Read back independently: the new topic is empty, the source still holds the offset syncs of the old one.
    assert end_offsets(bootstrap(sandbox, "secondary"), REMOTE) == {p: 0 for p in range(PARTITIONS)}
    assert SYNCS_TOPIC in topics(bootstrap(sandbox, "primary")) and CHECKPOINTS_TOPIC in topics(bootstrap(sandbox, "secondary"))

    status = mirror_status(sandbox)
    assert not status.get("failed") and not status["changed"], status.get("msg")
    syncs, checkpoints = status["stale_state"]
    assert (syncs["severity"], syncs["check"], syncs["cluster"]) == ("error", "stale_offset_syncs", SOURCE_ALIAS)
    assert syncs["message"].startswith(f"{SYNCS_TOPIC} on {SOURCE_ALIAS} holds offset syncs")
    for partition, (upstream, downstream) in mirrored.items():
        assert f"{TOPIC}[{partition}]: sync {upstream} -> {downstream}, but {REMOTE}[{partition}] ends at 0" in syncs["message"]
    assert f"delete {SYNCS_TOPIC} on {SOURCE_ALIAS}" in syncs["fix"]
    assert (checkpoints["severity"], checkpoints["check"], checkpoints["cluster"]) == ("error", "stale_checkpoints", TARGET_ALIAS)
    for partition, offset in COMMITTED.items():
        assert f"group {GROUP} {REMOTE}[{partition}]: checkpoint {offset} -> " in checkpoints["message"]
    assert f"delete {CHECKPOINTS_TOPIC} on {TARGET_ALIAS}" in checkpoints["fix"]
    assert any(SYNCS_TOPIC in warning for warning in status.get("warnings", []))

    play = preflight(sandbox, tmp_path)
    assert play.failed and play.changed_count == 0, play.stdout[-3000:]
    failure = play.task(FAIL_TASK)["msg"]
    assert f"{SYNCS_TOPIC} on {SOURCE_ALIAS} holds offset syncs" in failure and f"{CHECKPOINTS_TOPIC} on {TARGET_ALIAS} holds checkpoints" in failure
    table = play.task("kafkaops.mirror.preflight : Show the preflight summary")["msg"]
    assert f"MirrorMaker state of {SOURCE_ALIAS}->{TARGET_ALIAS} ({SYNCS_TOPIC} and checkpoints): 2 stale finding(s)" in table
    # The preflight read only: the stale topics are still there, the new remote topic still empty.
    assert SYNCS_TOPIC in topics(bootstrap(sandbox, "primary"))
    assert end_offsets(bootstrap(sandbox, "secondary"), REMOTE) == {p: 0 for p in range(PARTITIONS)}


def test_a_redeploy_that_copies_again_leaves_nothing_stale(sandbox, mirrored):
    """Redeployed onto the rebuilt target, MirrorMaker copies from the start (its own source offsets went with the target):
    the source offsets of its new syncs go back, which ends the old syncs' validity, and the checkpoints are written anew."""
    assert end_offsets(bootstrap(sandbox, "secondary"), REMOTE) == {p: 0 for p in range(PARTITIONS)}, "runs after the recreation"
    mirror_pass(bootstrap(sandbox, "primary"), bootstrap(sandbox, "secondary"), SOURCE_ALIAS, TARGET_ALIAS, TOPIC, [GROUP], offset_lag_max=10)
    assert end_offsets(bootstrap(sandbox, "secondary"), REMOTE) == {p: PER_PARTITION_RECORDS for p in range(PARTITIONS)}
    status = mirror_status(sandbox)
    assert not status.get("failed"), status.get("msg")
    assert status["stale_state"] == [] and status["lag_total"] == 0
