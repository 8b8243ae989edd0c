# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topic settings drift on the noida sandbox: kafka_mirror_topic_drift_info reports a drifted remote topic and a missing one,
and the kafka_topics role's kafka_topics_align_to_source repairs them (check mode first, then for real, then unchanged).

The topics are made and read back with independent kafka-python admins (the kafka_admin fixture), never the collection's code.
"""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml
from kafka.admin import ConfigResource, NewTopic

from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO
from tests.support.kafka_targets import target_for

pytestmark = pytest.mark.integration
SOURCE, TARGET = "primary", "secondary"
DRIFT_TASK = "kafkaops.mirror.kafka_topics : Compare the remote topics' settings with their source topics"
ALIGN_TASK = "kafkaops.mirror.kafka_topics : Align the target cluster's topics in one batched call"
# The drifted remote topic: half the partitions, the target's default cleanup.policy (delete) and max.message.bytes under a
# compacted source with a larger limit, a shorter retention and another compression.
SOURCE_EVENTS = {"cleanup.policy": "compact", "max.message.bytes": "2097152", "retention.ms": "86400000"}
TARGET_EVENTS = {"retention.ms": "3600000", "compression.type": "gzip"}
COMPARED = ("cleanup.policy", "retention.ms", "retention.bytes", "min.insync.replicas", "max.message.bytes", "compression.type")


def create(admin, name, partitions, configs):
    admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs)])


def read_back(admin, names):
    """{topic: (partitions, {compared key: value})} read with an independent admin; topics that do not exist are left out."""
    described = {topic["name"]: len(topic["partitions"]) for topic in admin.describe_topics(names) if not topic["error_code"]}
    configs = admin.describe_configs([ConfigResource("TOPIC", name) for name in described], config_filter="all").get("topic", {})
    return {name: (partitions, {key: entry["value"] for key, entry in configs[name].items() if key in COMPARED})
            for name, partitions in described.items()}


@pytest.fixture(name="drifted")
def drifted_topics(sandbox, kafka_admin):
    stem = "drift-%s" % uuid.uuid4().hex[:6]
    source, target = kafka_admin(sandbox, SOURCE), kafka_admin(sandbox, TARGET)
    create(source, f"{stem}-events", 4, SOURCE_EVENTS)
    create(source, f"{stem}-audit", 2, {"retention.ms": "3600000"})
    create(target, f"{SOURCE}.{stem}-events", 2, TARGET_EVENTS)
    return dict(stem=stem, source=source, target=target, events=f"{SOURCE}.{stem}-events", audit=f"{SOURCE}.{stem}-audit")


def drift_args(sandbox, stem, **extra):
    return dict(dict(source={"bootstrap_servers": [sandbox["clusters"][SOURCE]["bootstrap_servers"]]}, source_alias=SOURCE,
                     target_alias=TARGET, topics=[f"{stem}-.*"]), **extra)


def test_the_module_reports_what_breaks_the_mirror_and_fails_on_it(sandbox, drifted):
    secondary = target_for(sandbox, TARGET)
    failed = secondary.run("kafka_mirror_topic_drift_info", drift_args(sandbox, drifted["stem"]))
    assert failed.get("failed") and "break the mirror" in failed["msg"], failed
    assert f"{drifted['events']}: 2 partition(s) on the target, 4 on the source" in failed["msg"]

    report = secondary.run("kafka_mirror_topic_drift_info", drift_args(sandbox, drifted["stem"], fail_on_error=False))
    assert not report.get("failed") and not report["changed"], report
    found = {(item["remote_topic"], item["check"]): (item["severity"], item["source"], item["target"]) for item in report["findings"]}
    assert found == {
        (drifted["audit"], "topic"): ("warning", None, None),
        (drifted["events"], "partitions"): ("error", 4, 2),
        (drifted["events"], "cleanup.policy"): ("error", "compact", "delete"),
        (drifted["events"], "max.message.bytes"): ("error", "2097152", "1048588"),
        (drifted["events"], "retention.ms"): ("warning", "86400000", "3600000"),
        (drifted["events"], "compression.type"): ("info", "producer", "gzip"),
    }
    assert report["summary"] == {"topics": 2, "in_sync": 0, "missing": 1, "errors": 3, "warnings": 2, "infos": 1}
    assert report["target_brokers"] == 1

    bad = secondary.run("kafka_mirror_topic_drift_info", drift_args(sandbox, drifted["stem"], topics=["events("]))
    assert bad.get("failed") and "nothing was read" in bad["msg"] and "is not a regular expression" in bad["msg"]


def role_play(tmp_path: Path, stem: str) -> Path:
    # The modules run with the mirror_host role's virtualenv, which mirror_host_ready made: its interpreter is set here as
    # that role's fact would set it, so that each play runs only kafka_topics.
    venv = yaml.safe_load((REPO / "roles" / "mirror_host" / "defaults" / "main.yml").read_text())["mirror_host_venv"]
    role_vars = {"kafka_topics_align_to_source": True, "kafka_topics_align_topics": [f"{stem}-.*"]}
    play = [{"name": "kafka_topics align", "hosts": "mirrormaker", "gather_facts": False, "vars": {"ansible_python_interpreter": venv + "/bin/python"},
             "roles": [{"role": "kafkaops.mirror.kafka_topics", "vars": role_vars}]}]
    path = tmp_path / "align.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    return path


def test_the_role_aligns_the_remote_topics_with_check_mode_and_diff(sandbox, drifted, mirror_host_ready, tmp_path):
    mirror_host_ready(sandbox)
    inventory = Path(sandbox["dir"]) / "inventory.yml"
    play = role_play(tmp_path, drifted["stem"])
    names = [drifted["events"], drifted["audit"]]
    before = read_back(drifted["target"], names)

    planned = run_playbook(play, inventory=inventory, check=True, diff=True)
    assert not planned.failed, planned.stdout[-3000:]
    plan = planned.task(ALIGN_TASK)
    assert (plan["created"], plan["updated"]) == ([drifted["audit"]], [drifted["events"]]), plan
    assert plan["changes"][drifted["events"]]["after"] == {
        "partitions": 4, "configs": {"cleanup.policy": "compact", "compression.type": "producer", "max.message.bytes": "2097152",
                                     "retention.ms": "86400000"}}
    assert '"cleanup.policy": "compact"' in planned.stdout  # the diff
    assert read_back(drifted["target"], names) == before, "check mode changed the target"

    applied = run_playbook(play, inventory=inventory)
    assert not applied.failed and applied.task(ALIGN_TASK)["changed"], applied.stdout[-3000:]
    source = read_back(drifted["source"], [f"{drifted['stem']}-events", f"{drifted['stem']}-audit"])
    after = read_back(drifted["target"], names)
    assert after[drifted["events"]] == source[f"{drifted['stem']}-events"]
    assert after[drifted["audit"]] == source[f"{drifted['stem']}-audit"]

    again = run_playbook(play, inventory=inventory)
    assert not again.failed and again.changed_count == 0, again.stdout[-3000:]
    assert again.task(DRIFT_TASK)["summary"] == {"topics": 2, "in_sync": 2, "missing": 0, "errors": 0, "warnings": 0, "infos": 0}
