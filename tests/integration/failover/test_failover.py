"""Failover on the noida sandbox: translate consumer-group offsets with MirrorMaker 2 records and resume on the target.

The mirror is made by tests/integration/failover/mirror_fixture.py (copies records, writes real offset-syncs and
checkpoints with mm2_records), so that the cases real mirrors have can be set up exactly: duplicated records after a task
restart (downstream offsets differ from upstream ones), a mirror that began after the group's offset (no translation).
test_failover_mm2.py runs the same cutover after the mirrormaker2 role and the sandbox's MirrorMaker 2 stand-in.
Every outcome is read back with independent kafka-python clients.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from ansible_runner import REPO, run_module, run_playbook
from mirror_fixture import NOIDA_API, ensure_topic, mirror_pass, resume_and_count

pytestmark = pytest.mark.integration

SOURCE, TARGET = "primary", "secondary"
TOPIC = "fo-orders"
APPLY_TASK = "kafkaops.mirror.failover : Translate the groups' offsets and commit them on the target"
REPORT_TASK = "kafkaops.mirror.failover : Show what happened to each group and what the consumers must change"
LATE_TOPIC = "fo-late"
OFFSET_LAG_MAX = 10
DUPLICATED = 3  # records re-copied at the start of each partition, as after an MM2 task restart
PER_PARTITION = 120
# Group fo-app: committed offsets when the checkpoint is written, then after consuming a little more.
AT_CHECKPOINT = {0: 57, 1: 33}
AT_FAILOVER = {0: 64, 1: 33}
ACTIVE_AT = {0: 20, 1: 20}
LATE_START = 50  # MirrorMaker began copying fo-late at offset 50; group fo-early sits at 20: no translation exists.
EARLY_AT = {0: 20}


def bootstrap(state, alias):
    return state["clusters"][alias]["bootstrap_servers"]


def admin(state, alias):
    return KafkaAdminClient(bootstrap_servers=bootstrap(state, alias), api_version=NOIDA_API, request_timeout_ms=15000)


def produce(state, topic, partitions, count):
    producer = KafkaProducer(bootstrap_servers=bootstrap(state, SOURCE), api_version=NOIDA_API, linger_ms=5)
    for partition in range(partitions):
        for index in range(count):
            producer.send(topic, key=f"{topic}-p{partition}-{index}".encode(), value=f"value {index}".encode(),
                          headers=[("n", str(index).encode())], partition=partition)
    producer.flush(30)
    producer.close()


def commit_source(state, group, topic, offsets):
    """The group consumes exactly up to `offsets` on the source and commits (a real consumer: poll, then commit)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(state, SOURCE), group_id=group, enable_auto_commit=False, api_version=NOIDA_API)
    partitions = [TopicPartition(topic, p) for p in offsets]
    consumer.assign(partitions)
    consumer.seek_to_beginning(*partitions)
    consumed = {p: 0 for p in offsets}
    deadline = time.monotonic() + 30
    while any(consumed[p] < offsets[p] for p in offsets) and time.monotonic() < deadline:
        for tp, batch in consumer.poll(timeout_ms=200).items():
            consumed[tp.partition] = max(consumed[tp.partition], *(r.offset + 1 for r in batch))
    consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(offsets[p], "", -1) for p in offsets})
    consumer.close()


def target_group_offsets(state, group):
    client = admin(state, TARGET)
    try:
        return {(tp.topic, tp.partition): meta.offset for tp, meta in client.list_group_offsets({group: None}).get(group, {}).items()}
    finally:
        client.close()


