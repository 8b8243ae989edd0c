# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The newest 4.x end to end, as a user runs it: primary Apache Kafka 3.9.2, secondary 4.3.1 (KRaft both), MirrorMaker 2 of
4.3.1 on the secondary's wn0, on a real-Kafka lab of this module's own (third octets SUBNET and SUBNET + 1 of the worker's
net; SSH nodes as strict as HDInsight's). One broker per cluster: nothing here needs replication (tests/integration/real_kafka/
test_real_kafka.py has it, on three), and three KRaft nodes per cluster cost the run about a quarter of a core while they lived.

1. mirror.yml: the remote topic's records and replication factor read back independently; the MirrorMaker that runs is
   Apache's 4.3.1 (its JVM found in /proc by its main class, the Kafka home it runs from seen through its own root), it
   logs through the log4j2.yaml the role renders for 4.x (its log file fills), and its properties carry no *.blacklist key
   (removed in 4.0).
2. failover.yml, check mode then for real: check mode commits nothing; the real run stops MirrorMaker and commits the
   group on the target at offsets that never skip a record it had not consumed.
3. KIP-1074 (4.0): MirrorMaker 2 4.x replicates a user topic named `*.internal`; every earlier release skips it. Real
   4.3.1 is checked here, and mirror_validation's report covers that topic: the collection's internal-topic rule and default
   topics.exclude follow the release that runs MirrorMaker (plugins/module_utils/_mm2/naming.py and selection.py, vendored
   into the job), and kafka_topics pre-creates its remote topic as it does any other.
4. Failing back (README, "Failing back"): after the failover, records produced on the secondary are mirrored back by
   mirror.yml with the inventory's two cluster groups swapped and MirrorMaker 2 on the primary's wn0, whose Kafka home is
   3.9.2: the role deploys and runs real MirrorMaker 2 of the last 3.x (log4j 1) there.
5. Last, MirrorMaker resumed after the failover with a 1 MB log size and two old files: its log4j2 log rolls at that size
   and keeps no third one.

Every check reads state with clients of its own: tests/support/read_back.py under a node's python (the lab's FQDNs
resolve only inside its nodes, as on HDInsight), /proc for the MirrorMaker JVM, the node's files for its log.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml

from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO
from tests.support.real_lab import MM2_PROPERTIES as PROPERTIES
from tests.support.real_lab import MM2_APP_LOG as APP_LOG
from tests.support.real_lab import RealLab, mirror_plan, mirrormaker_jvms, node_java8, watch_log_rollovers
from tests.support.sandbox_fixture import running_sandbox

pytestmark = [pytest.mark.integration, pytest.mark.spark,
              pytest.mark.skipif(os.geteuid() != 0, reason="the lab's nodes are SSH hosts (root)")]

SUBNET = 48  # a lab of its own on the worker's net, third octets 48 and 49: no other test file uses them
RELEASES = {"primary": "3.9.2", "secondary": "4.3.1"}
MIRROR, FAILOVER = REPO / "playbooks" / "mirror.yml", REPO / "playbooks" / "failover.yml"
ORDERS, PARTITIONS, PER_PARTITION = "nr-orders", 3, 300
OPS = "nr-ops.internal"  # KIP-1074: replicated by 4.x only
GROUP, CONSUMED = "nr-app", {0: 120, 1: 0, 2: 299}
BACK, BACK_PER_PARTITION = "nr-back", 100  # produced on the secondary after the failover, mirrored back to the primary
PLAN = mirror_plan("nr", health_timeout=480)
VALIDATION_REPORT = "kafkaops.mirror.mirror_validation : Keep the report as a fact"
PRE_CREATE_TASK = "kafkaops.mirror.kafka_topics : Align the target cluster's topics in one batched call"
APPLY_TASK = "kafkaops.mirror.failover : Translate the groups' offsets and commit them on the target"


