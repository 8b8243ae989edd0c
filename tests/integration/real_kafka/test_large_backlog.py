# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A first deployment in front of a backlog the health wait cannot clear in its window (issue 27 item 6), on the single-broker
real-Kafka lab (tests/integration/conftest.py sandbox_apache_single: primary 2.4.1, secondary 3.2.0, one broker each,
MirrorMaker 2 of 3.2.0): a backlog needs no replication.

The backlog cannot clear for a reason a real target can have: a Kafka client quota. The secondary's default client
producer_byte_rate (set and removed with the 3.2.0 home's own kafka.admin.ConfigCommand) holds MirrorMaker's writes to
a few KB/s per broker, so copying a few MB of records takes minutes while the health wait has well under one.

1. mirror.yml passes: the health wait calls the flow replicating and catching up (records copied, lag falling, an
   estimate of when it is done), the play keeps that as mirrormaker2_catching_up, and the validation play skips the flow
   with its message instead of running the job. Read back independently: the remote topic's end offsets on the target
   are below the source's, and grow between two reads (copying, not stuck).
2. The quota removed, `mirror.yml --tags mirror_validation` on its own, later, in incremental mode (issue 31 item 4): a
   first run has no state and checks in full; the report passes with nothing missing, and an independent client finds every
   source key on the target.
3. A day's appends (APPENDED records per partition) copied by MirrorMaker, the next incremental run checks only them: it
   resumes every partition from the offsets the first run validated and ends where an independent client reads the logs'
   ends.

The quota is removed in any case (fixture teardown, read back), so the lab's next test file writes at full speed.
"""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from tests.support.checkout import REPO
from tests.support.real_lab import RealLab

pytestmark = [pytest.mark.integration, pytest.mark.spark,
              pytest.mark.skipif(os.geteuid() != 0, reason="the lab's nodes are SSH hosts (root)")]

MIRROR = REPO / "playbooks" / "mirror.yml"
BACKLOG, PARTITIONS, PER_PARTITION, VALUE_BYTES = "bk-orders", 3, 3000, 300
REMOTE = f"primary.{BACKLOG}"
FLOW_NAME = "primary->secondary"
# Per client id and broker: MirrorMaker's source task writes ~3 MB through one producer to the one broker, so about
# 4 KB/s in all: minutes for the backlog, while its records visibly move within the wait.
QUOTA_BYTES_PER_S = 4096
HEALTH_TIMEOUT = 60  # MirrorMaker's start on a busy 2-core machine took up to 25 s of it; 45 s left too few reads once
FLOW = {"source": "primary", "target": "secondary", "topics": ["bk-.*"], "groups": ["bk-.*"], "refresh_topics_interval_seconds": 10}
PLAN = {"mirrormaker2_flows": [FLOW], "mirrormaker2_health_timeout": HEALTH_TIMEOUT, "mirrormaker2_health_poll_interval": 3,
        # The lab's 2 cores: MirrorMaker's heap as small as its work allows (HDInsight's head nodes have GBs).
        "mirrormaker2_heap_opts": "-Xms128m -Xmx384m",
        "mirror_topics": "bk-.*", "mirror_validation_topics": "bk-.*", "mirror_validation_catch_up_timeout": 120}
HEALTH_WAIT = "kafkaops.mirror.mirrormaker2 : Wait for heartbeats, offset syncs and lag <= 1000"
CATCHING_UP_FACT = "kafkaops.mirror.mirrormaker2 : Note the flows that are still catching up"
SAY_CATCHING_UP = "kafkaops.mirror.mirrormaker2 : Say which flows are replicating and catching up, and when they will have caught up"
SKIP_CATCHING_UP = "Skip the validation of a flow that is still catching up"
VALIDATION_REPORT = "kafkaops.mirror.mirror_validation : Keep the report as a fact"

PRODUCE = ("import sys; from kafka import KafkaProducer\n"
           "p = KafkaProducer(bootstrap_servers=sys.argv[1], acks='all', linger_ms=20, batch_size=262144)\n"
           f"pad = b'x' * {VALUE_BYTES}\n"
           f"[p.send({BACKLOG!r}, key=b'p%d-%d' % (n, i), value=pad, partition=n)\n"
           f" for i in range({PER_PARTITION}) for n in range({PARTITIONS})]\n"
           "p.flush(); p.close()\n")
APPENDED = 200
APPEND = ("import sys; from kafka import KafkaProducer\n"
          "p = KafkaProducer(bootstrap_servers=sys.argv[1], acks='all', linger_ms=20)\n"
          f"[p.send({BACKLOG!r}, key=b'day2-p%d-%d' % (n, i), value=b'appended', partition=n)\n"
          f" for i in range({APPENDED}) for n in range({PARTITIONS})]\n"
          "p.flush(); p.close()\n")
INCREMENTAL = {"mirror_validation_mode": "incremental"}
END_OFFSETS = ("import json, sys; from kafka import KafkaConsumer, TopicPartition\n"
               "c = KafkaConsumer(bootstrap_servers=sys.argv[1], request_timeout_ms=30000)\n"
               "tps = [TopicPartition(sys.argv[2], p) for p in sorted(c.partitions_for_topic(sys.argv[2]) or [])]\n"
               "print(json.dumps({tp.partition: end for tp, end in c.end_offsets(tps).items()})); c.close()\n")


def node_script(lab: RealLab, alias: str, script: str, *args) -> str:
    """A kafka-python script under a worker node's python (the lab's FQDNs resolve only there)."""
    proc = subprocess.run([lab.node(alias, 1)["python"], "-c", script, lab.state["clusters"][alias]["bootstrap_servers"], *args],
                          capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def failed_tasks(play) -> str:
    return "\n".join(f"{t['task']}: {str(t['result'].get('msg', ''))[:2000]}" for t in play.tasks if t["status"] == "failed") or play.stdout[-3000:]


def end_offsets(lab: RealLab, alias: str, topic: str) -> dict:
    return {int(p): end for p, end in json.loads(node_script(lab, alias, END_OFFSETS, topic).strip().splitlines()[-1]).items()}


class ClientQuota:
    """The secondary's default client quota, through the 3.2.0 home's kafka.admin.ConfigCommand on this machine."""

    def __init__(self, lab: RealLab):
        self.lab = lab

    def _config_command(self, *args) -> str:
        return self.lab.kafka_tool("secondary", "kafka.admin.ConfigCommand", "--entity-type", "clients", "--entity-default", *args)

    def set(self, bytes_per_s: int) -> None:
        self._config_command("--alter", "--add-config", f"producer_byte_rate={bytes_per_s}")

    def remove(self) -> None:
        """Idempotent (ConfigCommand refuses to delete a key that is not set)."""
        if "producer_byte_rate" in self.described():
            self._config_command("--alter", "--delete-config", "producer_byte_rate")

    def described(self) -> str:
        return self._config_command("--describe")


@pytest.fixture(scope="module")
def lab(sandbox_apache_single, mirror_host_ready):
    lab = RealLab(sandbox_apache_single, PLAN)
    mirror_host_ready(sandbox_apache_single)
    lab.client("primary", "create", BACKLOG, PARTITIONS, 1)
    node_script(lab, "primary", PRODUCE)
    assert end_offsets(lab, "primary", BACKLOG) == {p: PER_PARTITION for p in range(PARTITIONS)}
    yield lab
    lab.remove_mirrormaker()  # the lab's next file finds no MirrorMaker of this one's (RealLab.remove_mirrormaker)


@pytest.fixture
def throttled_target(lab):
    """The target's producer quota, set for the test and removed after it whatever happened (read back both times)."""
    quota = ClientQuota(lab)
    quota.set(QUOTA_BYTES_PER_S)
    try:
        assert f"producer_byte_rate={QUOTA_BYTES_PER_S}" in quota.described()
        yield quota
    finally:
        quota.remove()
        assert "producer_byte_rate" not in quota.described(), "the lab's secondary keeps the test's client quota"


