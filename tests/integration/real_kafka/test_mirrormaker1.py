# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 1 for real (issue 29 item 2): mirrormaker2_engine mm1 deploys Apache's kafka.tools.MirrorMaker from the
MirrorMaker host's Kafka home (3.2.0) on the real-Kafka lab (tests/integration/conftest.py sandbox_apache: primary 2.4.1,
secondary 3.2.0, three brokers each), as a service of its own beside the lab's MirrorMaker 2, for the topics m1-.* with
two streams, through playbooks/mirror.yml's kafka_topics, mirrormaker2 and mirror_validation stages.

Bad input changes nothing; check mode creates nothing and shows the command line; the real run creates the target topics
under the source's names (one already there with more partitions than its source is left so) and starts MirrorMaker 1,
whose health wait counts the lag from its group's committed offsets, and the validation stage compares each topic across
partitions (engine mm1) and passes with the record counts the tests' own reads find; a second run changes nothing and
keeps the process; a topic created on the source later is created on the target and mirrored by the next run; failover.yml
refuses the flow before anything, as it has no translation for MirrorMaker 1 yet; state absent stops it and removes what the
role wrote.

Read back with clients of the tests' own (tests/support/read_back.py under a node's python): every record (key and value) of
a source topic is on the target, in the source's order per key (MirrorMaker 1 partitions again by key on the target), the
group's committed offsets reach the source's end offsets, and the JVM is found in /proc by its main class.
"""
from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.checkout import REPO
from tests.support.real_lab import RealLab, jvms_reading, mirror_plan

pytestmark = [pytest.mark.integration, pytest.mark.skipif(os.geteuid() != 0, reason="the lab's nodes are SSH hosts (root)")]

MIRROR, FAILOVER = REPO / "playbooks" / "mirror.yml", REPO / "playbooks" / "failover.yml"
MM1_MAIN_CLASS = "kafka.tools.MirrorMaker"
CONFIG_DIR = Path("/etc/kafka-mirrormaker1")
GROUP = "kafkaops-m1"
ORDERS, RETURNS, PAYMENTS = "m1-orders", "m1-returns", "m1-payments"
FLOW = {"source": "primary", "target": "secondary", "topics": ["m1-.*"], "refresh_topics_interval_seconds": 10}
# A MirrorMaker 1 service of its own beside the lab's MirrorMaker 2 (its own name, files and group).
MM1 = {"mirrormaker2_engine": "mm1", "mirrormaker2_service_name": "kafka-mirrormaker1", "mirrormaker2_config_dir": str(CONFIG_DIR),
       "mirrormaker2_mm1_group_id": GROUP, "mirrormaker2_mm1_num_streams": 2, "mirrormaker2_flows": [FLOW], "mirrormaker2_max_lag": 0}
STAGES = "kafka_topics,mirrormaker2"
PRE_CREATE = "kafkaops.mirror.kafka_topics : Align the target cluster's topics in one batched call"
HEALTH_WAIT = "kafkaops.mirror.mirrormaker2 : Wait for MirrorMaker 1 to commit up to lag <= 0"
VALIDATION_REPORT = "kafkaops.mirror.mirror_validation : Keep the report as a fact"
VALIDATION_SUMMARY = "kafkaops.mirror.mirror_validation : Show the validation summary"


@pytest.fixture(scope="module")
def lab(sandbox_apache, mirror_host_ready, source_names_synced):
    lab = RealLab(sandbox_apache, mirror_plan("m1", health_timeout=300))
    mirror_host_ready(sandbox_apache)
    source_names_synced(sandbox_apache)  # the secondary's nodes resolve the primary's names, as after a first mirror.yml
    lab.client("primary", "create", ORDERS, 3, 3)
    lab.client("primary", "sequenced", ORDERS, 12, 25)
    # A target topic with more partitions than its source (2 -> 5): MirrorMaker 1 spreads the keys over all of them.
    lab.client("primary", "create", PAYMENTS, 2, 3)
    lab.client("primary", "sequenced", PAYMENTS, 6, 10)
    lab.client("secondary", "create", PAYMENTS, 5, 3)
    return lab


def mirrormaker1s(lab) -> list:
    """(pid, argv) of every MirrorMaker 1 JVM whose consumer properties name this lab's primary."""
    return jvms_reading(MM1_MAIN_CLASS, CONFIG_DIR / "mm1-consumer.properties", lab.state["clusters"]["primary"]["bootstrap_servers"].split(",")[0])


