# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role kafka_topics through the sandbox inventory: connection from group vars, one batched call, copy from the source."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support.ansible_play import run_playbook

pytestmark = pytest.mark.integration
ALIGN_TASK = "kafkaops.mirror.kafka_topics : Align the target cluster's topics in one batched call"


def role_play(tmp_path: Path, role_vars: dict) -> Path:
    # mirror_host first, as playbooks/mirror.yml does (the provider_state fixture made its virtualenv already).
    play = [{"name": "kafka_topics role", "hosts": "mirrormaker", "gather_facts": False,
             "roles": [{"role": "kafkaops.mirror.mirror_host"}, {"role": "kafkaops.mirror.kafka_topics", "vars": role_vars}]}]
    path = tmp_path / "play.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    return path


def run_role(target, tmp_path, role_vars, **kwargs):
    return run_playbook(role_play(tmp_path, role_vars), inventory=Path(target.state["dir"]) / "inventory.yml", **kwargs)


def test_role_applies_the_list_with_inventory_connection(target, tmp_path):
    name = target.unique("role")
    role_vars = {"kafka_topics_list": [{"name": name, "partitions": 2, "configs": {"retention.ms": 7200000}}]}

    planned = run_role(target, tmp_path, role_vars, check=True, diff=True)
    assert not planned.failed, planned.stdout[-3000:]
    assert planned.task(ALIGN_TASK)["created"] == [name]
    assert name not in target.topics()

    applied = run_role(target, tmp_path, role_vars)
    assert not applied.failed and applied.changed_count == 1, applied.stdout[-3000:]
    assert target.topics()[name]["partitions"] == 2
    assert target.configs(name)[name]["retention.ms"] == "7200000"

    again = run_role(target, tmp_path, role_vars)
    assert not again.failed and again.changed_count == 0


def test_role_copies_the_source_topics_with_the_mirrormaker_prefix(source, target, tmp_path):
    stem = source.unique("rolecp")
    source.run("kafka_topic", dict(name=f"{stem}-events", partitions=3, configs={"retention.ms": 5400000}))
    role_vars = {"kafka_topics_copy_from_source": True, "kafka_topics_copy_topics": f"{stem}-.*", "kafka_topics_copy_rename_prefix": "primary."}
    applied = run_role(target, tmp_path, role_vars, diff=True)
    assert not applied.failed, applied.stdout[-3000:]
    assert applied.task(ALIGN_TASK)["created"] == [f"primary.{stem}-events"]
    assert target.topics()[f"primary.{stem}-events"]["partitions"] == 3
    assert target.configs(f"primary.{stem}-events")[f"primary.{stem}-events"]["retention.ms"] == "5400000"
    assert run_role(target, tmp_path, role_vars).changed_count == 0


# What is refused here: the role's argument spec and the module's name check, before any change (the module's batch checks
# are in test_kafka_topic_module.py).
def test_role_refuses_bad_input_before_any_change(target, tmp_path):
    good = target.unique("rolegood")
    bad_entry = run_role(target, tmp_path, {"kafka_topics_list": [{"name": good, "partitions": 1}, {"name": "no spaces allowed", "partitions": 1}]})
    assert bad_entry.failed
    assert "topics[1] ('no spaces allowed'): topic name" in bad_entry.stdout
    assert good not in target.topics()

    bad_type = run_role(target, tmp_path, {"kafka_topics_copy_from_source": "perhaps"})
    assert bad_type.failed and "kafka_topics_copy_from_source" in bad_type.stdout
