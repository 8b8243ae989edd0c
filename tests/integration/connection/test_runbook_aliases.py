# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runbook's aliases end to end: playbooks/mirror.yml with kafka_cluster_alias primary-kafka-cluster and
secondary-kafka-cluster (not valid as Ansible group names, so the groups stay primary_kafka / secondary_kafka) and no
mirror_source_alias / mirror_target_alias anywhere. An independent consumer (plain kafka-python, mm2_kafka_io) then
finds every record of the source topic in primary-kafka-cluster.<topic> on the target.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from ansible_runner import REPO, run_playbook
from mirrormaker2 import mm2_kafka_io as kafka_io

from sandbox import api

pytestmark = pytest.mark.integration

MIRROR = REPO / "playbooks" / "mirror.yml"
SUBNET = 8  # a sandbox of its own beside the session's
ALIASES = {"primary": "primary-kafka-cluster", "secondary": "secondary-kafka-cluster"}
TOPIC, PARTITIONS, RECORDS = "runbook-orders", 2, 300
REMOTE = ALIASES["primary"] + "." + TOPIC


@pytest.fixture(name="runbook", scope="module")
def runbook_mirror(tmp_path_factory, sandbox_net):
    directory = tmp_path_factory.mktemp("runbook-aliases")
    state = api.up(directory, provider="noida", net=sandbox_net, subnet=SUBNET)
    try:
        primary = state["clusters"]["primary"]["bootstrap_servers"]
        kafka_io.create(primary, TOPIC, PARTITIONS)
        kafka_io.produce(primary, TOPIC, RECORDS, PARTITIONS)
        inventory = yaml.safe_load((Path(directory) / "inventory.yml").read_text())
        inventory["all"].get("vars", {}).pop("mirror_source_alias", None)
        inventory["all"].get("vars", {}).pop("mirror_target_alias", None)
        for cluster, alias in ALIASES.items():
            inventory["all"]["children"][cluster + "_kafka"]["vars"]["kafka_cluster_alias"] = alias
        runbook_inventory = Path(directory) / "runbook-inventory.yml"
        runbook_inventory.write_text(yaml.safe_dump(inventory))
        reports = Path(directory) / "reports"
        play = run_playbook(MIRROR, inventory=runbook_inventory, timeout=1500, extra_vars={
            "mirror_topics": TOPIC, "mirror_validation_topics": TOPIC, "mirror_validation_report_dir": str(reports),
            "mirrormaker2_max_lag": 0, "mirrormaker2_health_timeout": 180, "mirrormaker2_health_poll_interval": 2})
        yield state, play, reports
    finally:
        api.down(directory)


def test_mirror_yml_runs_every_stage_with_the_runbook_aliases(runbook):
    _state, play, _reports = runbook
    assert not play.failed, play.stdout[-6000:]
    assert "skipping: no hosts matched" not in play.stdout
    ran = {entry["action"] for entry in play.tasks if entry["status"] == "ok"}
    assert {"kafkaops.mirror.kafka_cluster_info", "kafkaops.mirror.kafka_topic", "kafkaops.mirror.kafka_mirror_status"} <= ran


def test_the_target_holds_every_record_under_the_runbook_prefix(runbook):
    state, play, _reports = runbook
    assert not play.failed, play.stdout[-6000:]
    source = kafka_io.read_all(state["clusters"]["primary"]["bootstrap_servers"], TOPIC)
    assert sum(len(batch) for batch in source.values()) == RECORDS
    # Keys, values, headers and timestamps, partition by partition.
    assert kafka_io.read_all(state["clusters"]["secondary"]["bootstrap_servers"], REMOTE) == source


def test_validation_passed_on_the_prefixed_topic(runbook):
    _state, play, reports = runbook
    assert not play.failed, play.stdout[-6000:]
    [report_file] = list(reports.rglob("report.json"))
    report = json.loads(report_file.read_text())
    assert report["exit_code"] == 0, report["message"]
    assert REMOTE in json.dumps(report)
