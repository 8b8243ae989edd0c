# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role mirrormaker2 on the sandbox: deploy, replicate, change, re-run, refuse bad models, keep secrets.

The tests run in file order against one deployment (module-scoped) and read everything back with
independent kafka-python clients (kafka_io), supervisorctl and the file system.
"""
from __future__ import annotations

import shlex
import stat
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from sandbox import nodes
from tests.support import mm2_kafka_io as kafka_io
from tests.support.ansible_play import run_module, run_playbook
from tests.support.checkout import REPO

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
PLAYBOOK = HERE / "deploy.yml"
INTERPRETER_SET = "kafkaops.mirror.mirror_host : Run the later plays' modules on this host with the virtualenv's Python"
PROGRAM = "kafka-mirrormaker2"
SECRET = "S3cr3t-jaas-value-do-not-print"
TRUSTSTORE_SECRET = "truststore-pw-do-not-print"
ROLE_DEFAULTS = yaml.safe_load((REPO / "roles" / "mirrormaker2" / "defaults" / "main.yml").read_text())


class Mirror:
    def __init__(self, state):
        self.state = state
        self.dir = Path(state["dir"])
        self.inventory = self.dir / "inventory.yml"
        mm_vars = yaml.safe_load(self.inventory.read_text())["all"]["children"]["mirrormaker"]["vars"]
        # The MirrorMaker node is a host of its own (the sandbox's ssh node mode): commands run there as root, files
        # are read where the machine sees what the node wrote.
        node = next(n for n in state["clusters"]["secondary"]["nodes"] if n["name"] == state["mirrormaker_node"])
        self.on_node = nodes.as_root(node)
        self.supervisorctl = self.on_node + shlex.split(mm_vars["mirrormaker2_supervisorctl"])
        self.config_dir = nodes.machine_path(node, mm_vars.get("mirrormaker2_config_dir", ROLE_DEFAULTS["mirrormaker2_config_dir"]))
        self.program_path = f"{mm_vars['mirrormaker2_supervisor_conf_dir']}/{PROGRAM}.conf"
        self.program_file = nodes.machine_path(node, self.program_path)
        self.service_uid = int(nodes.account_lines(node, ROLE_DEFAULTS["mirrormaker2_user"], "hadoop")["passwd"].split(":")[2])
        self.primary = state["clusters"]["primary"]["bootstrap_servers"]
        self.secondary = state["clusters"]["secondary"]["bootstrap_servers"]
        self.interpreter = None  # the virtualenv's Python, once the module fixture has prepared the host

    @property
    def properties(self):
        return self.config_dir / "connect-mirror-maker.properties"

    @property
    def log(self):
        return self.config_dir / "logs" / (PROGRAM + ".log")

    def ctl(self, *args):
        return subprocess.run(self.supervisorctl + list(args), capture_output=True, text=True, check=False)

    def pid(self):
        out = self.ctl("pid", PROGRAM).stdout.strip()
        return int(out) if out.isdigit() and int(out) > 0 else None

    def deploy(self, check=False, diff=False, verbosity=0, **overrides):
        """The role alone, with the virtualenv the module fixture's mirror_host run made (re-checking it each time
        would cost every test a pip run and count nothing of the role's)."""
        extra = base_vars()
        extra["ansible_python_interpreter"] = self.interpreter
        extra.update(overrides)
        return run_playbook(PLAYBOOK, inventory=self.inventory, extra_vars=extra, check=check, diff=diff, verbosity=verbosity,
                            skip_tags="mirror_host", timeout=600)


def base_vars():
    return {
        "mirrormaker2_flows": [flow_primary_to_secondary()],
        "mirrormaker2_max_lag": 0,
        "mirrormaker2_health_timeout": 120,
        "mirrormaker2_health_poll_interval": 2,
    }


def flow_primary_to_secondary(**extra):
    flow = {"source": "primary", "target": "secondary", "topics": ["mm2t-.*"], "topics_exclude": [r"mm2t-.*\.tmp"],
            "groups": ["mm2t-.*"], "refresh_topics_interval_seconds": 2, "refresh_groups_interval_seconds": 2,
            "emit_checkpoints_interval_seconds": 2, "sync_group_offsets": True, "sync_group_offsets_interval_seconds": 2}
    flow.update(extra)
    return flow


