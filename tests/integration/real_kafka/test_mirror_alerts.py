# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirror exporter and the alerting rules on real MirrorMaker 2 with a real Prometheus (issue 31 items 2 and 3), on the
single-broker real-Kafka lab (tests/integration/conftest.py sandbox_apache_single: primary 2.4.1, secondary 3.2.0, one broker
each, MirrorMaker 2 of 3.2.0 on the secondary's wn0 on Java 8): nothing here needs replication.

A MirrorMaker 2 with names of its own (aliases obp -> obs and its own service, as a second mirror beside another would have;
topics ob-*) is deployed by the mirrormaker2 role with its JMX metrics and the exporter (mirrormaker2_exporter, every 2 s,
the endpoint and the textfile): bad exporter options fail before anything changes, check mode shows the diff and creates
nothing, the real run deploys it, a second run changes nothing. The rules come from the role's `prometheus` entry point with
`for:` of 1 s. Prometheus (Debian's, a child process of this test on 127.x) scrapes MirrorMaker and the exporter every second.

Faults, each alert read from Prometheus' /api/v1/alerts, firing after its fault and cleared after its fix (the times printed):
validation failed (the validation job's report.json on the host says so), a task failed (a record above the remote topic's
max.message.bytes), MirrorMaker stopped (supervisorctl stop) with records produced meanwhile (lag growing), offset syncs made
stale by a rebuilt target (the flow's remote topic deleted and created empty, as a rebuilt target has it); then the fixes
the alerts' descriptions give (the config restored, the stale offset-syncs topic deleted, MirrorMaker started again) clear
them all. The exporter's textfile is read independently on the node. state absent removes MirrorMaker and the exporter.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from sandbox import metrics_agent
from sandbox.nodes import machine_path
from tests.support import prometheus_server, prometheus_text
from tests.support.ansible_play import run_tasks
from tests.support.node_mirrormaker import SUPERVISORCTL, as_root_on
from tests.support.real_lab import RealLab

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="the lab's nodes are SSH hosts (root)"),
              pytest.mark.skipif(not prometheus_server.available(), reason="prometheus (Debian package; make test installs it) is not installed")]

SERVICE, EXPORTER = "kafka-mirrormaker2-obs", "kafka-mirror-exporter-obs"
CONFIG_DIR, EXPORTER_DIR = "/etc/kafka-mirrormaker2-obs", "/opt/kafkaops-mirror/exporter-obs"
TEXTFILE, REPORT = "/var/lib/kafka-mirror-exporter-obs/kafka_mirror.prom", "/var/tmp/kafkaops-obs-validation/report.json"
METRICS_PORT, EXPORTER_PORT = 9405, 9406
ORDERS, EVENTS, GROUP = "ob-orders", "ob-events", "ob-app"
REMOTE_ORDERS, REMOTE_EVENTS = f"obp.{ORDERS}", f"obp.{EVENTS}"
SYNCS_TOPIC = "mm2-offset-syncs.obs.internal"  # on the source (offset-syncs location source)
FLOW = "obp->obs"
# The role alone, its modules on the mirror_host role's virtualenv (prepared by mirror_host_ready), as after mirror.yml's first stage.
# A fact of the host, as the mirror_host role sets it: the tasks the role delegates to the controller keep the controller's.
PLAYBOOK = ("- {name: MirrorMaker, hosts: mirrormaker, gather_facts: false, roles: [kafkaops.mirror.mirrormaker2],\n"
            "   pre_tasks: [{ansible.builtin.set_fact: {ansible_python_interpreter: /opt/kafkaops-mirror/venv/bin/python}}]}\n")
CHECK_EXPORTER = "kafkaops.mirror.mirrormaker2 : Check the mirror exporter's options"
WRITE_CONFIG = "kafkaops.mirror.mirrormaker2 : Write the exporter's configuration"
ALERTS = ("KafkaMirrorMakerStopped", "KafkaMirrorLagGrowing", "KafkaMirrorCheckpointsStale", "KafkaMirrorTaskFailed",
          "KafkaMirrorValidationFailed", "KafkaMirrorExporterDown")


BROKERS = 1  # sandbox_apache_single's


def cluster(alias: str, group: str) -> dict:
    host = f"hostvars[groups['{group}'][0]]"
    return {"alias": alias, "bootstrap_servers": "{{ %s['kafka_bootstrap_servers'] }}" % host,
            "connection": "{{ %s | kafkaops.mirror.kafka_connection }}" % host}


@pytest.fixture(scope="module")
def lab(sandbox_apache_single, mirror_host_ready, source_names_synced, tmp_path_factory):
    sandbox_apache = sandbox_apache_single
    ip = next(n for n in sandbox_apache["clusters"]["secondary"]["nodes"] if n["name"] == sandbox_apache["mirrormaker_node"])["ip"]
    flow = {"source": "obp", "target": "obs", "topics": ["ob-.*"], "groups": ["ob-.*"], "refresh_topics_interval_seconds": 10,
            "refresh_groups_interval_seconds": 5, "emit_checkpoints_interval_seconds": 2}
    lab = RealLab(sandbox_apache, {
        "mirrormaker2_clusters": [cluster("obp", "primary_kafka"), cluster("obs", "secondary_kafka")], "mirrormaker2_flows": [flow],
        "mirrormaker2_service_name": SERVICE, "mirrormaker2_config_dir": CONFIG_DIR, "mirrormaker2_heap_opts": "-Xms128m -Xmx384m",
        "mirrormaker2_start_check_seconds": 5, "mirrormaker2_health_check": False,
        "mirrormaker2_metrics_port": METRICS_PORT, "mirrormaker2_metrics_bind_address": ip,
        "mirrormaker2_metrics_agent_jar": str(metrics_agent.ensure_agent()),
        "mirrormaker2_exporter": True, "mirrormaker2_exporter_interval": 2, "mirrormaker2_exporter_listen": f"{ip}:{EXPORTER_PORT}",
        "mirrormaker2_exporter_textfile": TEXTFILE, "mirrormaker2_exporter_validation_report": REPORT,
        "mirrormaker2_exporter_service_name": EXPORTER, "mirrormaker2_exporter_dir": EXPORTER_DIR})
    mirror_host_ready(sandbox_apache)
    source_names_synced(sandbox_apache)  # the MirrorMaker node resolves the primary's advertised names, as after mirror.yml's hosts_sync
    lab.playbook = tmp_path_factory.mktemp("mirror-alerts") / "mirrormaker2.yml"
    lab.playbook.write_text(PLAYBOOK)
    lab.client("primary", "create", ORDERS, 2, BROKERS)
    lab.client("primary", "create", EVENTS, 1, BROKERS)
    lab.produce_keyed(ORDERS, 2, 50)
    lab.client("primary", "commit", GROUP, ORDERS, 0, 20)
    return lab


def node_file(lab, path: str) -> Path:
    return machine_path(lab.mirrormaker_node(), path)


def on_node(lab, script: str) -> str:
    done = as_root_on(lab.mirrormaker_node(), script)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def write_report(lab, passed: bool) -> None:
    report = {"passed": passed, "exit_code": 0 if passed else 1, "started_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
              "message": "test"}
    on_node(lab, f"mkdir -p {Path(REPORT).parent} && echo '{json.dumps(report)}' > {REPORT}.new && chmod 0644 {REPORT}.new "
                 f"&& mv {REPORT}.new {REPORT}")


def textfile(lab) -> list:
    return prometheus_text.parse(node_file(lab, TEXTFILE).read_text())


def wait_textfile(lab, holds, timeout: float = 30) -> None:
    """Until the exporter's textfile, read on the node, satisfies `holds` (it is rewritten at every run, 2 s here)."""
    deadline = time.monotonic() + timeout
    while not holds(textfile(lab)):
        assert time.monotonic() < deadline, node_file(lab, TEXTFILE).read_text()[-3000:]
        time.sleep(0.5)


def wait_alerts(url: str, want: dict, since: float, timeout: float = 90) -> dict:
    """Until each alert of `want` is firing (True) or not (False); returns {alert: seconds from `since` to when it was seen}."""
    seen, deadline = {}, time.monotonic() + timeout
    while True:
        firing = prometheus_server.firing(url)
        for alert, expected in want.items():
            if alert not in seen and (alert in firing) == expected:
                seen[alert] = round(time.monotonic() - since, 1)
        if len(seen) == len(want):
            return seen
        assert time.monotonic() < deadline, f"after {timeout:.0f} s: want {want}, firing {sorted(firing)}, seen {seen}"
        time.sleep(0.5)


def timed_play(lab, what, **options):
    started = time.monotonic()
    play = lab.play(lab.playbook, **options)
    print(f"{what}: {time.monotonic() - started:.1f} s")
    return play


def test_exporter_refused_previewed_then_deployed_once(lab):
    bad = timed_play(lab, "bad options", mirrormaker2_exporter_listen="no-port")
    assert bad.failed and 'address:port (got "no-port")' in bad.task(CHECK_EXPORTER)["msg"], bad.stdout[-3000:]
    assert not node_file(lab, CONFIG_DIR).exists() and not node_file(lab, EXPORTER_DIR).exists()

    preview = timed_play(lab, "check mode", check=True)
    assert not preview.failed and preview.changed_count > 0, preview.stdout[-3000:]
    diff = preview.task(WRITE_CONFIG)["diff"]
    after = json.loads((diff[0] if isinstance(diff, list) else diff)["after"])
    assert after["flows"][0]["source_alias"] == "obp" and after["listen"].endswith(f":{EXPORTER_PORT}")
    assert not node_file(lab, EXPORTER_DIR).exists() and not node_file(lab, f"{CONFIG_DIR}/exporter.json").exists()

    run = timed_play(lab, "deploy")
    assert not run.failed and run.changed_count > 0, run.stdout[-5000:]
    deadline = time.monotonic() + 30  # supervisord's startsecs (3) before RUNNING
    while "RUNNING" not in on_node(lab, f"{SUPERVISORCTL} status {EXPORTER}"):
        assert time.monotonic() < deadline, on_node(lab, f"{SUPERVISORCTL} status {EXPORTER}")
        time.sleep(1)
    assert (node_file(lab, EXPORTER_DIR) / "module_utils.zip").is_file()
    deadline = time.monotonic() + 60
    while not node_file(lab, TEXTFILE).exists() or not prometheus_text.values(textfile(lab), "kafka_mirror_flow_up", flow=FLOW):
        assert time.monotonic() < deadline, "the exporter wrote no textfile in 60 s"
        time.sleep(1)
    assert prometheus_text.values(textfile(lab), "kafka_mirror_flow_up", flow=FLOW) == [1]

    again = timed_play(lab, "again")
    assert not again.failed and again.changed_count == 0, again.stdout[-5000:]


def test_each_alert_fires_on_its_fault_and_clears(lab, tmp_path, sandbox_net):
    rules = tmp_path / "rules.yml"
    written = run_tasks([{"name": "rules", "ansible.builtin.include_role": {"name": "kafkaops.mirror.mirrormaker2", "tasks_from": "prometheus"},
                          "vars": {"mirrormaker2_prometheus_rules_file": str(rules), "mirrormaker2_alert_lag_window": "30s",
                                   "mirrormaker2_alert_max_lag": 0, "mirrormaker2_alert_max_heartbeat_age": 30,
                                   "mirrormaker2_alert_exporter_stale_after": 30, "mirrormaker2_alert_mirrormaker_job": "kafka-mirrormaker",
                                   "mirrormaker2_alert_stopped_for": "1s", "mirrormaker2_alert_lag_growing_for": "1s",
                                   "mirrormaker2_alert_checkpoints_stale_for": "1s", "mirrormaker2_alert_task_failed_for": "1s",
                                   "mirrormaker2_alert_validation_failed_for": "0s", "mirrormaker2_alert_exporter_down_for": "5s"}}])
    assert not written.failed and rules.is_file(), written.stdout[-3000:]
    ip = lab.mirrormaker_node()["ip"]
    write_report(lab, passed=True)
    timings = {}
    with prometheus_server.running(tmp_path / "prometheus", f"127.{sandbox_net}.250.1:9090",
                                   {"kafka-mirrormaker": [f"{ip}:{METRICS_PORT}"], "kafka-mirror-exporter": [f"{ip}:{EXPORTER_PORT}"]},
                                   rules) as url:
        # Healthy: both targets up, every record copied, nothing firing.
        start = time.monotonic()
        deadline = start + 120
        while True:
            lag = [value for _labels, value in prometheus_server.query(url, f'kafka_mirror_lag_records{{flow="{FLOW}"}}')]
            up = {labels["job"]: value for labels, value in prometheus_server.query(url, "up")}
            if lag == [0.0] and up == {"kafka-mirrormaker": 1.0, "kafka-mirror-exporter": 1.0} \
                    and not set(prometheus_server.firing(url)) & set(ALERTS):
                break
            assert time.monotonic() < deadline, (lag, up, prometheus_server.firing(url))
            time.sleep(1)
        print(f"healthy after {time.monotonic() - start:.1f} s")

        since = time.monotonic()
        write_report(lab, passed=False)
        timings["validation failed: fired"] = wait_alerts(url, {"KafkaMirrorValidationFailed": True}, since)
        since = time.monotonic()
        write_report(lab, passed=True)
        timings["validation passed: cleared"] = wait_alerts(url, {"KafkaMirrorValidationFailed": False}, since)

        since = time.monotonic()
        lab.client("secondary", "set-config", REMOTE_EVENTS, "max.message.bytes", "2048")
        lab.client("primary", "large", EVENTS, 8192)
        timings["task failed: fired"] = wait_alerts(url, {"KafkaMirrorTaskFailed": True}, since)
        failed = [labels for labels, value in prometheus_server.query(url, 'kafka_mirrormaker2_task_status{status="failed"}') if value == 1]
        assert {labels["connector"] for labels in failed} == {"MirrorSourceConnector"}, failed

        since = time.monotonic()
        on_node(lab, f"{SUPERVISORCTL} stop {SERVICE}")
        lab.produce_keyed(ORDERS, 2, 10)
        timings["stopped, records produced: fired"] = wait_alerts(url, {"KafkaMirrorMakerStopped": True, "KafkaMirrorLagGrowing": True}, since)
        # 20 records of ob-orders produced while stopped, and the record of ob-events the failed task did not copy.
        wait_textfile(lab, lambda samples: prometheus_text.values(samples, "kafka_mirror_lag_records", flow=FLOW) == [21.0])

        since = time.monotonic()
        lab.client("secondary", "recreate", REMOTE_ORDERS, 2, BROKERS)
        timings["remote topic rebuilt: fired"] = wait_alerts(url, {"KafkaMirrorCheckpointsStale": True}, since)
        wait_textfile(lab, lambda samples: prometheus_text.values(samples, "kafka_mirror_stale_state_findings", flow=FLOW,
                                                                  check="stale_offset_syncs", severity="error") == [1.0])

        # The fixes the alerts' descriptions give, MirrorMaker still stopped: the remote topic's config back, the stale
        # offset-syncs topic deleted; then MirrorMaker started again.
        since = time.monotonic()
        lab.client("secondary", "delete-config", REMOTE_EVENTS, "max.message.bytes")
        lab.client("primary", "delete", SYNCS_TOPIC)
        on_node(lab, f"{SUPERVISORCTL} start {SERVICE}")
        timings["fixed, MirrorMaker started: cleared"] = wait_alerts(url, dict.fromkeys(ALERTS[:4], False), since, timeout=150)
        assert not set(prometheus_server.firing(url)) & set(ALERTS)
        # The failed task's alert went with MirrorMaker's series when it stopped; the new process's task runs.
        tasks = {(labels["connector"], labels["status"]) for labels, value in prometheus_server.query(url, "kafka_mirrormaker2_task_status") if value == 1}
        assert ("MirrorSourceConnector", "running") in tasks and not {status for _connector, status in tasks} - {"running"}, tasks
        wait_textfile(lab, lambda samples: prometheus_text.values(samples, "kafka_mirror_stale_state_findings", flow=FLOW,
                                                                  check="stale_offset_syncs", severity="error") == [0.0])
    print("ALERT TIMINGS", json.dumps(timings))


def test_state_absent_removes_mirrormaker_and_the_exporter(lab):
    gone = timed_play(lab, "state absent", mirrormaker2_state="absent")
    assert not gone.failed and gone.changed_count > 0, gone.stdout[-5000:]
    status = as_root_on(lab.mirrormaker_node(), f"{SUPERVISORCTL} status {EXPORTER} {SERVICE}")
    assert status.stdout.count("no such process") == 2, status.stdout
    for path in (EXPORTER_DIR, TEXTFILE, CONFIG_DIR):
        assert not node_file(lab, path).exists(), path
