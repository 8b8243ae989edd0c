# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failover on the noida sandbox: translate consumer-group offsets with MirrorMaker 2 records and resume on the target.

The mirror is made by tests/support/mirror_fixture.py (copies records, writes real offset-syncs and
checkpoints with mm2_records), so that the cases real mirrors have can be set up exactly: duplicated records after a task
restart (downstream offsets differ from upstream ones), a re-copy after a crash behind the group's position (records the
group consumed come again after its new position), a mirror that began after the group's offset (no translation), a
stale checkpoint (its position would skip records).
The failover preview's figures (check mode) are compared with what an independent consumer re-reads after the real
failover. test_failover_mm2.py runs the same cutover after the mirrormaker2 role and the sandbox's MirrorMaker 2 stand-in.
Every outcome is read back with independent kafka-python clients.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from tests.support.ansible_play import run_module, run_playbook
from tests.support.checkout import REPO
from tests.support.mirror_fixture import NOIDA_API, ensure_topic, keys_at, mirror_pass, produce_indexed, resume_and_count, write_checkpoints

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
# Re-copy scenario (names outside failover_groups "fo-.*"): rc-orders is copied whole (0..59 at 0..59, checkpoint of rc-app
# at 40 -> 40), then MirrorMaker "crashes" and copies again from source offset 30 (60..89 hold 30..59, syncs 30 -> 60,
# 40 -> 70, 50 -> 80) and stops before a new checkpoint: from target 40 the group reads 40..59, then 30..59 again, of
# which 30..39 it had consumed.
RECOPY_TOPIC = "rc-orders"
RECOPY_RECORDS = 60
RECOPY_AT = {0: 40}
RECOPY_FROM = 30
# rc-stale sits at 5 with a checkpoint made from a stale offset sync (0 -> 15, as left by an earlier deployment): 5 -> 16.
STALE_AT = {0: 5}


def bootstrap(state, alias):
    return state["clusters"][alias]["bootstrap_servers"]


def admin(state, alias):
    return KafkaAdminClient(bootstrap_servers=bootstrap(state, alias), api_version=NOIDA_API, request_timeout_ms=15000)


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
    produce_indexed(bootstrap(sandbox, SOURCE), TOPIC, range(PER_PARTITION), partitions=range(2))
    produce_indexed(bootstrap(sandbox, SOURCE), LATE_TOPIC, range(80), partitions=range(1))
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