def test_backlog_the_wait_cannot_clear_passes_as_catching_up_and_validates_later(lab, throttled_target):
    started = time.monotonic()
    play = lab.play(MIRROR)
    deployed = time.monotonic()
    assert not play.failed, failed_tasks(play)

    # The health wait's verdict: catching up, with the rate and an estimate, not healthy and not stuck.
    wait = play.task(HEALTH_WAIT)["results"]
    assert len(wait) == 1 and not wait[0]["healthy"], wait
    catch_up = wait[0]["catch_up"]
    assert catch_up["verdict"] == "catching_up", catch_up
    assert catch_up["copied_per_s"] > 0 and catch_up["net_catch_up_per_s"] > 0 and catch_up["stalled"] == [], catch_up
    assert catch_up["lag_total"] > 1000 and catch_up["eta_s"] > HEALTH_TIMEOUT and catch_up["eta"], catch_up
    assert "replicating and catching up" in catch_up["reason"] and catch_up["eta"] in catch_up["reason"], catch_up
    assert wait[0]["lag_total"] == catch_up["lag_total"] > 0, wait[0]["progress"]
    assert play.task(CATCHING_UP_FACT)["ansible_facts"]["mirrormaker2_catching_up"] == {FLOW_NAME: catch_up}
    said = play.task(SAY_CATCHING_UP)["results"]
    assert len(said) == 1 and catch_up["reason"] in said[0]["msg"] and "The play goes on" in said[0]["msg"], said

    # The validation play skipped the flow, said why, and ran no job.
    skipped = play.task(SKIP_CATCHING_UP)
    assert not skipped.get("skipped"), skipped
    assert f"Validation of {FLOW_NAME} skipped: MirrorMaker is still copying the backlog" in skipped["msg"], skipped
    assert all(t["status"] == "skipped" for t in play.tasks if t["task"] == VALIDATION_REPORT), \
        [t for t in play.tasks if t["task"] == VALIDATION_REPORT]

    # Independently: the target is really behind, no further than the wait said, and still copying (the quota lets records
    # through in bursts, seconds apart).
    source = end_offsets(lab, "primary", BACKLOG)
    behind = end_offsets(lab, "secondary", REMOTE)
    assert all(0 < behind[p] < source[p] for p in range(PARTITIONS)), (behind, source)
    assert sum(source.values()) - sum(behind.values()) <= catch_up["lag_total"], (behind, source, catch_up)
    later, deadline = behind, time.monotonic() + 30
    while later == behind and time.monotonic() < deadline:
        time.sleep(2)
        later = end_offsets(lab, "secondary", REMOTE)
    assert sum(behind.values()) < sum(later.values()) < sum(source.values()), (behind, later, source)

    # The quota lifted, the validation on its own, later: it passes with nothing missing. Incremental, with no state yet:
    # every partition is checked in full, and the state is written.
    throttled_target.remove()
    lifted = time.monotonic()
    validation = lab.play(MIRROR, tags="mirror_validation", **INCREMENTAL)
    validated = time.monotonic()
    assert not validation.failed, failed_tasks(validation)
    report = validation.task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    assert report["passed"], report
    assert (report["coverage"]["full"], report["coverage"]["resumed"], report["coverage"]["state_written"]) == (PARTITIONS, 0, True), report["coverage"]
    totals = next(t for t in report["topics"] if t["source_topic"] == BACKLOG)["totals"]
    assert totals["missing"] == 0 and totals["source_count"] == PARTITIONS * PER_PARTITION, totals

    # Every source key is on the target, read back by a client of its own.
    source_keys = lab.client("primary", "keys", BACKLOG)["keys"]
    target_keys = lab.client("secondary", "keys", REMOTE)["keys"]
    for partition in range(PARTITIONS):
        assert set(source_keys[str(partition)]) == {f"p{partition}-{i}" for i in range(PER_PARTITION)}, partition
        assert set(target_keys[str(partition)]) == set(source_keys[str(partition)]), partition

    # A day's appends, copied by MirrorMaker: the next incremental run checks only them, up to the logs' ends.
    node_script(lab, "primary", APPEND)
    source, deadline = end_offsets(lab, "primary", BACKLOG), time.monotonic() + 120
    while end_offsets(lab, "secondary", REMOTE) != source and time.monotonic() < deadline:
        time.sleep(3)
    target = end_offsets(lab, "secondary", REMOTE)
    assert source == target == {p: PER_PARTITION + APPENDED for p in range(PARTITIONS)}, (source, target)
    appended_run = lab.play(MIRROR, tags="mirror_validation", **INCREMENTAL)
    assert not appended_run.failed, failed_tasks(appended_run)
    day_two = appended_run.task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    assert day_two["passed"] and day_two["coverage"]["resumed"] == PARTITIONS, day_two
    partitions = next(t for t in day_two["topics"] if t["source_topic"] == BACKLOG)["partitions"]
    assert [(p["source_offsets"], p["target_offsets"], p["source_count"], p["missing"]) for p in partitions] == [
        ([PER_PARTITION, source[p]], [PER_PARTITION, target[p]], APPENDED, 0) for p in range(PARTITIONS)], partitions
    assert all(p["checked"]["validated_by"] == report["run"] for p in partitions), partitions
    print(f"deploy {deployed - started:.0f} s, validation {validated - lifted:.0f} s; {catch_up['reason']}; the wait's reads "
          f"(s, lag): {[(p['elapsed_s'], p['lag_total']) for p in wait[0]['progress']]}")
