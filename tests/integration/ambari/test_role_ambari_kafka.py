# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ambari_kafka role against a standalone emulator: settings, IP-advertising block, restart, idempotency."""
from __future__ import annotations

import pytest

from sandbox import broker_config
from tests.support.ansible_play import run_tasks

pytestmark = pytest.mark.integration

MARKER = "# BEGIN kafkaops.mirror ip advertising"
BROKER_TASK = "kafkaops.mirror.ambari_kafka : Set the kafka-broker properties asked for; every other property keeps its value"
ENV_TASK = "kafkaops.mirror.ambari_kafka : Add or remove the IP-advertising snippet in kafka-env"
RESTART_TASK = "kafkaops.mirror.ambari_kafka : Restart the Kafka brokers whose configs are stale"


def apply_role(emu, check=False, **role_vars):
    variables = {
        "ambari_url": emu.url,
        "ambari_cluster_name": emu.config["cluster_name"],
        "ambari_username": "admin",
        "ambari_password": emu.config["password"],
        "ambari_kafka_poll_interval": 0.2,
        "ambari_kafka_restart_timeout": 60,
    }
    variables.update(role_vars)
    return run_tasks([{"name": "apply ambari_kafka", "ansible.builtin.include_role": {"name": "kafkaops.mirror.ambari_kafka"}, "vars": variables}],
                     check=check, diff=True)


def test_role_applies_settings_restarts_and_is_idempotent(emulator):
    play = apply_role(emulator, ambari_kafka_ip_advertising=True, ambari_kafka_auto_create_topics=True,
                      ambari_kafka_extra_properties={"num.partitions": 3}, ambari_kafka_bind_all_interfaces=True)
    assert not play.failed, play.stdout[-3000:]
    broker = emulator.properties("kafka-broker")
    assert broker["listeners"] == "PLAINTEXT://0.0.0.0:9092"
    assert broker["auto.create.topics.enable"] == "true" and broker["num.partitions"] == "3"
    content = emulator.properties("kafka-env")["content"]
    assert content.count(MARKER) == 1 and ">> /usr/hdp/current/kafka-broker/conf/server.properties" in content
    # One version per config type, then one restart request per broker host (rolling), all completed.
    assert len(emulator.config_versions()) == 3
    assert [r["Requests"]["request_status"] for r in emulator.requests()] == ["COMPLETED"] * 3
    assert emulator.stale() == []
    # What the restart applied to the sandbox broker, read with the sandbox's own parser.
    applied = broker_config.load(emulator.workdir)
    assert applied.advertise_ip and applied.auto_create_topics

    again = apply_role(emulator, ambari_kafka_ip_advertising=True, ambari_kafka_auto_create_topics=True,
                       ambari_kafka_extra_properties={"num.partitions": 3}, ambari_kafka_bind_all_interfaces=True)
    assert not again.failed and again.changed_count == 0
    assert len(emulator.config_versions()) == 3 and len(emulator.requests()) == 3


def test_role_check_mode_changes_nothing(emulator):
    play = apply_role(emulator, check=True, ambari_kafka_ip_advertising=True, ambari_kafka_auto_create_topics=True)
    assert not play.failed, play.stdout[-3000:]
    assert play.task(BROKER_TASK)["changed"]
    assert play.task(ENV_TASK)["changed"]
    assert len(play.task(RESTART_TASK)["restarted"]) == 3 and play.task(RESTART_TASK)["requests"] == []
    assert len(emulator.config_versions()) == 1 and emulator.requests() == [] and emulator.stale() == []
    assert MARKER not in emulator.properties("kafka-env")["content"]


def test_role_turns_ip_advertising_off_again(emulator):
    assert not apply_role(emulator, ambari_kafka_ip_advertising=True).failed
    stock_versions = len(emulator.config_versions())
    play = apply_role(emulator, ambari_kafka_ip_advertising=False)
    assert not play.failed and play.task(ENV_TASK)["changed"]
    assert MARKER not in emulator.properties("kafka-env")["content"]
    assert len(emulator.config_versions()) == stock_versions + 1
    assert not broker_config.load(emulator.workdir).advertise_ip


def test_role_without_restart_leaves_brokers_stale(emulator):
    play = apply_role(emulator, ambari_kafka_restart=False, ambari_kafka_ip_advertising=True)
    assert not play.failed and emulator.requests() == [] and len(emulator.stale()) == 3


def test_role_fails_on_failed_restart(emulator):
    emulator.faults(fail_next_request=True)
    play = apply_role(emulator, ambari_kafka_ip_advertising=True)
    assert play.failed
    result = play.task(RESTART_TASK)
    assert "ended FAILED" in result["msg"] and "Ambari request 1" in result["msg"]


def test_role_refuses_a_play_over_two_clusters(emulator, tmp_path):
    inventory = tmp_path / "two-clusters.yml"
    inventory.write_text(
        "all:\n  vars: {ansible_connection: local}\n  hosts:\n"
        f"    node-a: {{ambari_url: '{emulator.url}'}}\n"
        "    node-b: {ambari_url: 'http://127.20.50.251:8080'}\n"
    )
    task = {"name": "apply ambari_kafka", "ansible.builtin.include_role": {"name": "kafkaops.mirror.ambari_kafka"},
            "vars": {"ambari_cluster_name": "primary", "ambari_password": emulator.config["password"]}}
    play = run_tasks([task], hosts="all", inventory=inventory)
    assert play.failed and "2 different ambari_url values" in play.stdout
    assert len(emulator.config_versions()) == 1