@pytest.fixture(scope="module")
def lab(tmp_path_factory, sandbox_net, mirror_host_ready):
    with running_sandbox(tmp_path_factory.mktemp("newest-release-lab"), f"the newest-release lab (apache {RELEASES}, net {sandbox_net}, subnet {SUBNET})",
                         down_timeout=120, provider="apache", net=sandbox_net, subnet=SUBNET, releases=RELEASES, brokers=1, timeout=600,
                         mirrormaker_java8=node_java8()) as state:
        assert state["kafka_version"] == "4.3.1", state["kafka_version"]  # MirrorMaker's home is the secondary's release
        lab = RealLab(state, PLAN)
        mirror_host_ready(state)
        lab.client("primary", "create", ORDERS, PARTITIONS, 1)
        lab.produce_keyed(ORDERS, PARTITIONS, PER_PARTITION)
        lab.client("primary", "create", OPS, 1, 1)
        lab.produce_keyed(OPS, 1, 20)
        for partition, offset in CONSUMED.items():
            lab.client("primary", "commit", GROUP, ORDERS, partition, offset)
        yield lab


def failure(play) -> str:
    """The failed tasks' names and messages, then the end of the output (the whole output is in the play's log file)."""
    failed = [f"{t['task']} on {t['host']}: {str(t['result'].get('msg', ''))[:1500]}" for t in play.tasks
              if t["result"].get("failed") and not t["result"].get("ignore_errors")]
    return "\n".join(failed) + "\n...\n" + play.stdout[-3000:]


@pytest.fixture(scope="module")
def mirrored(lab, tmp_path_factory):
    """mirror.yml once for the module; every test below reads what it left."""
    started = time.monotonic()
    play = lab.play(MIRROR)
    log = tmp_path_factory.mktemp("newest-release-plays") / "mirror.log"
    log.write_text(play.stdout + play.stderr)
    print(f"\nmirror.yml on 3.9.2 -> 4.3.1: {round(time.monotonic() - started, 1)} s (output: {log})")
    return play


def test_mirror_playbook_on_the_newest_release(lab, mirrored):
    assert not mirrored.failed, failure(mirrored)
    report = mirrored.task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    assert report["passed"], report

    lab.assert_copied_whole(f"primary.{ORDERS}", PARTITIONS, PER_PARTITION)

    # The JVM that runs is Apache's MirrorMaker 2 from the node's 4.3.1 home, logging through the role's log4j2.yaml.
    running = lab.mirrormakers()
    assert len(running) == 1, running
    pid, argv = running[0]
    jars = {p.name for p in Path(f"/proc/{pid}/root/usr/hdp/current/kafka-broker/libs").glob("kafka-clients-*.jar")}
    assert jars == {"kafka-clients-4.3.1.jar"}, jars
    assert "-Dlog4j2.configurationFile=/etc/kafka-mirrormaker2/log4j2.yaml" in argv, argv
    log = (lab.mirrormaker_node_root() / str(APP_LOG).lstrip("/")).read_text(errors="replace")
    assert "Kafka version: 4.3.1" in log and "MirrorSourceConnector" in log, log[-2000:]
    properties = (lab.mirrormaker_node_root() / str(PROPERTIES).lstrip("/")).read_text()
    assert "blacklist" not in properties and "primary->secondary.enabled=true" in properties, properties


def test_real_4x_mirrormaker_replicates_a_user_internal_topic(lab, mirrored):
    """KIP-1074: 4.x replicates `nr-ops.internal` (the records arrive, read independently)."""
    assert not mirrored.failed, failure(mirrored)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        keys = lab.client("secondary", "keys", f"primary.{OPS}")["keys"] if f"primary.{OPS}" in lab.client("secondary", "topics")["topics"] else {}
        if sorted(keys.get("0", [])) == sorted(f"p0-{i}" for i in range(20)):
            break
        time.sleep(5)
    assert sorted(keys.get("0", [])) == sorted(f"p0-{i}" for i in range(20)), keys


def test_kafka_topics_pre_creates_the_user_internal_topic_for_4x(lab, mirrored):
    """KIP-1074: the remote topic of `nr-ops.internal` is created by kafka_topics (before MirrorMaker starts), with the
    source's shape, read back independently."""
    assert not mirrored.failed, failure(mirrored)
    assert f"primary.{OPS}" in mirrored.task(PRE_CREATE_TASK).get("created", []), mirrored.task(PRE_CREATE_TASK)
    assert lab.client("secondary", "topics")["topics"][f"primary.{OPS}"] == {"partitions": 1, "replication_factor": 1}