@pytest.fixture(scope="module")
def mirrored(sandbox):
    """Topics, groups and one mirror pass; the group fo-app then consumes a little more on the source."""
    ensure_topic(bootstrap(sandbox, SOURCE), TOPIC, 2)
    ensure_topic(bootstrap(sandbox, SOURCE), LATE_TOPIC, 1)
    produce(sandbox, TOPIC, 2, PER_PARTITION)
    produce(sandbox, LATE_TOPIC, 1, 80)
    commit_source(sandbox, "fo-app", TOPIC, AT_CHECKPOINT)
    commit_source(sandbox, "fo-active", TOPIC, ACTIVE_AT)
    commit_source(sandbox, "fo-early", LATE_TOPIC, EARLY_AT)
    syncs = mirror_pass(bootstrap(sandbox, SOURCE), bootstrap(sandbox, TARGET), SOURCE, TARGET, TOPIC, ["fo-app", "fo-active"],
                        offset_lag_max=OFFSET_LAG_MAX, duplicate_first=DUPLICATED)
    mirror_pass(bootstrap(sandbox, SOURCE), bootstrap(sandbox, TARGET), SOURCE, TARGET, LATE_TOPIC, ["fo-early"],
                offset_lag_max=OFFSET_LAG_MAX, start_offset=LATE_START)
    commit_source(sandbox, "fo-app", TOPIC, AT_FAILOVER)  # consumed more after the checkpoint, before its consumers stopped
    return dict(state=sandbox, syncs=syncs)


@pytest.fixture
def active_member(mirrored):
    """A live member of fo-active on the target (one consumer: noida-db breaks with two consumers in one group)."""
    state = mirrored["state"]
    consumer = KafkaConsumer(f"{SOURCE}.{TOPIC}", bootstrap_servers=bootstrap(state, TARGET), group_id="fo-active",
                             enable_auto_commit=False, api_version=NOIDA_API, session_timeout_ms=30000, heartbeat_interval_ms=1000)
    deadline = time.monotonic() + 30
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(timeout_ms=200)
    assert consumer.assignment(), "the fo-active consumer did not join its group on the target"
    yield consumer
    consumer.close()


def offsets_args(state, **extra):
    args = dict(bootstrap_servers=[bootstrap(state, TARGET)], api_version="2.7", source_alias=SOURCE, target_alias=TARGET,
                source=dict(bootstrap_servers=[bootstrap(state, SOURCE)], api_version="2.7"), offset_syncs=True, groups=["fo-app"],
                verify=True, verify_window=2 * OFFSET_LAG_MAX)
    args.update(extra)
    return args


def test_kafka_mirror_offsets_module_contract(mirrored):
    """check mode changes nothing, diff shows the change, first run changes, second does not, bad input fails cleanly."""
    state = mirrored["state"]
    bad = run_module("kafka_mirror_offsets", offsets_args(state, groups=["(unclosed"], apply=True))
    assert bad.get("failed") and "not a valid regular expression" in bad["msg"] and "nothing was read or changed" in bad["msg"]
    bad = run_module("kafka_mirror_offsets", offsets_args(state, source=None, apply=True))
    assert bad.get("failed") and "needs the source connection" in bad["msg"]
    assert target_group_offsets(state, "fo-app") == {}

    planned = run_module("kafka_mirror_offsets", offsets_args(state, apply=True, groups=["fo-probe-none"]), check=True, diff=True)
    assert not planned.get("failed") and not planned["changed"] and planned["offsets"] == []

    secret = "S3cret-not-to-be-printed"
    source = dict(bootstrap_servers=[bootstrap(state, SOURCE)], api_version="2.7", sasl_plain_password=secret)
    masked = run_module("kafka_mirror_offsets", offsets_args(state, source=source, groups=["fo-probe-none"], verify=False))
    assert not masked.get("failed") and secret not in json.dumps(masked)

    # A consumer group name that matches nothing on either cluster is reported as an empty plan; fo-app itself is committed by the role test.
    plan = run_module("kafka_mirror_offsets", offsets_args(state, apply=True), check=True, diff=True)
    assert plan["changed"] and not plan.get("failed"), plan.get("msg")
    assert target_group_offsets(state, "fo-app") == {}, "check mode committed something"
    rows = {row["partition"]: row for row in plan["offsets"]}
    assert {p: rows[p]["source_offset"] for p in rows} == AT_FAILOVER
    for partition, row in rows.items():
        assert row["action"] == "commit" and row["basis"] == "offset_sync"
        assert row["checkpoint_upstream_offset"] == AT_CHECKPOINT[partition]
        expected = [d for u, d in mirrored["syncs"][partition] if u <= AT_FAILOVER[partition]][-1]
        last_u = [u for u, d in mirrored["syncs"][partition] if u <= AT_FAILOVER[partition]][-1]
        assert row["translated_offset"] == (expected if last_u == AT_FAILOVER[partition] else expected + 1)
        assert row["verification"]["lost"] == 0 and row["verification"]["re_read"] <= OFFSET_LAG_MAX
    assert plan["diff"]["after"]["fo-app"] == {f"{SOURCE}.{TOPIC}:{p}": rows[p]["translated_offset"] for p in rows}
    assert plan["diff"]["before"]["fo-app"] == {f"{SOURCE}.{TOPIC}:{p}": None for p in rows}