@pytest.fixture(scope="module")
def recopied(sandbox):
    """rc-orders mirrored once, then re-copied from RECOPY_FROM without a checkpoint; rc-stale with a stale checkpoint."""
    ensure_topic(bootstrap(sandbox, SOURCE), RECOPY_TOPIC, 1)
    produce_indexed(bootstrap(sandbox, SOURCE), RECOPY_TOPIC, range(RECOPY_RECORDS), partitions=range(1))
    commit_source(sandbox, "rc-app", RECOPY_TOPIC, RECOPY_AT)
    commit_source(sandbox, "rc-stale", RECOPY_TOPIC, STALE_AT)
    mirror_pass(bootstrap(sandbox, SOURCE), bootstrap(sandbox, TARGET), SOURCE, TARGET, RECOPY_TOPIC, ["rc-app"], offset_lag_max=OFFSET_LAG_MAX)
    mirror_pass(bootstrap(sandbox, SOURCE), bootstrap(sandbox, TARGET), SOURCE, TARGET, RECOPY_TOPIC, [], offset_lag_max=OFFSET_LAG_MAX,
                start_offset=RECOPY_FROM)
    write_checkpoints(bootstrap(sandbox, SOURCE), bootstrap(sandbox, TARGET), SOURCE, RECOPY_TOPIC, ["rc-stale"], {0: [(0, 15)]})
    return sandbox


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
    assert bad.get("failed") and "is not a regular expression" in bad["msg"] and "nothing was read or changed" in bad["msg"]
    bad = run_module("kafka_mirror_offsets", offsets_args(state, source=None, apply=True))
    assert bad.get("failed") and "verify needs the source connection" in bad["msg"]
    bad = run_module("kafka_mirror_offsets", offsets_args(state, source=dict(security_protocol="SASL_SSL"), apply=True))
    assert bad.get("failed") and "bootstrap_servers" in bad["msg"]
    bad = run_module("kafka_mirror_offsets", offsets_args(state, offset_syncs_topic_location="target", mirrormaker_version="2.4.1", apply=True))
    assert bad.get("failed") and "Kafka 3.0 or later" in bad["msg"] and "nothing was read or changed" in bad["msg"]
    assert target_group_offsets(state, "fo-app") == {}
    # The older option name still works, with a deprecation.
    aliased = run_module("kafka_mirror_offsets", offsets_args(state, groups=["fo-probe-none"], offset_syncs_location="source"))
    assert not aliased.get("failed") and "offset_syncs_location" in json.dumps(aliased.get("deprecations", []))

    planned = run_module("kafka_mirror_offsets", offsets_args(state, apply=True, groups=["fo-probe-none"]), check=True, diff=True)
    assert not planned.get("failed") and not planned["changed"] and planned["offsets"] == []

    secret = "S3cret-not-to-be-printed"
    source = dict(bootstrap_servers=[bootstrap(state, SOURCE)], api_version="2.7", sasl_plain_password=secret)
    masked = run_module("kafka_mirror_offsets", offsets_args(state, source=source, groups=["fo-probe-none"], verify=False))
    assert not masked.get("failed") and secret not in json.dumps(masked)

    # fo-early assigns and commits (a simple group, empty protocol type in ListGroups): MirrorMaker before 2.8 never
    # checkpoints it (MirrorCheckpointConnector.findConsumerGroups), and the reason says so instead of "wait".
    early = run_module("kafka_mirror_offsets", offsets_args(state, groups=["fo-early"], mirrormaker_version="2.7.0", offset_syncs=False,
                                                            verify=False))
    assert early["mirrormaker_version"] == "2.7.0" and early["untranslated"] == [f"fo-early {SOURCE}.{LATE_TOPIC}:0"], early
    assert "MirrorMaker 2.7.0 never checkpoints simple groups" in early["offsets"][0]["reason"], early["offsets"][0]

    # A consumer group name that matches nothing on either cluster is reported as an empty plan; fo-app itself is committed by the role test.
    plan = run_module("kafka_mirror_offsets", offsets_args(state, apply=True), check=True, diff=True)
    assert plan["changed"] and not plan.get("failed"), plan.get("msg")
    assert target_group_offsets(state, "fo-app") == {}, "check mode committed something"
    rows = {row["partition"]: row for row in plan["offsets"]}
    assert {p: rows[p]["source_offset"] for p in rows} == AT_FAILOVER
    for partition, row in rows.items():
        assert row["action"] == "commit" and row["checkpoint_upstream_offset"] == AT_CHECKPOINT[partition]
        if AT_CHECKPOINT[partition] == AT_FAILOVER[partition]:
            # A checkpoint for exactly the group's offset: MirrorMaker translated it itself.
            assert row["basis"] == "checkpoint" and row["translated_offset"] == row["checkpoint_downstream_offset"]
        else:
            # Release unknown: the 3.4.1+ rule, the latest sync at or before the offset, plus one after it. The fixture's
            # syncs are offset.lag.max apart and few, so the bounded history keeps the one just before.
            last_u, last_d = [(u, d) for u, d in mirrored["syncs"][partition] if u <= AT_FAILOVER[partition]][-1]
            assert row["basis"] == "offset_sync"
            assert row["translated_offset"] == (last_d if last_u == AT_FAILOVER[partition] else last_d + 1)
        assert row["preview"]["skipped"] == 0 and row["preview"]["re_read"] <= OFFSET_LAG_MAX
        assert row["exact_offset"] == row["commit_offset"] >= row["translated_offset"] and row["re_read"] == 0, row
    # The exact position: the copy of the group's next record (keys end in -p<partition>-<source offset>), read back by a
    # consumer of its own; nothing read again from there.
    exact_keys = keys_at(bootstrap(state, TARGET), f"{SOURCE}.{TOPIC}", {p: rows[p]["exact_offset"] for p in rows})
    assert all((exact_keys[p] or "").endswith(f"-p{p}-{AT_FAILOVER[p]}") for p in rows), exact_keys
    assert plan["diff"]["after"]["fo-app"] == {f"{SOURCE}.{TOPIC}:{p}": rows[p]["exact_offset"] for p in rows}
    assert plan["diff"]["before"]["fo-app"] == {f"{SOURCE}.{TOPIC}:{p}": None for p in rows}


