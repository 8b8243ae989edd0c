# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failover end to end on the noida sandbox: the mirrormaker2 role deploys MirrorMaker 2 (the sandbox stand-in, same
properties, real record formats) with sync.group.offsets off, as on Kafka 2.4; a group consumes part of a topic on the
primary and commits; after a checkpoint interval the failover playbook moves it; the same group resumes on the secondary.
Counts come from an independent consumer.

Before that, on the same MirrorMaker, a crash and re-copy (issue 17): MirrorMaker is killed with -9 in the middle of a
burst, supervisord starts it again and it copies again what it copied since its last source-offset commit; a group
positioned inside that re-copied range is failed over (preview in check mode, then for real) and the topic validated.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ReplicationPolicy
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint
from sandbox import nodes
from tests.support.ansible_play import run_playbook
from tests.support import mm2_kafka_io as kafka_io
from tests.support.checkout import REPO
from tests.support.mirror_fixture import NOIDA_API, RECEIVE_MAX, ensure_topic, indexed_producer, produce_indexed, resume_and_count, send_indexed

pytestmark = pytest.mark.integration

SOURCE, TARGET = "primary", "secondary"
TOPIC = "fo2-orders"
PER_PARTITION = 150
CONSUMED = {0: 93, 1: 41}
OFFSET_LAG_MAX = 10
PROGRAM = "kafka-mirrormaker2"
DEPLOY = Path(__file__).resolve().parent / "deploy_mm2.yml"
ROLE_DEFAULTS = yaml.safe_load((REPO / "roles" / "mirrormaker2" / "defaults" / "main.yml").read_text())
# The virtualenv the deploy's mirror_host play made on the MirrorMaker host: the crash scenario's failover runs use it directly
# (--skip-tags mirror_host: they need no Java), as mirror.yml's later plays do after its first.
HOST_PYTHON = yaml.safe_load((REPO / "roles" / "mirror_host" / "defaults" / "main.yml").read_text())["mirror_host_venv"] + "/bin/python"
APPLY_TASK = "kafkaops.mirror.failover : Translate the groups' offsets and commit them on the target"
VALIDATION_REPORT = "kafkaops.mirror.mirror_validation : Keep the report as a fact"
DRIFT_TASK = "kafkaops.mirror.mirror_validation : Compare the remote topics' settings with their source topics"


# The crash and re-copy scenario's topic and group (a flow pattern of their own: the other test's failover leaves them alone).
RECOPY_TOPIC, RECOPY_GROUP = "fo3-orders", "fo3-app"
RECOPY_PRE, RECOPY_BURST = 100, 300  # records per partition before the burst (committed by MirrorMaker), and in the burst
# Connect's offset.flush.interval.ms (a worker setting, MirrorMakerConfig.workerConfig scoped by the target alias): the kill
# comes a few seconds after a commit, so what was copied since then is copied again.
FLUSH_INTERVAL_MS = 15000