@pytest.fixture(scope="module")
def mirror(sandbox):
    mirror = Mirror(sandbox)
    # The MirrorMaker host's virtualenv first, so that the tests' deployments count only the role's own changes.
    prepared = run_playbook(PLAYBOOK, inventory=mirror.inventory, tags="mirror_host", timeout=600)
    assert not prepared.failed, prepared.stdout[-4000:]
    mirror.interpreter = prepared.task(INTERPRETER_SET)["ansible_facts"]["ansible_python_interpreter"]
    kafka_io.create(mirror.primary, "mm2t-orders", 3, {"retention.ms": "86400000"})
    kafka_io.create(mirror.primary, "mm2t-payments", 1)
    kafka_io.create(mirror.primary, "mm2t-orders.tmp", 1)
    kafka_io.produce(mirror.primary, "mm2t-orders", 3000, 3)
    kafka_io.produce(mirror.primary, "mm2t-payments", 100, 1)
    kafka_io.produce(mirror.primary, "mm2t-orders.tmp", 10, 1)
    yield mirror
    # Stop what the role started through supervisord, so the session's sandbox runs nothing of ours.
    mirror.ctl("stop", PROGRAM)
    subprocess.run(mirror.on_node + ["rm", "-f", mirror.program_path], capture_output=True, check=False)
    mirror.ctl("update")


def assert_identical(mirror, topic, remote):
    source = kafka_io.read_all(mirror.primary, topic)
    target = kafka_io.read_all(mirror.secondary, remote)
    assert sorted(target) == sorted(source), f"{remote} partitions {sorted(target)} != {topic} partitions {sorted(source)}"
    for partition, records in source.items():
        assert target[partition] == records, f"{remote}-{partition} differs from {topic}-{partition}"
    return source


def test_bad_model_fails_before_touching_anything(mirror):
    """One run with four mistakes: the role lists every problem of the model (plugins/plugin_utils/mm2_config.py, whose unit
    tests take each on its own) and changes nothing. One run, not four: each costs a whole play on the CI machine."""
    result = mirror.deploy(mirrormaker2_replication_policy="identity",
                           mirrormaker2_flows=[{"source": "primary", "target": "secondary"}, {"source": "secondary", "target": "primary"},
                                               {"source": "primary", "target": "tertiary"}],
                           mirrormaker2_properties={"task.max": 4, "primary->secondary.topic.blacklist": "x"})
    assert result.failed, "the bad model was accepted"
    for message in ("replication loop", "target 'tertiary' is not a cluster alias", "the key is 'tasks.max'", "the key is 'topics.exclude'"):
        assert message in result.stdout, (message, result.stdout[-3000:])
    assert "nothing was changed" in result.stdout
    assert result.changed_count == 0
    assert not mirror.properties.exists() and not mirror.program_file.exists()
    assert mirror.pid() is None


def test_a_kafka_home_without_the_launcher_fails_before_anything(mirror):
    """A Kafka home without connect-mirror-maker.sh (a client-only install, another node's path) is refused with the path
    and the fix before anything is written, not at the service's start (found failing back on the lab's 2.4.1 home)."""
    result = mirror.deploy(mirrormaker2_kafka_home="/opt/kafka-without-mirrormaker", mirrormaker2_kafka_version="3.9.0")
    assert result.failed, "a home without the launcher was accepted"
    message = result.task("kafkaops.mirror.mirrormaker2 : Fail when the Kafka home has no launcher for MirrorMaker")["msg"]
    assert "/opt/kafka-without-mirrormaker/bin/connect-mirror-maker.sh is not an executable file" in message, message
    assert "Nothing was changed" in message and "mirrormaker2_kafka_home" in message, message
    assert result.changed_count == 0
    assert not mirror.properties.exists() and not mirror.program_file.exists()
    assert mirror.pid() is None


