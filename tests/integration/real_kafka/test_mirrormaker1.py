# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 1 for real (issue 29 items 2 and 6): mirrormaker2_engine mm1 deploys Apache's kafka.tools.MirrorMaker of 2.4.1,
the runbooks' (HDInsight 5.0's release), from a 2.4.1 Kafka home beside the MirrorMaker host's own 3.2.0 one, on the
single-broker real-Kafka lab (tests/integration/conftest.py sandbox_apache_single: primary 2.4.1, secondary 3.2.0; MirrorMaker 1
needs no replication), as a service of its own beside the lab's MirrorMaker 2, for the topics m1-.* with a whitelist and two
streams as the runbooks run it, through playbooks/mirror.yml's kafka_topics, mirrormaker2 and mirror_validation stages.

Bad input changes nothing; check mode creates nothing and shows the command line; the real run creates the target topics
under the source's names (one already there with more partitions than its source is left so) and starts MirrorMaker 1,
whose health wait counts the lag from its group's committed offsets, and the validation stage compares each topic across
partitions (engine mm1) and passes with the record counts the tests' own reads find; a second run changes nothing and
keeps the process; a topic created on the source later is created on the target and mirrored by the next run.

Then (issue 29 items 4 and 5) MirrorMaker 1 is killed with SIGKILL right after a batch (supervisord starts it again, and it
copies again what it had not committed), an application's group is failed over with failover.yml (the preview in check mode
changes nothing; the real run stops MirrorMaker 1 and commits, per target partition, the first record not proven consumed),
MirrorMaker 1 is resumed, and the flow is switched, while MirrorMaker 1 runs and records arrive, to MirrorMaker 2 with the
identity policy (mirrormaker2_mm1_handover; the role stops MirrorMaker 1 first) starting where MirrorMaker 1's group
stopped, the records copied again counted per key; state absent stops it and removes what the role wrote.

