# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirrormaker2 role's alerting rules (templates/prometheus-rules.yml.j2, with the role's defaults) and Grafana dashboard
(files/grafana-dashboard.json), checked by Prometheus' own promtool: the rules load, each alert fires on its fault only after
its `for:` and stays quiet on a healthy mirror (`promtool test rules`, series made by hand), and every metric the rules and
the dashboard name is one the exporter or MirrorMaker's metrics rules produce."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import jinja2
import pytest
import yaml

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.exporter import METRICS
from tests.support.checkout import REPO

ROLE = REPO / "roles" / "mirrormaker2"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus; make test installs it) is not installed")
ALERTS = ["KafkaMirrorMakerStopped", "KafkaMirrorLagGrowing", "KafkaMirrorCheckpointsStale", "KafkaMirrorTaskFailed",
          "KafkaMirrorValidationFailed", "KafkaMirrorExporterDown"]
FLOW = 'flow="primary->secondary"'
# Series of a healthy mirror, one sample a minute (promtool's expanding notation: `a+bxN`).
HEALTHY = {
    'up{job="kafka-mirrormaker", instance="hn0:9404"}': "1x30",
    'kafka_mirror_heartbeat_age_seconds{%s, heartbeat="emitted"}' % FLOW: "2x30",
    'kafka_mirror_lag_records{%s}' % FLOW: "0x30",
    'kafka_mirror_stale_state_findings{%s, check="stale_offset_syncs", severity="error"}' % FLOW: "0x30",
    'kafka_mirrormaker2_task_status{instance="hn0:9404", connector="MirrorSourceConnector", task="0", status="running"}': "1x30",
    'kafka_mirror_validation_passed{report="/r.json"}': "1x30",
    'kafka_mirror_flow_up{%s}' % FLOW: "1x30",
    'kafka_mirror_exporter_last_run_timestamp_seconds': "0+60x30",
}


def render_rules(**overrides):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(ROLE / "templates")), undefined=jinja2.StrictUndefined, trim_blocks=True)
    values = dict(yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()), ansible_managed="managed")
    values.update(overrides)
    return env.get_template("prometheus-rules.yml.j2").render(**values)


def test_rules_name_each_alert_and_only_known_metrics():
    rules = yaml.safe_load(render_rules())["groups"][0]["rules"]
    assert [rule["alert"] for rule in rules] == ALERTS
    for rule in rules:
        assert unknown_metrics(rule["expr"]) == set(), rule["alert"]
        assert rule["labels"]["severity"] in ("critical", "warning") and rule["annotations"]["description"].strip()
    assert {rule["alert"]: rule["for"] for rule in rules}["KafkaMirrorLagGrowing"] == "15m"
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    short = yaml.safe_load(render_rules(**{name: "1s" for name in defaults if re.match(r"mirrormaker2_alert_\w+_for$", name)}))
    assert {rule["for"] for rule in short["groups"][0]["rules"]} == {"1s"}


@needs_promtool
def test_promtool_loads_the_rules(tmp_path):
    (tmp_path / "rules.yml").write_text(render_rules())
    checked = subprocess.run([PROMTOOL, "check", "rules", str(tmp_path / "rules.yml")], capture_output=True, text=True, check=False)
    assert checked.returncode == 0 and "6 rules found" in checked.stdout, checked.stdout + checked.stderr


def series(**faults):
    found = dict(HEALTHY)
    found.update(faults)
    return [{"series": name, "values": values} for name, values in found.items()]


