# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stale MirrorMaker 2 state on the sandbox: two ways a target loses what the offset syncs and checkpoints describe.

1. A remote topic deleted and created again (on the shared session sandbox, flow east -> west of its own, so its internal
   topics are none that another test of the session reads). The mirror is the test fixture's MirrorMaker pass
   (tests/support/mirror_fixture.py: records copied, real offset syncs and a group's checkpoints written with the sandbox's
   one record writer). The target keeps its checkpoints topic, so both the offset syncs and the checkpoints are stale.
2. The classic case, on a sandbox of its own: the mirrormaker2 role deploys MirrorMaker 2 (the sandbox's stand-in) and it
   mirrors; the target cluster is torn down and brought up again empty (`python -m sandbox rebuild --cluster secondary`:
   its broker restarts with its data wiped) while MirrorMaker runs on, as one on a host of its own does; the source's
   group moves on. The offset syncs live on the source (mm2-offset-syncs.secondary.internal, the default location), so
   they survive, and MirrorMaker translates the group's new offsets with them into checkpoints on the rebuilt target.
   playbooks/preflight.yml and kafka_mirror_status must name both internal topics, what is wrong and the fix; the user
   then follows the fix (stop MirrorMaker, delete the two topics) and redeploys with the role.

kafka_mirror_status and the preflight are compared with what independent kafka-python clients read back (end offsets,
topic lists, the offset syncs and checkpoints decoded record by record).
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kafka import KafkaAdminClient

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint, OffsetSync
from sandbox import nodes
from tests.support import mm2_kafka_io as kafka_io
from tests.support.ansible_play import run_module, run_playbook, run_tasks
from tests.support.checkout import REPO
from tests.support.mirror_fixture import NOIDA_API, ensure_topic, mirror_pass
from tests.support.mm2_kafka_io import end_offsets, produce, topics, wait_for
from tests.support.sandbox_fixture import running_sandbox
from tests.support.step_timer import StepTimer

pytestmark = pytest.mark.integration

SOURCE_ALIAS, TARGET_ALIAS = "east", "west"
TOPIC, REMOTE, GROUP = "stale-orders", "east.stale-orders", "stale-app"
SYNCS_TOPIC, CHECKPOINTS_TOPIC = "mm2-offset-syncs.west.internal", "east.checkpoints.internal"  # written on primary / secondary
PARTITIONS, PER_PARTITION_RECORDS, COMMITTED = 2, 30, {0: 20, 1: 25}
FAIL_TASK = "kafkaops.mirror.preflight : Fail when any finding is an error"


def bootstrap(state, cluster):
    return state["clusters"][cluster]["bootstrap_servers"]


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
    kafka_io.commit(bootstrap(sandbox, "primary"), GROUP, TOPIC, COMMITTED)
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


# ---------------------------------------------------------------------------------------------------------------------
# 2. The classic case: deploy with the mirrormaker2 role, rebuild the target, preflight, follow the fix, redeploy.

REBUILD_SUBNET = 24  # a sandbox of its own (third octets 24 and 25): its target is wiped
CL_TOPIC, CL_REMOTE, CL_GROUP = "cl-orders", "primary.cl-orders", "cl-app"
CL_SYNCS, CL_CHECKPOINTS = "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal"  # on primary / secondary
CL_PROGRESS = "mm2-offsets.primary.internal"  # MirrorMaker's own source offsets (Connect's offsets topic), on the target
CL_PARTITIONS, CL_PER_PARTITION = 2, 60
CL_COMMITTED, CL_MOVED = {0: 40, 1: 50}, {0: 45, 1: 55}  # the source group before the rebuild, and after it moved on
CL_FLOW = {"source": "primary", "target": "secondary", "topics": ["cl-.*"], "groups": ["cl-.*"], "refresh_topics_interval_seconds": 2,
           "refresh_groups_interval_seconds": 2, "emit_checkpoints_interval_seconds": 2, "sync_group_offsets": False}
# MirrorMaker commits its source offsets every offset.flush.interval.ms (Connect's default 60 s, a worker setting scoped by the
# target alias): committing every second makes "copied and committed before the rebuild" a matter of seconds, not a minute.
CL_VARS = {"mirrormaker2_flows": [CL_FLOW], "mirrormaker2_offset_lag_max": 10, "mirrormaker2_max_lag": 0, "mirrormaker2_health_timeout": 120,
           "mirrormaker2_health_poll_interval": 2, "mirrormaker2_properties": {"secondary.offset.flush.interval.ms": 1000},
           # The preflight's flows are mirrormaker2_flows; its clock and topic-creation probes are tested elsewhere (test_preflight).
           "preflight_clock_check": False, "preflight_check_topic_creation": False}
DEPLOY = REPO / "tests" / "integration" / "mirrormaker2" / "deploy.yml"  # mirror_host, then the mirrormaker2 role
PREFLIGHT = REPO / "playbooks" / "preflight.yml"
PROGRAM = "kafka-mirrormaker2"  # mirrormaker2_service_name's default
INTERPRETER_SET = "kafkaops.mirror.mirror_host : Run the later plays' modules on this host with the virtualenv's Python"
SUMMARY_TASK = "kafkaops.mirror.preflight : Show the preflight summary"
FIGURES = REPO / "tests" / "output" / "stale-state-rebuild.json"


class RebuiltTarget:
    """The classic case's sandbox, and what each step leaves for the next ones."""

    def __init__(self, state):
        self.state = state
        self.dir = Path(state["dir"])
        self.inventory = self.dir / "inventory.yml"
        self.primary = state["clusters"]["primary"]["bootstrap_servers"]
        self.secondary = state["clusters"]["secondary"]["bootstrap_servers"]
        node = next(n for n in state["clusters"]["secondary"]["nodes"] if n["name"] == state["mirrormaker_node"])
        mm_vars = yaml.safe_load(self.inventory.read_text())["all"]["children"]["mirrormaker"]["vars"]
        self.supervisorctl = nodes.as_root(node) + shlex.split(mm_vars["mirrormaker2_supervisorctl"])
        config_dir = mm_vars.get("mirrormaker2_config_dir", "/etc/kafka-mirrormaker2")
        self.log = nodes.machine_path(node, config_dir) / "logs" / f"{PROGRAM}.log"
        self.interpreter = None  # the MirrorMaker host's virtualenv Python, once the first deployment made it
        self.facts = {}
        self.timer = StepTimer("stale state, classic case")
        self.timed = self.timer.timed

    def prepare_host(self):
        """The MirrorMaker host's virtualenv, once (deploy.yml's mirror_host play, as playbooks/mirror.yml starts)."""
        play = run_playbook(DEPLOY, inventory=self.inventory, tags="mirror_host", timeout=900)
        assert not play.failed, play.stdout[-4000:]
        self.interpreter = play.task(INTERPRETER_SET)["ansible_facts"]["ansible_python_interpreter"]

    def playbook(self, playbook, **extra):
        """A playbook on the sandbox's inventory without its mirror_host play (the virtualenv is there, and checking it
        again would cost a pip run each time), as tests/integration/mirrormaker2 does."""
        extra_vars = dict(CL_VARS, ansible_python_interpreter=self.interpreter, **extra)
        return run_playbook(playbook, inventory=self.inventory, extra_vars=extra_vars, skip_tags="mirror_host", timeout=600)

    def mirrormaker_pid(self):
        out = subprocess.run(self.supervisorctl + ["pid", PROGRAM], capture_output=True, text=True, check=False).stdout.strip()
        return int(out) if out.isdigit() and int(out) > 0 else None

    def log_tail(self, lines=40):
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else "(no log)"

    def status(self):
        """kafka_mirror_status from this controller (noida's brokers advertise their IPs)."""
        return run_module("kafka_mirror_status", {
            "bootstrap_servers": [self.secondary], "source": {"bootstrap_servers": [self.primary]}, "source_alias": "primary",
            "target_alias": "secondary", "topics": ["cl-.*"], "groups": ["cl-.*"], "mirrormaker_version": "3.9"})


def newest_per_partition(bootstrap, topic, decode, wanted):
    """{partition: (upstream, downstream)} of the newest record of `topic` (one partition) that `wanted` keeps, decoded record
    by record; {} while the cluster does not list the topic."""
    if topic not in kafka_io.topics(bootstrap):
        return {}
    latest = {}
    for key, value, _headers, _timestamp in kafka_io.read_all(bootstrap, topic).get(0, []):
        entry = decode(key, value)
        if wanted(entry):
            latest[entry.partition] = (entry.upstream_offset, entry.downstream_offset)
    return latest


def latest_syncs(bootstrap):
    """The newest offset sync of each cl-orders partition."""
    return newest_per_partition(bootstrap, CL_SYNCS, OffsetSync.decode, lambda sync: sync.topic == CL_TOPIC)


def latest_checkpoints(bootstrap):
    """The newest checkpoint of cl-app per partition."""
    return newest_per_partition(bootstrap, CL_CHECKPOINTS, Checkpoint.decode,
                                lambda checkpoint: checkpoint.group == CL_GROUP and checkpoint.topic == CL_REMOTE)


def committed_positions(bootstrap):
    """{partition: upstream offset} of cl-orders in MirrorMaker's own source offsets (Connect's JSON keys and values)."""
    if CL_PROGRESS not in kafka_io.topics(bootstrap):
        return {}
    found = {}
    # Connect's offsets topic has 25 partitions; one key always lands in one partition, so its last value there is the latest.
    for records in kafka_io.read_all(bootstrap, CL_PROGRESS).values():
        for key, value, _headers, _timestamp in records:
            source_partition = json.loads(key)[1]
            if source_partition.get("topic") == CL_TOPIC and value:  # other connectors key by group or cluster pair
                found[source_partition["partition"]] = json.loads(value)["offset"]
    return found


def record_keys(bootstrap, topic):
    return {partition: [record[0] for record in records] for partition, records in kafka_io.read_all(bootstrap, topic).items()}


@pytest.fixture(scope="module")
def rebuilt_lab(tmp_path_factory, sandbox_net):
    """A sandbox of its own for the classic case (its target is wiped), brought down after the module's last test."""
    with running_sandbox(tmp_path_factory.mktemp("stale-rebuild"), "the classic case's sandbox",
                         provider="noida", net=sandbox_net, subnet=REBUILD_SUBNET) as state:
        yield RebuiltTarget(state)


NEEDS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="the MirrorMaker node runs its own supervisord (ssh node mode, root)")


