# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirrormaker2 role's `prometheus` entry point on the host it runs on (here the controller itself): check mode shows
the files with their content and writes nothing, the run writes the rules Prometheus' promtool accepts and the dashboard,
a second run changes nothing, a changed `for:` changes the rules, bad options fail before anything is written."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from tests.support.ansible_play import run_tasks
from tests.support.checkout import REPO

pytestmark = pytest.mark.integration

ENTRY = {"name": "kafkaops.mirror.mirrormaker2", "tasks_from": "prometheus"}
RULES_TASK = "kafkaops.mirror.mirrormaker2 : Write the alerting rules"
CHECK_TASK = "kafkaops.mirror.mirrormaker2 : Check the rules and dashboard options"


def entry_point(check=False, **settings):
    return run_tasks([{"name": "rules and dashboard", "ansible.builtin.include_role": ENTRY, "vars": settings}], check=check, diff=True)


def test_prometheus_entry_point_writes_the_rules_and_the_dashboard(tmp_path):
    rules, dashboard = tmp_path / "rules" / "kafka-mirror.yml", tmp_path / "kafka-mirror.json"
    rules.parent.mkdir()
    files = {"mirrormaker2_prometheus_rules_file": str(rules), "mirrormaker2_grafana_dashboard_file": str(dashboard)}

    bad = entry_point(mirrormaker2_prometheus_rules_file="relative.yml", mirrormaker2_alert_stopped_for="two minutes")
    said = bad.task(CHECK_TASK)["msg"]
    assert bad.failed and "'mirrormaker2_alert_stopped_for': 'two minutes'" in said and 'got "relative.yml"' in said
    assert not (REPO / "relative.yml").exists()

    preview = entry_point(check=True, **files)
    assert not preview.failed and preview.changed_count == 2, preview.stdout[-3000:]
    assert "alert: KafkaMirrorMakerStopped" in preview.task(RULES_TASK)["diff"][0]["after"]
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == []

    run = entry_point(**files)
    assert not run.failed and run.changed_count == 2, run.stdout[-3000:]
    loaded = yaml.safe_load(rules.read_text())
    assert [rule["for"] for rule in loaded["groups"][0]["rules"]] == ["2m", "15m", "5m", "2m", "0s", "10m"]
    assert json.loads(dashboard.read_text()) == json.loads((REPO / "roles" / "mirrormaker2" / "files" / "grafana-dashboard.json").read_text())
    if shutil.which("promtool"):
        checked = subprocess.run(["promtool", "check", "rules", str(rules)], capture_output=True, text=True, check=False)
        assert checked.returncode == 0, checked.stdout + checked.stderr

    again = entry_point(**files)
    assert not again.failed and again.changed_count == 0, again.stdout[-3000:]

    faster = entry_point(mirrormaker2_alert_stopped_for="30s", **files)
    assert not faster.failed and faster.changed_count == 1
    assert [rule["for"] for rule in yaml.safe_load(rules.read_text())["groups"][0]["rules"]][0] == "30s"