# (fault: series replaced, the alert, when it must not have fired yet, when it must have, the labels it fires with)
CASES = [
    ("MirrorMaker stops at minute 5", {'up{job="kafka-mirrormaker", instance="hn0:9404"}': "1x4 0x25"}, "KafkaMirrorMakerStopped", "6m", "8m",
     {"job": "kafka-mirrormaker", "instance": "hn0:9404"}),
    ("MirrorMaker hangs: no heartbeat", {'kafka_mirror_heartbeat_age_seconds{%s, heartbeat="emitted"}' % FLOW: "2x4 60+60x25"},
     "KafkaMirrorMakerStopped", "6m", "10m", {"flow": "primary->secondary"}),
    ("lag grows from minute 5", {'kafka_mirror_lag_records{%s}' % FLOW: "0x4 2000+500x25"}, "KafkaMirrorLagGrowing", "15m", "25m",
     {"flow": "primary->secondary"}),
    ("target rebuilt: stale offset syncs", {'kafka_mirror_stale_state_findings{%s, check="stale_offset_syncs", severity="error"}' % FLOW: "0x4 3x25"},
     "KafkaMirrorCheckpointsStale", "6m", "12m", {"flow": "primary->secondary", "check": "stale_offset_syncs"}),
    ("a task fails", {'kafka_mirrormaker2_task_status{instance="hn0:9404", connector="MirrorSourceConnector", task="0", status="failed"}': "_x4 1x25"},
     "KafkaMirrorTaskFailed", "5m", "8m", {"instance": "hn0:9404", "connector": "MirrorSourceConnector", "task": "0"}),
    ("validation fails", {'kafka_mirror_validation_passed{report="/r.json"}': "1x4 0x25"}, "KafkaMirrorValidationFailed", "4m", "5m",
     {"report": "/r.json"}),
    ("exporter cannot read the flow", {'kafka_mirror_flow_up{%s}' % FLOW: "1x4 0x25"}, "KafkaMirrorExporterDown", "10m", "16m",
     {"flow": "primary->secondary"}),
]


@needs_promtool
@pytest.mark.parametrize("fault,changed,alert,quiet_at,fired_at,labels", CASES, ids=[case[0] for case in CASES])
def test_each_alert_fires_on_its_fault_after_its_for(tmp_path, fault, changed, alert, quiet_at, fired_at, labels):
    rules = yaml.safe_load(render_rules())
    for rule in rules["groups"][0]["rules"]:
        rule.pop("annotations")  # promtool compares them too; their templates are checked by check rules above
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(rules))
    severity = next(rule["labels"]["severity"] for rule in rules["groups"][0]["rules"] if rule["alert"] == alert)
    healthy_checks = [{"eval_time": "20m", "alertname": name, "exp_alerts": []} for name in ALERTS]
    tests = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": [
        {"name": "healthy", "interval": "1m", "input_series": series(), "alert_rule_test": healthy_checks},
        {"name": fault, "interval": "1m", "input_series": series(**changed), "alert_rule_test": [
            {"eval_time": quiet_at, "alertname": alert, "exp_alerts": []},
            {"eval_time": fired_at, "alertname": alert, "exp_alerts": [{"exp_labels": dict(labels, severity=severity)}]},
        ]},
    ]}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests))
    ran = subprocess.run([PROMTOOL, "test", "rules", str(tmp_path / "tests.yml")], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def known_jmx_metrics():
    """The names MirrorMaker's metrics rules (templates/metrics.yml.j2) give, `$1` parts as patterns."""
    names = re.findall(r"^\s+name: (\S+)", (ROLE / "templates" / "metrics.yml.j2").read_text(), re.M)
    return [re.compile("^" + re.sub(r"\\\$\d", "[a-z_]+", re.escape(name)) + "(_min|_max|_avg)?$") for name in names]


def unknown_metrics(expr):
    words = set(re.findall(r"\b(kafka_mirror[a-z0-9_]*)\b", expr))
    return {word for word in words if word not in METRICS and not any(pattern.match(word) for pattern in known_jmx_metrics())}


def test_dashboard_names_only_known_metrics_and_flows():
    dashboard = json.loads((ROLE / "files" / "grafana-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    assert len(exprs) >= 15 and all(unknown_metrics(expr) == set() for expr in exprs), [e for e in exprs if unknown_metrics(e)]
    used = {word for expr in exprs for word in re.findall(r"\b(kafka_mirror_[a-z0-9_]+)\b", expr)}
    assert {"kafka_mirror_lag_records", "kafka_mirror_partition_lag_records", "kafka_mirror_checkpoint_age_seconds",
            "kafka_mirror_stale_state_findings", "kafka_mirror_topic_drift_findings", "kafka_mirror_validation_passed"} <= used
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])
    assert [var["name"] for var in dashboard["templating"]["list"]] == ["datasource", "flow"]