def test_failover_playbook(mirrored, active_member, tmp_path, mirror_host_ready):
    state = mirrored["state"]
    mirror_host_ready(state)  # failover.yml's mirror_host play then changes nothing, in check mode too
    inventory = Path(state["dir"]) / "inventory.yml"
    # A window of the whole partition: the preview reads the target to its end, so its figures are complete.
    # No MirrorMaker of the role runs here (tests/support/mirror_fixture.py copies), so nothing to stop, and a stop would leave the
    # failover's cut-over record on the session's MirrorMaker node, which holds MirrorMaker stopped for the later test files.
    extra = dict(failover_pause=False, failover_groups=["fo-.*"], failover_topics=[TOPIC, LATE_TOPIC], failover_verify_window=PER_PARTITION,
                 failover_max_lag=0, failover_lag_timeout=60, failover_lag_poll_interval=1, failover_stop_mirrormaker=False)

    check = run_playbook(REPO / "playbooks" / "failover.yml", inventory=inventory, extra_vars=extra, check=True, diff=True)
    planned = check.task(APPLY_TASK)
    assert planned["changed"] and set(planned["committed"]) == {"fo-app"}, check.stdout[-3000:]
    assert target_group_offsets(state, "fo-app") == {}, "check mode committed offsets"
    # The preview: the release detected by the mirrormaker2 role, and per partition the figures counted from the records.
    assert planned["mirrormaker_version"], planned
    planned_rows = {row["partition"]: row for row in planned["offsets"] if row["group"] == "fo-app"}
    previewed = {partition: row["preview"] for partition, row in planned_rows.items()}
    assert all(item["complete"] and item["skipped"] == 0 for item in previewed.values()), previewed
    check_lines = "\n".join(check.task(REPORT_TASK)["msg"])
    print("FAILOVER REPORT (check mode)\n" + check_lines)
    assert f"{SOURCE}.{TOPIC}[0] source {AT_FAILOVER[0]} -> target " in check_lines and "preview: " in check_lines

    run = run_playbook(REPO / "playbooks" / "failover.yml", inventory=inventory, extra_vars=extra, diff=True)
    result = run.task(APPLY_TASK)
    # The active group is refused and left alone; the play fails naming it, after committing fo-app.
    assert run.failed and "fo-active" in run.stdout and "active members" in run.stdout
    assert result["refused"] == ["fo-active"]
    assert target_group_offsets(state, "fo-active") == {}
    # No translation for fo-early (MirrorMaker began at offset 50, the group is at 20): reported, nothing committed.
    assert result["untranslated"] == [f"fo-early {SOURCE}.{LATE_TOPIC}:0"]
    early = [row for row in result["offsets"] if row["group"] == "fo-early"][0]
    assert early["action"] == "no_translation" and "no offset sync translates source offset 20" in early["reason"]
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

    # The same group resumes on the target: what the check-mode preview said it would re-read, nothing lost (independent consumer).
    figures = resume_and_count(bootstrap(state, TARGET), f"{SOURCE}.{TOPIC}", "fo-app", AT_FAILOVER, PER_PARTITION)
    print("FAILOVER FIGURES", json.dumps({"consumer": figures, "preview": previewed}))
    (Path(REPO) / "tests" / "output").mkdir(exist_ok=True)
    (Path(REPO) / "tests" / "output" / "failover-figures.json").write_text(json.dumps({"consumer": figures, "preview": previewed}, indent=1))
    for partition, figure in figures.items():
        assert figure["lost"] == 0, figure
        # Committed at the exact position: nothing read again, where MirrorMaker's offset would have re-read what the preview
        # counted from it.
        assert figure["re_read"] == planned_rows[partition]["re_read"] == 0, (figure, planned_rows[partition])
        assert previewed[partition]["re_read"] <= OFFSET_LAG_MAX, previewed[partition]