def config_dir(lab) -> Path:
    return lab.mirrormaker_node_root() / str(CONFIG_DIR).lstrip("/")


def assert_mirrored(lab, topic: str, timeout: float = 120) -> dict:
    """Every record of the source's `topic` is on the target's topic of the same name, each key's values in the source's
    order; returns the source's records by partition."""
    source = lab.client("primary", "records", topic)["records"]
    expected = Counter(tuple(record) for records in source.values() for record in records)
    deadline = time.monotonic() + timeout
    while True:
        target = lab.client("secondary", "records", topic)["records"]
        copied = Counter(tuple(record) for records in target.values() for record in records)
        if copied == expected or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert copied == expected, (sum(copied.values()), sum(expected.values()))
    assert values_by_key(target) == values_by_key(source), "a key's records are out of the source's order on the target"
    return source


def values_by_key(records_by_partition: dict) -> dict:
    """{key: [value, ...]} in each partition's order (a key's records are in one partition on either side)."""
    by_key = {}
    for records in records_by_partition.values():
        for key, value in records:
            by_key.setdefault(key, []).append(value)
    return by_key


def assert_committed_to_the_end(lab, topic: str, source: dict, timeout: float = 60) -> None:
    """MirrorMaker 1's group on the primary has committed every partition of `topic` up to its end (read_back's `group`);
    `source`: the topic's records by partition, as assert_mirrored read them (offsets from 0, no gaps on a fresh topic)."""
    ends = {p: len(records) for p, records in source.items()}
    deadline = time.monotonic() + timeout
    while True:
        offsets = lab.client("primary", "group", GROUP)["offsets"]
        committed = {p: offsets.get(f"{topic}:{p}") for p in ends}
        if committed == ends or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert committed == ends, (committed, ends)


def assert_validated(run, lab, sources: dict) -> None:
    """The validation stage of `run` passed for the topics of `sources` ({topic: records by partition, as assert_mirrored
    read them}) with the record counts per partition that the tests' own reads find on both sides, and its report and
    summary name the checks that do not exist for MirrorMaker 1 as not applicable."""
    report = run.task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    assert report["passed"] and report["exit_code"] == 0 and report["engine"] == "mm1", report["message"]
    assert {"anchors", "checkpoints", "offset_syncs", "partitions"} <= set(report["not_applicable"])
    topics = {topic["source_topic"]: topic for topic in report["topics"]}
    assert sorted(topics) == sorted(sources)
    for name, source in sources.items():
        target = lab.client("secondary", "records", name)["records"]
        topic = topics[name]
        assert topic["target_topic"] == name and topic["status"] == "passed", topic
        read = {entry["partition"]: (entry["source_count"], entry["target_count"]) for entry in topic["partitions"]}
        expected = {int(p): (len(source.get(p, [])), len(target.get(p, []))) for p in set(source) | set(target)}
        assert {p: counts for p, counts in read.items() if counts != (0, 0)} == {p: c for p, c in expected.items() if c != (0, 0)}, name
        totals = topic["totals"]
        assert (totals["missing"], totals["duplicates"], totals["unexpected"], totals["order_violations"]) == (0, 0, 0, 0), totals
    summary = run.task(VALIDATION_SUMMARY)["msg"]
    assert "Not applicable to MirrorMaker 1 (not skipped):" in summary, summary