def test_failover_playbook(mirrored, active_member, tmp_path, mirror_host_ready):
    state = mirrored["state"]
    mirror_host_ready(state)  # failover.yml's mirror_host play then changes nothing, in check mode too
    inventory = Path(state["dir"]) / "inventory.yml"
    extra = dict(failover_pause=False, failover_groups=["fo-.*"], failover_topics=[TOPIC, LATE_TOPIC], failover_verify_window=2 * OFFSET_LAG_MAX,
                 failover_max_lag=0, failover_lag_timeout=60, failover_lag_poll_interval=1)

    check = run_playbook(REPO / "playbooks" / "failover.yml", inventory=inventory, extra_vars=extra, check=True, diff=True)
    planned = check.task(APPLY_TASK)
    assert planned["changed"] and set(planned["committed"]) == {"fo-app"}, check.stdout[-3000:]
    assert target_group_offsets(state, "fo-app") == {}, "check mode committed offsets"

    run = run_playbook(REPO / "playbooks" / "failover.yml", inventory=inventory, extra_vars=extra, diff=True)
    result = run.task(APPLY_TASK)
    # The active group is refused and left alone; the play fails naming it, after committing fo-app.
    assert run.failed and "fo-active" in run.stdout and "active members" in run.stdout
    assert result["refused"] == ["fo-active"]
    assert target_group_offsets(state, "fo-active") == {}
    # No translation for fo-early (MirrorMaker began at offset 50, the group is at 20): reported, nothing committed.
    assert result["untranslated"] == [f"fo-early {SOURCE}.{LATE_TOPIC}:0"]
    early = [row for row in result["offsets"] if row["group"] == "fo-early"][0]
    assert early["action"] == "no_translation" and "no checkpoint and no offset-sync at or before source offset 20" in early["reason"]
    assert target_group_offsets(state, "fo-early") == {}
    committed = target_group_offsets(state, "fo-app")
    assert committed == {(f"{SOURCE}.{TOPIC}", p): off for p, off in ((int(k.rsplit(":", 1)[1]), v) for k, v in
                                                                      result["committed"]["fo-app"].items())}
    report = run.task(REPORT_TASK)
    lines = "\n".join(report["msg"])
    assert f"subscribe to {SOURCE}.{TOPIC} instead of {TOPIC}" in lines and "bootstrap.servers=" + bootstrap(state, TARGET) in lines

    # Second run for the groups that can move: nothing left to change.
    again = run_playbook(REPO / "playbooks" / "failover.yml", inventory=inventory, extra_vars=dict(extra, failover_groups=["fo-app"]))
    assert not again.failed, again.stdout[-3000:]
    assert not again.task(APPLY_TASK)["changed"]

    # The same group resumes on the target: nothing lost, at most offset.lag.max re-read (independent consumer).
    figures = resume_and_count(bootstrap(state, TARGET), f"{SOURCE}.{TOPIC}", "fo-app", AT_FAILOVER, PER_PARTITION)
    verification = {row["partition"]: row["verification"] for row in result["offsets"] if row["group"] == "fo-app"}
    print("FAILOVER FIGURES", json.dumps({"consumer": figures, "module_verification": verification}))
    (Path(REPO) / "tests" / "output").mkdir(exist_ok=True)
    (Path(REPO) / "tests" / "output" / "failover-figures.json").write_text(json.dumps({"consumer": figures, "verification": verification}, indent=1))
    for partition, figure in figures.items():
        assert figure["lost"] == 0, figure
        assert figure["re_read"] <= OFFSET_LAG_MAX, figure
        assert figure["re_read"] == verification[partition]["re_read"], (figure, verification[partition])