def test_preview_counts_re_copied_records(recopied):
    """With checkpoints only, check mode previews 10 records read again at the checkpoint's target offset 40 (the re-copied
    30..39 after it; the offsets alone say 0), and commits the exact position, the re-copy's source 40 at 70, from which an
    independent consumer reads nothing again and misses nothing. With the offset syncs, the sync written after the re-copy
    (40 -> 70) is further than the checkpoint: MirrorMaker's position is already exact."""
    state = recopied
    with_syncs = run_module("kafka_mirror_offsets", offsets_args(state, groups=["rc-app"], verify_window=2 * RECOPY_RECORDS), check=True)
    row = with_syncs["offsets"][0]
    assert (row["basis"], row["translated_offset"], row["re_read"], row["skipped"]) == ("offset_sync", 70, 0, 0), row

    args = dict(offsets_args(state, groups=["rc-app"], offset_syncs=False, verify_window=2 * RECOPY_RECORDS), apply=True)
    plan = run_module("kafka_mirror_offsets", args, check=True)
    assert plan["changed"] and not plan.get("failed"), plan.get("msg")
    assert target_group_offsets(state, "rc-app") == {}, "check mode committed something"
    row = plan["offsets"][0]
    assert (row["source_offset"], row["basis"], row["translated_offset"]) == (40, "checkpoint", 40), row
    assert row["preview"]["status"] == "re_read" and row["preview"]["complete"], row["preview"]
    assert (row["preview"]["re_read"], row["skipped"]) == (RECOPY_AT[0] - RECOPY_FROM, 0), row["preview"]
    # The exact position passes over the first copies of 40 and on (copied again after the re-copy's 30..39) to the second
    # copy of source 40, at 70: nothing read again.
    assert (row["exact_offset"], row["commit_offset"], row["re_read"]) == (70, 70, 0), row

    applied = run_module("kafka_mirror_offsets", args)
    assert applied["changed"] and target_group_offsets(state, "rc-app") == {(f"{SOURCE}.{RECOPY_TOPIC}", 0): 70}
    figures = resume_and_count(bootstrap(state, TARGET), f"{SOURCE}.{RECOPY_TOPIC}", "rc-app", RECOPY_AT, RECOPY_RECORDS)
    print("FAILOVER FIGURES (re-copy)", json.dumps({"consumer": figures, "preview": row["preview"]}))
    assert figures[0] == dict(re_read=row["re_read"], lost=0, consumed=RECOPY_RECORDS - RECOPY_AT[0])


def test_preview_refuses_a_position_that_skips(recopied):
    """A stale checkpoint puts rc-stale (at 5) at target 16: 11 records would be skipped. Check mode and a real run fail
    naming the partition, and nothing is committed."""
    state = recopied
    args = dict(offsets_args(state, groups=["rc-stale"], offset_syncs=False, verify_window=2 * RECOPY_RECORDS), apply=True)
    for check in (True, False):
        result = run_module("kafka_mirror_offsets", args, check=check)
        assert result.get("failed") and f"rc-stale {SOURCE}.{RECOPY_TOPIC}:0" in result["msg"] and "skip 11 record(s)" in result["msg"], result
        assert target_group_offsets(state, "rc-stale") == {}