Read back with clients of the tests' own (tests/support/read_back.py under a node's python): every record (key and value) of
a source topic is on the target, in the source's order per key (MirrorMaker 1 partitions again by key on the target), the
group's committed offsets reach the source's end offsets, and the JVM is found in /proc by its main class.
"""
from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from sandbox.api import OTHER_KAFKA_HOMES_ON_NODE
from tests.support.checkout import REPO
from tests.support.real_lab import MM2_MAIN_CLASS, RealLab, jvms_reading, mirror_plan

pytestmark = [pytest.mark.integration, pytest.mark.skipif(os.geteuid() != 0, reason="the lab's nodes are SSH hosts (root)")]

MIRROR, FAILOVER = REPO / "playbooks" / "mirror.yml", REPO / "playbooks" / "failover.yml"
MM1_MAIN_CLASS = "kafka.tools.MirrorMaker"
CONFIG_DIR = Path("/etc/kafka-mirrormaker1")
GROUP = "kafkaops-m1"
APP = "m1-app"  # an application's group on the source, failed over
ORDERS, RETURNS, PAYMENTS = "m1-orders", "m1-returns", "m1-payments"
FLOW = {"source": "primary", "target": "secondary", "topics": ["m1-.*"], "refresh_topics_interval_seconds": 10}
# MirrorMaker 1 of the runbooks' release, from the lab's 2.4.1 home on the MirrorMaker node (sandbox/api.py OTHER_KAFKA_HOMES_ON_NODE).
MM1_RELEASE = "2.4.1"
MM1_HOME = f"{OTHER_KAFKA_HOMES_ON_NODE}/{MM1_RELEASE}"
# A MirrorMaker 1 service of its own beside the lab's MirrorMaker 2 (its own name, files and group).
SERVICE = {"mirrormaker2_service_name": "kafka-mirrormaker1", "mirrormaker2_config_dir": str(CONFIG_DIR), "mirrormaker2_mm1_group_id": GROUP,
           "mirrormaker2_mm1_num_streams": 2, "mirrormaker2_flows": [FLOW], "mirrormaker2_max_lag": 0}
MM1 = dict(SERVICE, mirrormaker2_engine="mm1", mirrormaker2_kafka_home=MM1_HOME)
# The switch to MirrorMaker 2 (issue 29 item 5): the same service, from the node's own Kafka home (3.2.0; Maven Central has no
# MirrorMaker 2 of 2.4.1 to run here), identity policy, started where MirrorMaker 1 stopped. Its Connect worker gets a group
# and internal topics of its own, apart from the lab's MirrorMaker 2 of the same flow.
SWITCH_OFFSETS = "mm2-offsets.m1-switch.internal"
SWITCH = dict(SERVICE, mirrormaker2_engine="mm2", mirrormaker2_replication_policy="identity", mirrormaker2_mm1_handover=True,
              mirrormaker2_resume_after_failover=True, mirrormaker2_flows=[dict(FLOW, groups=[APP])],
              mirrormaker2_properties={"offset.storage.topic": SWITCH_OFFSETS, "config.storage.topic": "mm2-configs.m1-switch.internal",
                                       "status.storage.topic": "mm2-status.m1-switch.internal", "secondary.group.id": "m1-switch-mm2",
                                       "primary.group.id": "m1-switch-mm2-back"})
HANDOVER = "kafkaops.mirror.mirrormaker2 : Start MirrorMaker 2 where MirrorMaker 1 stopped"
APPLY_TASK = "kafkaops.mirror.failover : Translate the groups' offsets and commit them on the target"
STAGES = "kafka_topics,mirrormaker2"
PRE_CREATE = "kafkaops.mirror.kafka_topics : Align the target cluster's topics in one batched call"
HEALTH_WAIT = "kafkaops.mirror.mirrormaker2 : Wait for MirrorMaker 1 to commit up to lag <= 0"
RELEASE_FOUND = f"kafkaops.mirror.mirrormaker2 : Use the Kafka version of {MM1_HOME}"
VALIDATION_REPORT = "kafkaops.mirror.mirror_validation : Keep the report as a fact"
VALIDATION_SUMMARY = "kafkaops.mirror.mirror_validation : Show the validation summary"


@pytest.fixture(scope="module")
def lab(sandbox_apache_single, mirror_host_ready, source_names_synced):
    assert sandbox_apache_single["other_kafka_homes"][MM1_RELEASE] == MM1_HOME, sandbox_apache_single["other_kafka_homes"]
    lab = RealLab(sandbox_apache_single, mirror_plan("m1", health_timeout=300))
    mirror_host_ready(sandbox_apache_single)
    source_names_synced(sandbox_apache_single)  # the secondary's nodes resolve the primary's names, as after a first mirror.yml
    lab.client("primary", "create", ORDERS, 3, 1)
    lab.client("primary", "sequenced", ORDERS, 12, 25)
    # A target topic with more partitions than its source (2 -> 5): MirrorMaker 1 spreads the keys over all of them.
    lab.client("primary", "create", PAYMENTS, 2, 1)
    lab.client("primary", "sequenced", PAYMENTS, 6, 10)
    lab.client("secondary", "create", PAYMENTS, 5, 1)
    return lab


def switched_mirrormaker2s(lab) -> list:
    """(pid, argv) of every MirrorMaker 2 JVM reading this service's properties (the switch from MirrorMaker 1)."""
    return jvms_reading(MM2_MAIN_CLASS, CONFIG_DIR / "connect-mirror-maker.properties",
                        lab.state["clusters"]["secondary"]["bootstrap_servers"].split(",")[0])


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
    # The runbooks' MirrorMaker 1: 2.4.1's, from the 2.4.1 home (the JVM's class path is that home's libs only).
    class_path = [entry for entry in argv[argv.index("-cp") + 1].split(":") if entry]
    assert class_path and all(entry.startswith(f"{MM1_HOME}/libs/") for entry in class_path), class_path
    assert run.task(RELEASE_FOUND)["ansible_facts"]["mirrormaker2_kafka_version_resolved"] == MM1_RELEASE
    # The health wait read MirrorMaker 1's group: both streams consuming, every record committed.
    (status,) = run.task(HEALTH_WAIT)["results"]
    assert status["healthy"] and status["group"]["members"] == 2 and status["lag_total"] == 0, status
    # The target topic was created under the source's name, with its partitions, before MirrorMaker 1 wrote to it.
    assert lab.client("secondary", "topics")["topics"][ORDERS] == {"partitions": 3, "replication_factor": 1}
    assert lab.client("secondary", "topics")["topics"][PAYMENTS]["partitions"] == 5
    orders = assert_mirrored(lab, ORDERS)
    assert_committed_to_the_end(lab, ORDERS, orders)
    assert_validated(run, lab, {ORDERS: orders, PAYMENTS: assert_mirrored(lab, PAYMENTS)})

    again = lab.play(MIRROR, tags=STAGES, **MM1)
    assert not again.failed and again.changed_count == 0, again.stdout[-3000:]
    assert [p for p, _argv in mirrormaker1s(lab)] == [pid]

    # A topic created on the source after the deploy: the next run creates it on the target, MirrorMaker 1 mirrors it.
    lab.client("primary", "create", RETURNS, 2, 1)
    lab.client("primary", "sequenced", RETURNS, 5, 20)
    grown = lab.play(MIRROR, tags=STAGES, **MM1)
    assert not grown.failed, grown.stdout[-5000:]
    created = lab.client("secondary", "topics")["topics"][RETURNS]
    # kafka_topics created it with the source's 2 partitions, unless MirrorMaker 1 got there first (its consumer sees the
    # topic at its next metadata refresh) through the target's auto-create with the broker's num.partitions, where a test
    # before this one turned auto-create on (seen in ci27, on the three-broker lab: 8 partitions). Either way the run passes,
    # and says when it left more partitions than the source has.
    assert created["replication_factor"] == 1 and created["partitions"] >= 2, created
    if created["partitions"] > 2:
        # The module's warning: in its result, or (when the stdout callback has shown and dropped it) on the play's stderr.
        said = f"has {created['partitions']} partitions, more than the 2 of its source; left as it is"
        warnings = grown.task(PRE_CREATE).get("warnings") or []
        assert any(said in w for w in warnings) or said in grown.stdout + grown.stderr, (warnings, grown.stderr[-2000:])
    assert_mirrored(lab, RETURNS)
    assert_mirrored(lab, ORDERS)