def mm2_vars():
    return {
        "mirrormaker2_offset_lag_max": OFFSET_LAG_MAX,
        "mirrormaker2_max_lag": 0,
        "mirrormaker2_health_timeout": 120,
        "mirrormaker2_health_poll_interval": 2,
        "mirrormaker2_flows": [{"source": SOURCE, "target": TARGET, "topics": ["fo2-.*", "fo3-.*"], "groups": ["fo2-.*", "fo3-.*"],
                                "refresh_topics_interval_seconds": 2, "refresh_groups_interval_seconds": 2,
                                "emit_checkpoints_interval_seconds": 2, "sync_group_offsets": False}],
        "mirrormaker2_properties": {f"{TARGET}.offset.flush.interval.ms": FLUSH_INTERVAL_MS},
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


def indexes_in(bootstrap, topic):
    """{partition: [index of each record, in offset order]} of the whole topic, read with an independent consumer."""
    return {partition: [int(record[0].decode().rsplit("-", 1)[1]) for record in records]
            for partition, records in kafka_io.read_all(bootstrap, topic).items()}


def committed_source_offsets(target_bootstrap, topic):
    """{partition: last source offset of `topic` whose copy MirrorMaker committed}, read from Connect's offsets topic on the
    target (dedicated MirrorMaker's offset.storage.topic `mm2-offsets.<source>.internal`, JsonConverter key
    ["MirrorSourceConnector", {"cluster", "partition", "topic"}] and value {"offset": n})."""
    found = {}
    for records in kafka_io.read_all(target_bootstrap, f"mm2-offsets.{SOURCE}.internal").values():
        for key, value, _headers, _timestamp in records:
            connector, source_partition = json.loads(key)
            if connector == "MirrorSourceConnector" and source_partition.get("topic") == topic and value:
                found[source_partition["partition"]] = json.loads(value)["offset"]
    return found


def mirrormaker_pid(deployed):
    """MirrorMaker's PID while supervisord (inside the MirrorMaker node) has it RUNNING, else None."""
    status = subprocess.run(deployed["supervisorctl"] + ["status", PROGRAM], capture_output=True, text=True, check=False).stdout.split()
    return int(status[3].rstrip(",")) if len(status) > 3 and status[1] == "RUNNING" else None


class Burst(threading.Thread):
    """RECOPY_BURST records per partition in steps of 10 every 0.2 s, so that MirrorMaker copies while they are produced."""

    def __init__(self, bootstrap):
        super().__init__(daemon=True)
        self.bootstrap, self.produced, self.error = bootstrap, 0, None

    def run(self):
        try:
            producer = indexed_producer(self.bootstrap)
            for start in range(RECOPY_PRE, RECOPY_PRE + RECOPY_BURST, 10):
                send_indexed(producer, RECOPY_TOPIC, range(start, start + 10))
                self.produced = start + 10 - RECOPY_PRE
                time.sleep(0.2)
            producer.close()
        except Exception as error:  # pylint: disable=broad-except  # reported by the test
            self.error = error


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
    ensure_topic(primary, RECOPY_TOPIC, 2)
    produce_indexed(primary, RECOPY_TOPIC, range(RECOPY_PRE))
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
    # A session that failed this flow over before (another test file on the same sandbox) must not hold it stopped.
    play = run_playbook(DEPLOY, inventory=inventory, extra_vars=dict(mm2_vars(), mirrormaker2_resume_after_failover=True), timeout=600)
    try:
        assert not play.failed, play.stdout[-4000:]
        yield dict(state=sandbox, inventory=inventory, supervisorctl=supervisorctl, on_node=on_node)
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


def _all_at(expected):
    """A wait_for predicate over {partition: value}: the mapping when every partition has its expected value, else None."""
    return lambda found: found if all(found.get(partition) == value for partition, value in expected.items()) else None


def test_crash_and_recopy_then_failover_and_validation(deployed, tmp_path):
    """kill -9 of MirrorMaker (3.9 stand-in) mid-burst; a group positioned inside the re-copied range fails over with the
    records re-read that the preview announced and none skipped; the validation finds no loss and exactly the re-copies."""
    state = deployed["state"]
    primary, secondary = (state["clusters"][alias]["bootstrap_servers"] for alias in (SOURCE, TARGET))
    remote = f"{SOURCE}.{RECOPY_TOPIC}"
    partitions, total = (0, 1), RECOPY_PRE + RECOPY_BURST
    figures, seconds, clock = {}, {}, [time.monotonic()]

    def lap(step):
        seconds[step] = round(time.monotonic() - clock[0], 1)
        clock[0] = time.monotonic()

    # MirrorMaker copied the records before the burst and committed them: what the crash copies again starts after them.
    flush_s = FLUSH_INTERVAL_MS / 1000.0
    before = kafka_io.wait_for(lambda: _all_at({p: RECOPY_PRE - 1 for p in partitions})(committed_source_offsets(secondary, RECOPY_TOPIC)),
                               3 * flush_s + 30)
    assert before, f"MirrorMaker never committed the first {RECOPY_PRE} records: {committed_source_offsets(secondary, RECOPY_TOPIC)}"
    pid = mirrormaker_pid(deployed)
    assert pid, "MirrorMaker is not running"
    burst = Burst(primary)
    burst.start()
    copying = kafka_io.wait_for(lambda: all(end >= RECOPY_PRE + 40 for end in kafka_io.end_offsets(secondary, remote).values()), 60, 0.1)
    assert copying, "MirrorMaker copied nothing of the burst"
    figures["burst_produced_at_kill"] = burst.produced
    subprocess.run(deployed["on_node"] + ["kill", "-9", str(pid)], check=True)
    burst.join(120)
    assert burst.error is None and burst.produced == RECOPY_BURST, burst.error
    assert 0 < figures["burst_produced_at_kill"] < RECOPY_BURST, "the kill did not come in the middle of the burst"
    restarted = kafka_io.wait_for(lambda: (mirrormaker_pid(deployed) or pid) != pid, 90, 1)
    assert restarted, "supervisord did not start MirrorMaker again"
    lap("commit, burst, kill -9, restart")

    # Caught up: every source record is on the target and MirrorMaker committed the end (3.7+ sends delayed syncs with it).
    assert kafka_io.wait_for(lambda: _all_at({p: total - 1 for p in partitions})(committed_source_offsets(secondary, RECOPY_TOPIC)),
                             3 * flush_s + 60), "MirrorMaker did not catch up after its restart"
    assert indexes_in(primary, RECOPY_TOPIC) == {p: list(range(total)) for p in partitions}  # each key's index is its offset
    copies = indexes_in(secondary, remote)
    recopied = {p: sorted({index for index in copies[p] if copies[p].count(index) > 1}) for p in partitions}
    figures["re_copied"] = {p: len(copies[p]) - len(set(copies[p])) for p in partitions}
    figures["re_copied_range"] = {p: [recopied[p][0], recopied[p][-1]] if recopied[p] else None for p in partitions}
    for p in partitions:
        assert set(copies[p]) == set(range(total)), f"partition {p} lost records in the crash"
        # Resumed after the last commit (RECOPY_PRE - 1): one contiguous range copied twice.
        assert recopied[p] and recopied[p] == list(range(RECOPY_PRE, recopied[p][-1] + 1)), (p, figures)
        assert figures["re_copied"][p] == len(recopied[p]), (p, figures)

    # A group whose position on the source is inside the re-copied range, checkpointed by MirrorMaker.
    position = {p: (recopied[p][0] + recopied[p][-1] + 1) // 2 for p in partitions}
    figures["group_position"] = position
    kafka_io.commit(primary, RECOPY_GROUP, RECOPY_TOPIC, position)
    checkpoints = kafka_io.wait_for(lambda: _all_at(position)({p: c.upstream_offset for p, c in checkpoints_for(secondary, RECOPY_GROUP).items()}),
                                    60, 1)
    assert checkpoints, f"MirrorMaker wrote no checkpoints for {RECOPY_GROUP} at {position}"
    lap("catch-up, group commit, checkpoints")

    # MirrorMaker keeps running after this failover (failover_stop_mirrormaker false): the module's next test fails the
    # other group over with it; the burst is over and copied, so checkpoints and syncs no longer move.
    extra = dict(failover_pause=False, failover_groups=["fo3-.*"], failover_topics=["fo3-.*"], failover_verify_window=2 * total,
                 failover_lag_timeout=60, failover_lag_poll_interval=1, failover_stop_mirrormaker=False, ansible_python_interpreter=HOST_PYTHON,
                 **mm2_vars())
    failover = REPO / "playbooks" / "failover.yml"
    check = run_playbook(failover, inventory=deployed["inventory"], extra_vars=extra, check=True, skip_tags="mirror_host")
    assert not check.failed, check.stdout[-4000:]
    preview = {row["partition"]: row for row in check.task(APPLY_TASK)["offsets"] if row["group"] == RECOPY_GROUP}
    figures["preview_check_mode"] = {p: dict(row["preview"], exact_offset_committed=row["exact_offset"], re_read_committed=row["re_read"])
                                     for p, row in preview.items()}
    lap("failover preview (check mode)")

    # The validation job through the role, as mirror.yml runs it on the MirrorMaker host (release detected in its Kafka home).
    playbook = tmp_path / "validate.yml"
    # mirror_host first: it finds the Java that Spark runs on (mirror_host_java_home).
    playbook.write_text(yaml.safe_dump([{"name": "MirrorMaker host", "hosts": "mirrormaker", "gather_facts": False,
                                         "roles": ["kafkaops.mirror.mirror_host"]},
                                        {"name": "Validate", "hosts": "mirrormaker", "gather_facts": False,
                                         "roles": ["kafkaops.mirror.mirror_validation"]}]))
    validation = run_playbook(playbook, inventory=deployed["inventory"], timeout=900, extra_vars=dict(
        mm2_vars(), mirror_validation_topics="fo3-.*", mirror_validation_max_duplicate_ratio=1.0, mirror_validation_catch_up_timeout=60,
        mirror_validation_receive_max_bytes=200 * 1024 * 1024, mirror_validation_report_dir=str(tmp_path / "reports")))
    assert not validation.failed, validation.stdout[-4000:]
    lap("validation")
    report = validation.task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    (entry,) = [topic for topic in report["topics"] if topic["source_topic"] == RECOPY_TOPIC]
    figures["validation"] = {row["partition"]: {"missing": row["missing"], "duplicates": row["duplicates"]} for row in entry["partitions"]}
    figures["validation_checks"] = report["checks"]
    drift = validation.task(DRIFT_TASK)
    figures["drift_check_release"] = drift.get("invocation", {}).get("module_args", {}).get("mirrormaker_version")
    figures["validation_checkpoints"] = {row["partition"]: {key: row[key] for key in ("upstream_offset", "downstream_offset", "ok", "copied_again")}
                                         for row in report["groups"] if row["group"] == RECOPY_GROUP}

    run = run_playbook(failover, inventory=deployed["inventory"], extra_vars=extra, diff=True, skip_tags="mirror_host")
    assert not run.failed, run.stdout[-4000:]
    result = run.task(APPLY_TASK)
    assert result["changed"] and set(result["committed"]) == {RECOPY_GROUP}
    applied = {row["partition"]: row for row in result["offsets"] if row["group"] == RECOPY_GROUP}
    figures["preview_failover"] = {p: dict(row["preview"], exact_offset_committed=row["exact_offset"], re_read_committed=row["re_read"])
                                   for p, row in applied.items()}
    lap("failover")
    figures["consumer"] = resume_and_count(secondary, remote, RECOPY_GROUP, position, total)
    lap("independent consumer on the target")
    figures["seconds"] = seconds
    print("CRASH AND RE-COPY FIGURES", json.dumps(figures, sort_keys=True))

    assert entry["status"] == "passed" and entry["totals"]["missing"] == 0, entry["totals"]
    # The release detected in the Kafka home reached the job and the topic settings check.
    assert report["mirrormaker_version"] == "3.9" and figures["drift_check_release"] == "3.9", figures
    assert "Kafka 3.9" in report["checks"]["naming"] and report["checks"]["offset_syncs"].startswith("checked"), report["checks"]
    for p in partitions:
        assert figures["validation"][p] == {"missing": 0, "duplicates": figures["re_copied"][p]}, (p, figures)
        # The checkpoint points into the second copy (after the first copies of the group's next records): no violation.
        checkpoint = figures["validation_checkpoints"][p]
        assert checkpoint["upstream_offset"] == position[p] and checkpoint["ok"], (p, figures)
        consumer = figures["consumer"][p]
        assert consumer["lost"] == 0 and preview[p]["skipped"] == 0 and applied[p]["skipped"] == 0, (p, figures)
        assert preview[p]["preview"]["complete"] and applied[p]["preview"]["complete"], (p, figures)
        # The group sits inside the re-copied range: MirrorMaker's checkpoint points into the second copy, and the exact
        # position is the second copy of its next record (its first copies are copied again after it): nothing read again.
        assert applied[p]["exact_offset"] is not None and applied[p]["commit_offset"] == applied[p]["exact_offset"], (p, figures)
        assert consumer["re_read"] == preview[p]["re_read"] == applied[p]["re_read"] == 0, (p, figures)


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
    rows = {row["partition"]: row for row in result["offsets"]}
    preview = {partition: row["preview"] for partition, row in rows.items()}
    print("FAILOVER FIGURES (mirrormaker2 role)", json.dumps({"consumer": figures, "module_preview": preview,
                                                             "re_read_committed": {p: row["re_read"] for p, row in rows.items()}}))
    # No bound by offset.lag.max: MirrorSourceTask (3.5+) sends at most 10 offset syncs in flight and keeps only the latest
    # pending one per partition (firePendingOffsetSyncs), so a burst copied at once leaves few syncs, and a checkpoint
    # written while the copy was behind the group holds an early sync's d + 1. The preview says how many are re-read.
    for partition, figure in figures.items():
        assert figure["lost"] == 0 and preview[partition]["skipped"] == 0, (figure, preview[partition])
        assert preview[partition]["complete"], preview[partition]
        # What MirrorMaker's translation would have re-read is in the preview; the exact position committed reads nothing again.
        assert rows[partition]["exact_offset"] == rows[partition]["commit_offset"] and rows[partition]["re_read"] == 0, rows[partition]
        assert figure["re_read"] == 0, (figure, preview[partition])