def test_validation_covers_the_user_internal_topic_4x_replicates(lab, mirrored):
    """KIP-1074: the validation compares `nr-ops.internal`, which MirrorMaker 2 of 4.3.1 replicates."""
    assert not mirrored.failed, failure(mirrored)
    report = mirrored.task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    assert OPS in {t["source_topic"] for t in report["topics"]}, [t["source_topic"] for t in report["topics"]]


def test_java_8_cannot_run_mirrormaker_4x_and_nothing_changes(lab, mirrored):
    """Kafka 4.0 runs Connect, and so MirrorMaker 2, on Java 17 only (KIP-1013). mirrormaker2_java_home at the node's Java 8
    (HDInsight 5.x's) is refused before anything changes: the running MirrorMaker and its properties stay as they were."""
    assert not mirrored.failed, failure(mirrored)
    java8 = lab.state.get("mirrormaker_java_home")
    if not java8:
        pytest.skip("no Java 8 for the lab's MirrorMaker node: tests/support/oldest_runtime.py could not obtain one")
    running = lab.mirrormakers()
    properties = lab.mirrormaker_node_root() / str(PROPERTIES).lstrip("/")
    before = properties.read_text()
    play = lab.play(MIRROR, tags="mirrormaker2", mirrormaker2_java_home=java8)
    failed = [t for t in play.tasks if t["result"].get("failed")]
    assert len(failed) == 1 and failed[0]["task"].startswith("kafkaops.mirror.mirrormaker2 : Fail when this Java cannot run"), failure(play)
    message = failed[0]["result"]["msg"]
    assert "MirrorMaker of Kafka 4.3.1 needs Java 17 or later" in message and f"mirrormaker2_java_home {java8} is Java 8" in message, message
    assert "Nothing was changed" in message, message
    assert play.changed_count == 0 and lab.mirrormakers() == running and properties.read_text() == before


def test_failover_check_then_real_on_the_newest_release(lab, mirrored):
    assert not mirrored.failed, failure(mirrored)
    options = {"failover_pause": False, "failover_groups": ["nr-.*"], "failover_topics": ["nr-.*"], "failover_verify_window": PER_PARTITION,
               "failover_lag_timeout": 120, "failover_lag_poll_interval": 1}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # checkpoints every 5 s once MirrorMaker saw the group
        preview = lab.play(FAILOVER, check=True, **options)
        assert not preview.failed, failure(preview)
        if {row["partition"] for row in preview.task(APPLY_TASK).get("offsets", []) if row["group"] == GROUP} == set(CONSUMED):
            break
        time.sleep(5)
    assert lab.client("secondary", "group", GROUP)["offsets"] == {}, "check mode committed offsets"
    assert len(lab.mirrormakers()) == 1, "check mode stopped MirrorMaker"

    run = lab.play(FAILOVER, **options)
    assert not run.failed, failure(run)
    assert lab.mirrormakers() == [], "MirrorMaker still runs after the failover"
    committed = lab.client("secondary", "group", GROUP)["offsets"]
    keys = lab.client("secondary", "keys", f"primary.{ORDERS}")["keys"]
    for partition, consumed in CONSUMED.items():
        offset = committed[f"primary.{ORDERS}:{partition}"]
        # Nothing skipped, and nothing read again: the exact position is the copy of the group's next record.
        unread = keys[str(partition)][offset:]
        assert {f"p{partition}-{i}" for i in range(consumed, PER_PARTITION)} <= set(unread), (partition, offset)
        assert consumed == PER_PARTITION or unread[0] == f"p{partition}-{consumed}", (partition, offset, unread[:3])


def failback_inventory(lab: RealLab, path: Path) -> Path:
    """The lab's inventory as the README's fail-back has it: the two clusters' groups swapped (the group names fix the
    direction), and the `mirrormaker` group on the primary's wn0, with the lab's MirrorMaker host settings."""
    inventory = yaml.safe_load(lab.inventory.read_text())
    groups = inventory["all"]["children"]
    groups["primary_kafka"], groups["secondary_kafka"] = groups["secondary_kafka"], groups["primary_kafka"]
    groups["mirrormaker"]["hosts"] = {lab.node("primary", 0)["name"]: {}}
    path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    return path