def test_first_deploy_in_check_mode_changes_nothing(mirror):
    result = mirror.deploy(check=True, diff=True)
    assert not result.failed, result.stdout[-4000:]
    assert result.changed_count > 0
    assert "+primary->secondary.topics=mm2t-.*" in result.stdout
    assert not mirror.properties.exists() and not mirror.program_file.exists()
    assert mirror.pid() is None
    assert "primary.mm2t-orders" not in kafka_io.topics(mirror.secondary)


def test_first_deploy_replicates_identical_partitions(mirror):
    result = mirror.deploy()
    assert not result.failed, result.stdout[-4000:]
    assert result.changed_count > 0
    assert mirror.pid() is not None
    source = assert_identical(mirror, "mm2t-orders", "primary.mm2t-orders")
    assert sum(len(records) for records in source.values()) == 3000
    assert_identical(mirror, "mm2t-payments", "primary.mm2t-payments")
    on_target = kafka_io.topics(mirror.secondary)
    assert "primary.mm2t-orders.tmp" not in on_target, "an excluded topic was replicated"
    assert {"heartbeats", "primary.heartbeats", "primary.checkpoints.internal"} <= on_target
    assert "mm2-offset-syncs.secondary.internal" in kafka_io.topics(mirror.primary)
    mode = stat.S_IMODE(mirror.properties.stat().st_mode)
    assert mode == 0o600 and mirror.properties.stat().st_uid == mirror.service_uid


def test_check_mode_shows_the_change_and_applies_nothing(mirror):
    before, pid = mirror.properties.read_text(), mirror.pid()
    result = mirror.deploy(check=True, diff=True, mirrormaker2_offset_lag_max=50,
                           mirrormaker2_properties={"primary->secondary.groups.blacklist": "tmp.*", "emit.checkpoint.intervall.seconds": 5})
    assert not result.failed, result.stdout[-4000:]
    assert result.changed_count > 0
    assert "-offset.lag.max=100" in result.stdout and "+offset.lag.max=50" in result.stdout
    assert "+primary->secondary.groups.exclude=tmp.*" in result.stdout
    output = result.stdout + result.stderr
    assert "deprecated since Kafka 2.7 (KIP-629)" in output, "the translation warning was not shown"
    assert "did you mean 'emit.checkpoints.interval.seconds'?" in output, "the unknown-key warning was not shown"
    assert mirror.properties.read_text() == before
    assert mirror.pid() == pid


def test_config_change_restarts_once(mirror):
    pid = mirror.pid()
    result = mirror.deploy(mirrormaker2_offset_lag_max=50)
    assert not result.failed, result.stdout[-4000:]
    assert "offset.lag.max=50" in mirror.properties.read_text()
    restarted = mirror.pid()
    assert restarted not in (None, pid)
    # A second run of the same model changes nothing and keeps the process (as on real Kafka: test_real_kafka.py).
    again = mirror.deploy(mirrormaker2_offset_lag_max=50)
    assert again.changed_count == 0 and mirror.pid() == restarted


def test_new_topic_matching_the_pattern_is_picked_up(mirror):
    kafka_io.create(mirror.primary, "mm2t-late", 2)
    kafka_io.produce(mirror.primary, "mm2t-late", 50, 2)
    appeared = kafka_io.wait_for(lambda: sum(kafka_io.end_offsets(mirror.secondary, "primary.mm2t-late").values()) >= 50, 60)
    assert appeared, "primary.mm2t-late did not receive the records within 60 s"
    assert_identical(mirror, "mm2t-late", "primary.mm2t-late")