def test_mirrormaker_1_deploys_mirrors_and_goes(lab):
    root = config_dir(lab)
    assert not mirrormaker1s(lab) and not root.exists()

    # Bad input: a pattern MirrorMaker 1 would change (it drops spaces) is refused before anything is written.
    bad = lab.play(MIRROR, tags="mirrormaker2", **dict(MM1, mirrormaker2_flows=[dict(FLOW, topics=["m1-orders eu"])]))
    assert bad.failed and "has white space, which MirrorMaker 1 removes" in bad.stdout, bad.stdout[-3000:]
    assert not mirrormaker1s(lab) and not root.exists(), "bad input changed the MirrorMaker host"

    # Check mode: the command line in the diff, nothing written, no target topic.
    check = lab.play(MIRROR, check=True, tags=STAGES, **MM1)
    assert not check.failed and check.changed_count > 0, check.stdout[-3000:]
    assert "kafka.tools.MirrorMaker" in check.stdout or "kafka-mirror-maker.sh" in check.stdout, check.stdout[-3000:]
    assert "--num.streams" in check.stdout
    assert not mirrormaker1s(lab) and not root.exists(), "check mode changed the MirrorMaker host"
    assert ORDERS not in lab.client("secondary", "topics")["topics"], "check mode created the target topic"

    run = lab.play(MIRROR, tags=STAGES + ",mirror_validation", **MM1)
    assert not run.failed, run.stdout[-5000:]
    (pid, argv), = mirrormaker1s(lab)
    assert argv[argv.index("--num.streams") + 1] == "2" and "--whitelist" in argv, argv
    # The health wait read MirrorMaker 1's group: both streams consuming, every record committed.
    (status,) = run.task(HEALTH_WAIT)["results"]
    assert status["healthy"] and status["group"]["members"] == 2 and status["lag_total"] == 0, status
    # The target topic was created under the source's name, with its partitions, before MirrorMaker 1 wrote to it.
    assert lab.client("secondary", "topics")["topics"][ORDERS] == {"partitions": 3, "replication_factor": 3}
    assert lab.client("secondary", "topics")["topics"][PAYMENTS]["partitions"] == 5
    orders = assert_mirrored(lab, ORDERS)
    assert_committed_to_the_end(lab, ORDERS, orders)
    assert_validated(run, lab, {ORDERS: orders, PAYMENTS: assert_mirrored(lab, PAYMENTS)})

    again = lab.play(MIRROR, tags=STAGES, **MM1)
    assert not again.failed and again.changed_count == 0, again.stdout[-3000:]
    assert [p for p, _argv in mirrormaker1s(lab)] == [pid]

    # A topic created on the source after the deploy: the next run creates it on the target, MirrorMaker 1 mirrors it.
    lab.client("primary", "create", RETURNS, 2, 3)
    lab.client("primary", "sequenced", RETURNS, 5, 20)
    grown = lab.play(MIRROR, tags=STAGES, **MM1)
    assert not grown.failed, grown.stdout[-5000:]
    created = lab.client("secondary", "topics")["topics"][RETURNS]
    # kafka_topics created it with the source's 2 partitions, unless MirrorMaker 1 got there first (its consumer sees the
    # topic at its next metadata refresh) through the target's auto-create with the broker's num.partitions: on this shared
    # lab the secondary has auto-create on after test_real_kafka's rolling restart (seen in ci27: 8 partitions). Either
    # way the run passes, and says when it left more partitions than the source has.
    assert created["replication_factor"] == 3 and created["partitions"] >= 2, created
    if created["partitions"] > 2:
        # The module's warning: in its result, or (when the stdout callback has shown and dropped it) on the play's stderr.
        said = f"has {created['partitions']} partitions, more than the 2 of its source; left as it is"
        warnings = grown.task(PRE_CREATE).get("warnings") or []
        assert any(said in w for w in warnings) or said in grown.stdout + grown.stderr, (warnings, grown.stderr[-2000:])
    assert_mirrored(lab, RETURNS)
    assert_mirrored(lab, ORDERS)

    # failover.yml has no translation for MirrorMaker 1 (no checkpoints, no offset syncs): it says so before anything
    # (check mode: a failover that went ahead would stop the lab's MirrorMaker 2 for its other tests).
    running = mirrormaker1s(lab)
    failover = lab.play(FAILOVER, check=True, **MM1)
    assert failover.failed and "which MirrorMaker 1 (mirrormaker2_engine mm1) does not write: nothing was changed" in failover.stdout, (
        failover.stdout[-3000:])
    assert mirrormaker1s(lab) == running

    gone = lab.play(MIRROR, tags="mirrormaker2", mirrormaker2_state="absent", **MM1)
    assert not gone.failed and gone.changed_count > 0, gone.stdout[-3000:]
    assert not mirrormaker1s(lab), "MirrorMaker 1 still runs after state absent"
    assert not root.exists() or not any(path.is_file() for path in root.rglob("*")), sorted(root.rglob("*"))