def target_position_check(lab, rows: dict, committed: dict, consumed: dict, topic: str) -> dict:
    """An independent consumer's view of the failover of `topic`: from the group's committed offset of each target partition
    (`committed`, read_back's `group`) it reads every record the group had not consumed on the source (`consumed`: the
    group's source offsets by partition), and again exactly what the module's row (`rows`, by (topic, partition)) says.
    Returns {target partition: (committed offset, records read again from it)}; the records before it are passed over."""
    source = lab.client("primary", "records", topic)["records"]
    target = lab.client("secondary", "records", topic)["records"]
    done = {tuple(r) for p, records in source.items() for r in records[:consumed.get(int(p), 0)]}
    pending = {tuple(r) for p, records in source.items() for r in records[consumed.get(int(p), 0):]}
    unread, figures = set(), {}
    for partition in sorted(target, key=int):
        records = [tuple(r) for r in target[partition]]  # fresh topics, no transactions: offsets are the list's indexes
        offset = committed[f"{topic}:{partition}"]
        again = sum(1 for r in records[offset:] if r in done)
        unread.update(records[offset:])
        row = rows[(topic, int(partition))]
        assert row["re_read"] == again and row["skipped"] == 0, (topic, partition, row)
        figures[int(partition)] = (offset, again)
    assert pending <= unread, f"{topic}: {len(pending - unread)} record(s) the group had not consumed are skipped"
    figures["copied twice"] = sum(map(len, target.values())) - sum(map(len, source.values()))
    return figures