@NEEDS_ROOT
def test_classic_case_deploy_mirrors_and_leaves_offset_syncs_and_checkpoints(rebuilt_lab):
    lab = rebuilt_lab
    kafka_io.create(lab.primary, CL_TOPIC, CL_PARTITIONS)
    kafka_io.produce(lab.primary, CL_TOPIC, CL_PARTITIONS * CL_PER_PARTITION, CL_PARTITIONS)
    kafka_io.commit(lab.primary, CL_GROUP, CL_TOPIC, CL_COMMITTED)
    lab.timed("prepare the MirrorMaker host (mirror_host)", lab.prepare_host)
    play = lab.timed("deploy (mirrormaker2)", lambda: lab.playbook(DEPLOY))
    assert not play.failed, play.stdout[-4000:]
    # Read back: every record on the target (the role's health wait allowed no lag), the group checkpointed, the syncs.
    assert record_keys(lab.secondary, CL_REMOTE) == record_keys(lab.primary, CL_TOPIC)
    assert wait_for(lambda: {p: u for p, (u, _d) in latest_checkpoints(lab.secondary).items()} == CL_COMMITTED, 90), latest_checkpoints(lab.secondary)
    syncs = latest_syncs(lab.primary)
    assert set(syncs) == set(range(CL_PARTITIONS)) and all(d < CL_PER_PARTITION for _u, d in syncs.values()), syncs
    status = lab.status()
    assert not status.get("failed"), status.get("msg")
    assert status["stale_state"] == [] and status["lag_total"] == 0
    # MirrorMaker committed its position (the last copied source offset) in its offsets topic on the target.
    last = {p: CL_PER_PARTITION - 1 for p in range(CL_PARTITIONS)}
    assert wait_for(lambda: committed_positions(lab.secondary) == last, 90), committed_positions(lab.secondary)
    lab.facts.update(pid=lab.mirrormaker_pid(), syncs=syncs)