def test_group_offsets_are_checkpointed_and_synced(mirror):
    # 1000 records a partition copied with offset.lag.max 100: Kafka 3.9's OffsetSyncStore (3.4.1+, KAFKA-14666) keeps a
    # sparse history of syncs, here at upstream 0, 404, 808, 909 and 999 (each -> the same downstream offset).
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=mirror.primary, group_id="mm2t-app", enable_auto_commit=False, api_version=kafka_io.API_VERSION)
    consumer.commit({TopicPartition("mm2t-orders", 0): OffsetAndMetadata(909, "", -1), TopicPartition("mm2t-orders", 1): OffsetAndMetadata(950, "", -1)})
    consumer.close()
    status = None

    def synced():
        nonlocal status
        status = run_module("kafka_mirror_status", {"bootstrap_servers": [mirror.secondary], "source": {"bootstrap_servers": [mirror.primary]},
                                                    "source_alias": "primary", "target_alias": "secondary", "topics": ["mm2t-.*"],
                                                    "topics_exclude": [r"mm2t-.*\.tmp"], "groups": ["mm2t-.*"]})
        return status.get("checkpoints", {}).get("mm2t-app") == 2

    assert kafka_io.wait_for(synced, 60, 2), status
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=mirror.secondary, api_version=kafka_io.API_VERSION)
    try:
        def target_offsets():
            offsets = admin.list_group_offsets({"mm2t-app": None}).get("mm2t-app", {})
            return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == "primary.mm2t-orders"}

        # 909 sits on a sync (909 -> 909); 950 is past the sync at 909, so it translates to 909 + 1 (re-read, never skip).
        assert kafka_io.wait_for(lambda: target_offsets() == {0: 909, 1: 910}, 30), target_offsets()
    finally:
        admin.close()
    assert status["healthy"], status["unmet"]
    assert status["lag_total"] == 0


def test_group_offsets_not_synced_while_the_group_is_active_on_the_target(mirror):
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    remote = TopicPartition("primary.mm2t-orders", 0)
    # One member only: noida-db breaks with two consumers in one group (docs/reference/test-brokers.md).
    active = KafkaConsumer(bootstrap_servers=mirror.secondary, group_id="mm2t-active", enable_auto_commit=False,
                           api_version=kafka_io.API_VERSION, receive_message_max_bytes=kafka_io.RECEIVE_MAX)
    admin = KafkaAdminClient(bootstrap_servers=mirror.secondary, api_version=kafka_io.API_VERSION)
    try:
        active.subscribe(["primary.mm2t-orders"])
        assert kafka_io.wait_for(lambda: active.poll(timeout_ms=500) is not None and active.assignment(), 30), "the consumer did not join"
        active.commit({remote: OffsetAndMetadata(5, "", -1)})
        upstream = KafkaConsumer(bootstrap_servers=mirror.primary, group_id="mm2t-active", enable_auto_commit=False, api_version=kafka_io.API_VERSION)
        upstream.commit({TopicPartition("mm2t-orders", 0): OffsetAndMetadata(202, "", -1)})
        upstream.close()
        time.sleep(8)  # several checkpoint and group-sync intervals (2 s)
        active.poll(timeout_ms=100)  # stay a live member
        offsets = admin.list_group_offsets({"mm2t-active": [remote]})["mm2t-active"]
        assert offsets[remote].offset == 5, "MirrorMaker moved the offsets of a group that is consuming on the target"
        # The broker would refuse the commit anyway; MirrorMaker must not even try (its log says why it skipped).
        assert "not syncing offsets of mm2t-active: it is Stable" in mirror.log.read_text()
    finally:
        active.close()
        admin.close()


def test_restart_resumes_without_copying_again(mirror):
    ends = kafka_io.end_offsets(mirror.secondary, "primary.mm2t-orders")
    assert mirror.ctl("stop", PROGRAM).returncode == 0
    assert "stopped (sandbox.mm2)" in mirror.log.read_text().splitlines()[-1], "SIGTERM did not stop the stand-in cleanly"
    assert mirror.ctl("start", PROGRAM).returncode == 0
    time.sleep(8)  # several polls and a topic refresh
    assert kafka_io.end_offsets(mirror.secondary, "primary.mm2t-orders") == ends