def test_failing_back_runs_mirrormaker_3_9_on_the_old_primary(lab, mirrored, tmp_path):
    """After the failover, the secondary takes the writes; mirror.yml with the groups swapped mirrors them back to the primary,
    MirrorMaker 2 running on the primary's wn0 from its 3.9.2 home (the role's only deployment of the last 3.x). Read back
    independently: every record on the primary, the JVM in that node's mount namespace with the 3.9.2 jars, its log4j 1 log;
    then mirrormaker2_state absent removes the reverse mirror."""
    assert not mirrored.failed, failure(mirrored)
    lab.client("secondary", "create", BACK, PARTITIONS, 1)
    lab.client("secondary", "keyed", BACK, PARTITIONS, BACK_PER_PARTITION)
    flow = dict(PLAN["mirrormaker2_flows"][0], source="secondary", target="primary")
    started = time.monotonic()
    inventory, plan = failback_inventory(lab, tmp_path / "failback.yml"), {**lab.plan, "mirrormaker2_flows": [flow]}
    play = run_playbook(MIRROR, inventory=inventory, skip_tags="mirror_validation", diff=True, timeout=1200, extra_vars=plan)
    print(f"\nmirror.yml back from 4.3.1 to 3.9.2: {round(time.monotonic() - started, 1)} s")
    assert not play.failed, failure(play)

    keys = lab.client("primary", "keys", f"secondary.{BACK}", node=2)["keys"]
    for partition in range(PARTITIONS):
        assert sorted(set(keys[str(partition)])) == sorted(f"p{partition}-{i}" for i in range(BACK_PER_PARTITION)), partition
    wn0 = lab.node("primary", 0)
    [pid] = mirrormaker_jvms(wn0)
    jars = {p.name for p in Path(f"/proc/{pid}/root/usr/hdp/current/kafka-broker/libs").glob("kafka-clients-*.jar")}
    assert jars == {"kafka-clients-3.9.2.jar"}, jars
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    assert "-Dlog4j.configuration=file:/etc/kafka-mirrormaker2/log4j.properties" in argv, argv
    log = (Path(wn0["upper"]) / str(APP_LOG).lstrip("/")).read_text(errors="replace")
    assert "Kafka version: 3.9.2" in log and "MirrorSourceConnector" in log, log[-2000:]
    properties = (Path(wn0["upper"]) / str(PROPERTIES).lstrip("/")).read_text()
    assert "secondary->primary.enabled=true" in properties and "primary->secondary.enabled" not in properties, properties

    # Failed back: the reverse mirror goes (the forward one resumes in the next test), and its JVM with it.
    removed = run_playbook(MIRROR, inventory=inventory, tags="mirrormaker2", timeout=600, extra_vars={**plan, "mirrormaker2_state": "absent"})
    assert not removed.failed, failure(removed)
    assert mirrormaker_jvms(wn0) == [] and not (Path(wn0["upper"]) / str(PROPERTIES).lstrip("/")).exists()


def test_mirrormaker_log_rolls_at_its_size_and_keeps_its_count(lab, mirrored):
    """Issue 27 item 8 on log4j2 (4.x), last on this lab (MirrorMaker resumes after the failover above, and the lab ends
    here): with mirrormaker2_log_max_file_size_mb 1 and mirrormaker2_log_max_files 1 (DEBUG, to fill it within seconds), real
    MirrorMaker's log rolls at 1 MB into mirrormaker.log.1 twice and never keeps a second old file, read on the node's files.
    (One old file, not two: the second rollover is the one that must drop a file, and each MB of DEBUG takes about a minute
    here.)"""
    assert not mirrored.failed, failure(mirrored)
    small = lab.play(MIRROR, tags="mirrormaker2", mirrormaker2_resume_after_failover=True, mirrormaker2_log_level="DEBUG",
                     mirrormaker2_log_max_file_size_mb=1, mirrormaker2_log_max_files=1)
    assert not small.failed, failure(small)
    assert len(lab.mirrormakers()) == 1
    kept = watch_log_rollovers(lab.mirrormaker_node_root() / str(APP_LOG).lstrip("/"), rollovers=2, max_bytes=1 << 20, kept=1, timeout=300)
    assert kept == ["mirrormaker.log.1"], kept