@NEEDS_ROOT
def test_classic_case_rebuilt_target_is_reported_with_the_fix(rebuilt_lab):
    lab = rebuilt_lab
    assert lab.facts.get("syncs"), "runs after the deployment"
    run = lab.timed("rebuild the target", lambda: subprocess.run(
        [sys.executable, "-m", "sandbox", "rebuild", "--dir", str(lab.dir), "--cluster", "secondary", "--json"], cwd=REPO,
        capture_output=True, text=True, timeout=120, check=False))
    assert run.returncode == 0, run.stderr
    rebuilt = json.loads(run.stdout)
    assert rebuilt["cluster"] == "secondary" and rebuilt["pid"] != rebuilt["pid_before"] and rebuilt["wiped"], rebuilt
    # Read back: the target came up empty, MirrorMaker ran on (same process) and recreated the remote topic, empty; the
    # source kept its records and the offset syncs, unchanged.
    # (Its producer's metadata refresh may create the topic first with the broker's default partition count, as
    # auto.create.topics.enable does on a real target; MirrorMaker's next topic refresh grows it to the source's.)
    # Up to 120 s: at a suite's load the stand-in's topic refresh comes late (30 s ran out in a suite run, the topic at 1 partition).
    assert wait_for(lambda: end_offsets(lab.secondary, CL_REMOTE) == {p: 0 for p in range(CL_PARTITIONS)}, 120), \
        f"MirrorMaker did not recreate {CL_REMOTE} with {CL_PARTITIONS} partitions: {end_offsets(lab.secondary, CL_REMOTE)}"
    assert lab.mirrormaker_pid() == lab.facts["pid"], f"MirrorMaker did not run on through the rebuild:\n{lab.log_tail()}"
    assert end_offsets(lab.primary, CL_TOPIC) == {p: CL_PER_PARTITION for p in range(CL_PARTITIONS)}
    assert latest_syncs(lab.primary) == lab.facts["syncs"]
    # The source's consumers go on: MirrorMaker checkpoints the group's new offsets, translated with the old syncs.
    kafka_io.commit(lab.primary, CL_GROUP, CL_TOPIC, CL_MOVED)
    # Up to 180 s: after the rebuild the stand-in's clients reconnect and its sends to the topics the rebuild removed wait
    # for their metadata. (It failed in 4 of 5 suite runs while the stand-in sent its offsets-topic records to the murmur2
    # partition of 25 whatever the topic had: auto-created again with fewer, each commit's flush waited out the delivery
    # timeout and the checkpoints starved. Connect's KafkaBasedLog names no partition; the stand-in no longer does either.)
    assert wait_for(lambda: {p: u for p, (u, _d) in latest_checkpoints(lab.secondary).items()} == CL_MOVED, 180), \
        f"checkpoints after the rebuild: {latest_checkpoints(lab.secondary)}\n{lab.log_tail()}"
    checkpoints = latest_checkpoints(lab.secondary)
    assert all(d > 0 for _u, d in checkpoints.values()), checkpoints  # beyond the end (0) of the rebuilt remote topic
    lab.facts["checkpoints"] = checkpoints

    status = lab.status()
    assert not status.get("failed") and not status["changed"], status.get("msg")
    print("KAFKA_MIRROR_STATUS stale_state", json.dumps(status["stale_state"], indent=1))
    syncs, stale_checkpoints = status["stale_state"]
    assert (syncs["severity"], syncs["check"], syncs["cluster"]) == ("error", "stale_offset_syncs", "primary")
    assert syncs["message"].startswith(f"{CL_SYNCS} on primary holds offset syncs whose target offset is at or beyond the end of the remote partition")
    assert "or secondary rebuilt" in syncs["message"]
    for partition, (upstream, downstream) in lab.facts["syncs"].items():
        assert f"{CL_TOPIC}[{partition}]: sync {upstream} -> {downstream}, but {CL_REMOTE}[{partition}] ends at 0" in syncs["message"]
    assert syncs["fix"].startswith(f"stop MirrorMaker 2, delete {CL_SYNCS} on primary")
    assert (stale_checkpoints["severity"], stale_checkpoints["check"], stale_checkpoints["cluster"]) == ("error", "stale_checkpoints", "secondary")
    for partition, (upstream, downstream) in checkpoints.items():
        assert f"group {CL_GROUP} {CL_REMOTE}[{partition}]: checkpoint {upstream} -> {downstream}, the partition ends at 0" in stale_checkpoints["message"]
    assert stale_checkpoints["fix"].startswith(f"stop MirrorMaker 2, delete {CL_CHECKPOINTS} on secondary")

    play = lab.timed("preflight.yml on the rebuilt target", lambda: lab.playbook(PREFLIGHT))
    assert play.failed and play.changed_count == 0, play.stdout[-3000:]
    failure = play.task(FAIL_TASK)["msg"]
    summary = play.task(SUMMARY_TASK)["msg"]
    print("PREFLIGHT SUMMARY (rebuilt target)", json.dumps(summary, indent=1))
    print("PREFLIGHT FAILURE (rebuilt target)", failure)
    assert f"{CL_SYNCS} on primary holds offset syncs" in failure and f"{CL_CHECKPOINTS} on secondary holds checkpoints" in failure
    assert f"MirrorMaker state of primary->secondary ({CL_SYNCS} and checkpoints): 2 stale finding(s)" in summary
    lab.facts.update(status=status["stale_state"], summary=summary)