def test_active_active_default_policy_has_no_loops(mirror):
    kafka_io.create(mirror.secondary, "mm2t-inventory", 1)
    kafka_io.produce(mirror.secondary, "mm2t-inventory", 20, 1)
    # The reverse flow's pattern also matches primary.* names: only cycle detection keeps them from going back.
    reverse = {"source": "secondary", "target": "primary", "topics": ["mm2t-.*", r"primary\.mm2t-.*"],
               "refresh_topics_interval_seconds": 2, "emit_checkpoints_interval_seconds": 2}
    result = mirror.deploy(mirrormaker2_flows=[flow_primary_to_secondary(), reverse])
    assert not result.failed, result.stdout[-4000:]
    arrived = kafka_io.wait_for(lambda: sum(kafka_io.end_offsets(mirror.primary, "secondary.mm2t-inventory").values()) >= 20, 60)
    assert arrived
    time.sleep(6)  # three refresh cycles
    for bootstrap in (mirror.primary, mirror.secondary):
        looped = [t for t in kafka_io.topics(bootstrap) if t.startswith(("primary.secondary.", "secondary.primary."))]
        assert not looped, f"replication loop: {looped}"
    assert "secondary.primary.mm2t-orders" not in kafka_io.topics(mirror.primary)


def test_secrets_never_printed_and_files_0600(mirror):
    clusters = [
        {"alias": "primary", "bootstrap_servers": mirror.primary,
         "sasl_jaas_config": f'org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="{SECRET}";',
         "ssl_truststore_password": TRUSTSTORE_SECRET},
        {"alias": "secondary", "bootstrap_servers": mirror.secondary},
    ]
    result = mirror.deploy(verbosity=3, diff=True, mirrormaker2_clusters=clusters)
    assert not result.failed, result.stdout[-4000:]
    for secret in (SECRET, TRUSTSTORE_SECRET):
        assert secret not in result.stdout and secret not in result.stderr
    content = mirror.properties.read_text()
    assert SECRET in content and TRUSTSTORE_SECRET in content
    assert stat.S_IMODE(mirror.properties.stat().st_mode) == 0o600


def test_systemd_unit_passes_systemd_analyze(tmp_path):
    if not Path("/usr/bin/systemd-analyze").exists():
        pytest.skip("systemd-analyze is not installed")
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "connect-mirror-maker.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    role = REPO / "roles" / "mirrormaker2"
    play = [{
        "name": "Render the unit",
        "hosts": "localhost",
        "connection": "local",
        "gather_facts": False,
        "vars_files": [str(role / "defaults" / "main.yml"), str(role / "vars" / "main.yml")],
        "tasks": [{"name": "unit", "ansible.builtin.template": {
            "src": str(role / "templates" / "mirrormaker2.service.j2"), "dest": str(tmp_path / "kafka-mirrormaker2.service"), "mode": "0644"}}],
    }]
    playbook = tmp_path / "unit.yml"
    playbook.write_text(yaml.safe_dump(play))
    # Extra vars: they take precedence over the role files loaded as vars_files.
    overrides = {"mirrormaker2_kafka_home": str(home), "mirrormaker2_config_dir": str(tmp_path / "etc"), "mirrormaker2_user": "root",
                 "mirrormaker2_clusters": [{"alias": "a", "bootstrap_servers": "x:1"}, {"alias": "b", "bootstrap_servers": "y:1"}],
                 "mirrormaker2_jaas_config": "KafkaClient {};", "_mirrormaker2_plan": {"command_args": []},
                 "mirrormaker2_kafka_version_resolved": "3.9.0"}  # what tasks/version.yml sets
    result = run_playbook(playbook, extra_vars=overrides)
    assert not result.failed, result.stdout
    unit = tmp_path / "kafka-mirrormaker2.service"
    text = unit.read_text()
    assert f"ExecStart={home}/bin/connect-mirror-maker.sh {tmp_path}/etc/connect-mirror-maker.properties" in text
    assert f'Environment="KAFKA_OPTS=-Djava.security.auth.login.config={tmp_path}/etc/jaas.conf"' in text
    verify = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, check=False)
    problems = [line for line in verify.stderr.splitlines() if str(unit) in line or "kafka-mirrormaker2" in line]
    assert verify.returncode == 0 and not problems, verify.stderr