def per_key(lab, topic: str) -> Counter:
    """Records per key on the secondary's `topic` (every partition)."""
    return Counter(key for records in lab.client("secondary", "records", topic)["records"].values() for key, _value in records)


def test_mirrormaker_1_killed_fails_over_then_switches_to_mirrormaker_2(lab):
    """Item 4 and 5: a kill -9 while MirrorMaker 1 copies (it re-copies what it had not committed), the failover's preview
    and the failover of a group (positions from the records, nothing skipped, re-reads counted by the test's own reads),
    then MirrorMaker 1 resumed and the switch of the same flow, while it runs, to MirrorMaker 2 with the identity policy,
    started where MirrorMaker 1 stopped, and the records copied again counted per key."""
    started = time.monotonic()
    (pid, _argv), = mirrormaker1s(lab)
    lab.client("primary", "sequenced", ORDERS, 12, 40, 25)  # values s25..s64: every (key, value) stays unique
    lab.client("primary", "sequenced", PAYMENTS, 6, 20, 10)
    uncommitted = lab.client("primary", "group", GROUP)["offsets"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 90
    while not [p for p, _a in mirrormaker1s(lab) if p != pid] and time.monotonic() < deadline:
        time.sleep(2)  # supervisord's autorestart
    assert [p for p, _a in mirrormaker1s(lab) if p != pid], "MirrorMaker 1 did not come back after kill -9"
    print("MM1 KILLED, its group's commits then:", uncommitted)

    # The application's group consumed part of each topic on the source (partition 2 of ORDERS nothing, PAYMENTS[1] no commit).
    ends = {topic: {int(p): len(r) for p, r in lab.client("primary", "records", topic)["records"].items()} for topic in (ORDERS, PAYMENTS)}
    consumed = {ORDERS: {0: ends[ORDERS][0] // 3, 1: ends[ORDERS][1], 2: 0}, PAYMENTS: {0: ends[PAYMENTS][0] // 2}}
    for topic, offsets in consumed.items():
        for partition, offset in offsets.items():
            lab.client("primary", "commit", APP, topic, partition, offset)

    failover_args = dict(MM1, failover_pause=False, failover_groups=[APP], failover_topics=["m1-.*"], failover_lag_timeout=120,
                         failover_lag_poll_interval=2)
    running = mirrormaker1s(lab)
    preview = lab.play(FAILOVER, check=True, **failover_args)
    assert not preview.failed, preview.stdout[-5000:]
    planned = {(row["topic"], row["partition"]): row for row in preview.task(APPLY_TASK)["offsets"]}
    assert set(planned) == {(ORDERS, p) for p in range(3)} | {(PAYMENTS, p) for p in range(5)}, sorted(planned)
    assert all(row["action"] == "commit" and row["skipped"] == 0 for row in planned.values()), planned
    assert lab.client("secondary", "group", APP)["offsets"] == {}, "check mode committed offsets"
    assert mirrormaker1s(lab) == running, "check mode stopped MirrorMaker 1"

    run = lab.play(FAILOVER, **failover_args)
    assert not run.failed, run.stdout[-5000:]
    assert not mirrormaker1s(lab), "the failover left MirrorMaker 1 running"
    rows = {(row["topic"], row["partition"]): row for row in run.task(APPLY_TASK)["offsets"]}
    committed = lab.client("secondary", "group", APP)["offsets"]
    figures = {topic: target_position_check(lab, rows, committed, consumed[topic], topic) for topic in (ORDERS, PAYMENTS)}
    print("MM1 FAILOVER (target partition: committed offset, records read again):", figures,
          {key: row["partitioning"] for key, row in rows.items() if key[1] == 0})
    assert rows[(ORDERS, 0)]["partitioning"] == "kept" and rows[(PAYMENTS, 0)]["partitioning"] == "by_key"

    # MirrorMaker 1 resumed after the failover (a rehearsal's way back), so that the switch below takes over from a running one.
    resumed = lab.play(MIRROR, tags="mirrormaker2", **dict(MM1, mirrormaker2_resume_after_failover=True))
    assert not resumed.failed, resumed.stdout[-5000:]
    assert mirrormaker1s(lab), "MirrorMaker 1 was not resumed"

    # The switch: new records while MirrorMaker 1 runs, then MirrorMaker 2 (identity) in its place. The role stops MirrorMaker 1
    # first, so that its last commit is final, and starts MirrorMaker 2 there: each new record is copied once, by one of them.
    before = {topic: per_key(lab, topic) for topic in (ORDERS, PAYMENTS, RETURNS)}
    lab.client("primary", "sequenced", ORDERS, 12, 5, 65)
    lab.client("primary", "sequenced", PAYMENTS, 6, 5, 30)
    running = mirrormaker1s(lab)
    check = lab.play(MIRROR, check=True, tags="mirrormaker2", **SWITCH)
    assert not check.failed, check.stdout[-5000:]
    assert not switched_mirrormaker2s(lab) and SWITCH_OFFSETS not in lab.client("secondary", "topics")["topics"], "check mode changed"
    assert mirrormaker1s(lab) == running, "check mode stopped MirrorMaker 1"
    switch = lab.play(MIRROR, tags="mirrormaker2", **SWITCH)
    assert not switch.failed, switch.stdout[-5000:]
    assert switched_mirrormaker2s(lab), "MirrorMaker 2 does not run after the switch"
    assert not mirrormaker1s(lab), "MirrorMaker 1 still runs beside MirrorMaker 2"
    # MirrorMaker 1's commits at its stop: MirrorMaker 2 starts each partition there.
    stopped_at = lab.client("primary", "group", GROUP)["offsets"]
    seeded = switch.task(HANDOVER)
    assert seeded["starts_at"] == {key: offset for key, offset in stopped_at.items() if offset > 0}, (seeded, stopped_at)
    # MirrorMaker 2 copies each source partition in order from where it starts: once the new records are there, so is
    # whatever it copied again before them.
    new = {ORDERS: Counter({f"k{k}": 5 for k in range(12)}), PAYMENTS: Counter({f"k{k}": 5 for k in range(6)}), RETURNS: Counter()}
    deadline = time.monotonic() + 120
    while any(per_key(lab, topic) - before[topic] - new[topic] != Counter() or new[topic] - (per_key(lab, topic) - before[topic])
              != Counter() for topic in (ORDERS, PAYMENTS)) and time.monotonic() < deadline:
        time.sleep(3)
    after = {topic: per_key(lab, topic) for topic in new}
    recopied = {topic: sum(after[topic].values()) - sum(before[topic].values()) - sum(new[topic].values()) for topic in new}
    print("SWITCH FROM A RUNNING MIRRORMAKER 1 TO MIRRORMAKER 2: records copied again per topic", recopied,
          f"({time.monotonic() - started:.0f} s for this test)")
    assert recopied == {ORDERS: 0, PAYMENTS: 0, RETURNS: 0}, recopied
    assert all(after[topic] - before[topic] == new[topic] for topic in new), {t: after[t] - before[t] for t in new}

    again = lab.play(MIRROR, tags="mirrormaker2", **SWITCH)
    assert not again.failed and again.changed_count == 0, again.stdout[-3000:]


def test_mirrormaker_removed(lab):
    gone = lab.play(MIRROR, tags="mirrormaker2", mirrormaker2_state="absent", **SWITCH)
    assert not gone.failed and gone.changed_count > 0, gone.stdout[-3000:]
    assert not mirrormaker1s(lab) and not switched_mirrormaker2s(lab), "MirrorMaker still runs after state absent"
    root = config_dir(lab)
    assert not root.exists() or not any(path.is_file() for path in root.rglob("*")), sorted(root.rglob("*"))