@NEEDS_ROOT
def test_classic_case_redeploy_after_the_fix_leaves_nothing_stale(rebuilt_lab):
    """The fix as the findings give it: stop MirrorMaker 2, delete the offset-syncs topic on the source and the checkpoints
    topic on the target, start it again - here by redeploying with the mirrormaker2 role, which starts the stopped program."""
    lab = rebuilt_lab
    assert lab.facts.get("checkpoints"), "runs after the rebuild"
    stopped = subprocess.run(lab.supervisorctl + ["stop", PROGRAM], capture_output=True, text=True, check=False)
    assert lab.mirrormaker_pid() is None, stopped.stdout + stopped.stderr
    # Its position went with the old target: since the rebuild it copied nothing of cl-orders, so it committed none there.
    assert committed_positions(lab.secondary) == {}, committed_positions(lab.secondary)
    for bootstrap, topic in ((lab.primary, CL_SYNCS), (lab.secondary, CL_CHECKPOINTS)):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, api_version=NOIDA_API, request_timeout_ms=15000)
        try:
            admin.delete_topics([topic])
        finally:
            admin.close()
        assert wait_for(lambda b=bootstrap, t=topic: t not in topics(b), 30), f"{topic} was not deleted"
    play = lab.timed("redeploy (mirrormaker2)", lambda: lab.playbook(DEPLOY))
    assert not play.failed, play.stdout[-4000:] + "\n" + lab.log_tail()
    assert lab.mirrormaker_pid() not in (None, lab.facts["pid"])

    # Read back: finding no position of its own, MirrorMaker copied every record again; the new syncs and checkpoints lie
    # within the remote topic.
    assert record_keys(lab.secondary, CL_REMOTE) == record_keys(lab.primary, CL_TOPIC)
    syncs = latest_syncs(lab.primary)
    ends = end_offsets(lab.secondary, CL_REMOTE)
    assert set(syncs) == set(range(CL_PARTITIONS)) and all(d < ends[p] for p, (_u, d) in syncs.items()), (syncs, ends)
    assert wait_for(lambda: {p: u for p, (u, _d) in latest_checkpoints(lab.secondary).items()} == CL_MOVED, 90), latest_checkpoints(lab.secondary)
    checkpoints = latest_checkpoints(lab.secondary)
    assert all(d <= ends[p] for p, (_u, d) in checkpoints.items()), (checkpoints, ends)
    status = lab.status()
    assert not status.get("failed"), status.get("msg")
    assert status["stale_state"] == [] and status["lag_total"] == 0
    play = lab.timed("preflight.yml after the fix", lambda: lab.playbook(PREFLIGHT))
    assert not play.failed and play.changed_count == 0, play.stdout[-3000:]
    summary = play.task(SUMMARY_TASK)["msg"]
    print("PREFLIGHT SUMMARY (after the fix)", json.dumps(summary, indent=1))
    assert f"MirrorMaker state of primary->secondary ({CL_SYNCS} and checkpoints): nothing stale" in summary, summary
    figures = {"seconds": lab.timer.seconds, "syncs_before": lab.facts["syncs"], "stale_checkpoints": lab.facts["checkpoints"],
               "syncs_after_fix": syncs, "checkpoints_after_fix": checkpoints, "remote_ends_after_fix": ends,
               "stale_state": lab.facts["status"], "preflight_summary": lab.facts["summary"], "preflight_summary_after_fix": summary}
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    FIGURES.write_text(json.dumps(figures, indent=1, default=str) + "\n")
    print("CLASSIC CASE FIGURES", json.dumps(figures, default=str))
