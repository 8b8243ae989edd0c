# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ambari_kafka as mirror.yml runs it on a source cluster: only IP advertising changes; listeners (SASL_PLAINTEXT on an
ESP cluster) and auto.create.topics.enable stay as they were; the snippet advertises the IP on the SASL listener."""
from __future__ import annotations

import os
import subprocess

import pytest

from tests.support.ambari_emulator import cluster_hosts
from tests.support.ansible_play import run_tasks

pytestmark = pytest.mark.integration

BEGIN, END = "# BEGIN kafkaops.mirror ip advertising", "# END kafkaops.mirror ip advertising"


def apply_source_role(emu, **role_vars):
    """The source play of playbooks/mirror.yml: IP advertising on, everything else the role's defaults."""
    variables = {
        "ambari_url": emu.url, "ambari_cluster_name": emu.config["cluster_name"], "ambari_username": "admin",
        "ambari_password": emu.config["password"], "ambari_kafka_poll_interval": 0.2, "ambari_kafka_restart_timeout": 60,
        "ambari_kafka_ip_advertising": True, **role_vars,
    }
    return run_tasks([{"name": "apply ambari_kafka", "ansible.builtin.include_role": {"name": "kafkaops.mirror.ambari_kafka"}, "vars": variables}],
                     diff=True)


def snippet(content):
    lines = content.split("\n")
    return "\n".join(lines[lines.index(BEGIN) + 1:lines.index(END)])


def run_at_broker_start(tmp_path, script, server_properties):
    """What kafka-env.sh does at a broker start on the node (`hostname -i` answering 10.1.2.3), against server.properties
    as Ambari's KAFKA script (kafka.py) writes it."""
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir(exist_ok=True)
    (fake_bin / "hostname").write_text("#!/bin/sh\necho 10.1.2.3\n")
    (fake_bin / "hostname").chmod(0o755)
    path = tmp_path / "server.properties"
    path.write_text(server_properties)
    subprocess.run(["bash", "-e", "-c", script.replace("/usr/hdp/current/kafka-broker/conf/server.properties", str(path))],
                   check=True, env=dict(os.environ, PATH=f"{fake_bin}:{os.environ['PATH']}"))
    return path.read_text().splitlines()


def test_esp_source_keeps_sasl_listeners_and_auto_create_and_advertises_ips(make_emulator, tmp_path):
    emu = make_emulator("esp", esp=True)
    stock = emu.properties("kafka-broker")
    broker_tag = emu.desired_tag("kafka-broker")

    play = apply_source_role(emu)
    assert not play.failed, play.stdout[-4000:]

    # A fresh GET: kafka-broker has no new version and keeps SASL_PLAINTEXT and auto-create as they were.
    assert emu.desired_tag("kafka-broker") == broker_tag and emu.properties("kafka-broker") == stock
    assert stock["listeners"] == "SASL_PLAINTEXT://localhost:9092" and stock["auto.create.topics.enable"] == "false"
    # Only the stale brokers restarted, once each and one at a time; ZooKeeper was not touched.
    log = emu.restarts()
    assert sorted((e["host_name"], e["component"]) for e in log) == sorted(
        (h["host_name"], "KAFKA_BROKER") for h in emu.config["hosts"] if "KAFKA_BROKER" in h["components"])
    assert emu.stale() == []

    # The snippet Ambari stores, run as at a broker start on an ESP node (Kerberos on: kafka.py sets advertised.listeners
    # to the listeners with the FQDN).
    fqdn = "wn0-primar.emul.internal.cloudapp.net"
    lines = run_at_broker_start(tmp_path, snippet(emu.properties("kafka-env")["content"]),
                                f"listeners=SASL_PLAINTEXT://{fqdn}:9092\nadvertised.listeners=SASL_PLAINTEXT://{fqdn}:9092\n"
                                "security.inter.broker.protocol=SASL_PLAINTEXT\n")
    assert [line for line in lines if line.startswith("advertised.listeners")] == ["advertised.listeners=SASL_PLAINTEXT://10.1.2.3:9092"]
    assert f"listeners=SASL_PLAINTEXT://{fqdn}:9092" in lines

    again = apply_source_role(emu)
    assert not again.failed and again.changed_count == 0 and len(emu.restarts()) == len(log)


def test_source_keeps_auto_create_on_when_it_was_on(emulator):
    props = dict(emulator.properties("kafka-broker"), **{"auto.create.topics.enable": "true"})
    assert emulator.put_config("kafka-broker", props, "version-autocreate-on")[0] == 200
    play = apply_source_role(emulator)
    assert not play.failed, play.stdout[-4000:]
    assert emulator.desired_tag("kafka-broker") == "version-autocreate-on"
    assert emulator.properties("kafka-broker")["auto.create.topics.enable"] == "true"


def test_bind_all_interfaces_keeps_the_sasl_listener(make_emulator):
    emu = make_emulator("esp-bind", esp=True)
    play = apply_source_role(emu, ambari_kafka_bind_all_interfaces=True)
    assert not play.failed, play.stdout[-4000:]
    assert emu.properties("kafka-broker")["listeners"] == "SASL_PLAINTEXT://0.0.0.0:9092"


def test_listener_name_without_protocol_fails_before_any_change(make_emulator):
    emu = make_emulator("esp-bad", esp=True)
    play = apply_source_role(emu, ambari_kafka_listeners="INTERNAL://0.0.0.0:9092")
    assert play.failed and "listener name INTERNAL" in play.stdout and "listener.security.protocol.map" in play.stdout
    assert len(emu.config_versions()) == 1 and emu.requests() == []


def mirror_yml_source_play(emu, **asked):
    """The role as playbooks/mirror.yml's source play passes it when nothing is asked: kafka-env left as it is, and stale
    brokers restarted only when the user set mirror_source_ip_advertising."""
    variables = {
        "ambari_url": emu.url, "ambari_cluster_name": emu.config["cluster_name"], "ambari_username": "admin",
        "ambari_password": emu.config["password"], "ambari_kafka_poll_interval": 0.2, "ambari_kafka_restart_timeout": 60,
        "ambari_kafka_ip_advertising": None, "ambari_kafka_restart_stale": False, **asked,
    }
    return run_tasks([{"name": "apply ambari_kafka", "ansible.builtin.include_role": {"name": "kafkaops.mirror.ambari_kafka"}, "vars": variables}],
                     diff=True)


def test_an_unasked_run_leaves_stale_brokers_and_an_existing_snippet_alone(make_emulator):
    """A source with the MirrorMaker 1 runbook's snippet and a change someone left unrestarted: a default mirror.yml run
    changes no config, restarts nothing, and says which brokers are stale; asked, it restarts them."""
    hosts = cluster_hosts()
    stale = [hosts[1]["host_name"], hosts[2]["host_name"]]
    emu = make_emulator("runbook-source", hosts=hosts, stale_at_start=[[h, "KAFKA_BROKER"] for h in stale])
    assert not apply_source_role(emu, ambari_kafka_restart=False).failed  # the runbook's snippet, not applied yet
    versions, content = len(emu.config_versions()), emu.properties("kafka-env")["content"]
    assert BEGIN in content

    play = mirror_yml_source_play(emu)
    assert not play.failed, play.stdout[-3000:]
    assert play.changed_count == 0 and emu.restarts() == []
    assert len(emu.config_versions()) == versions and emu.properties("kafka-env")["content"] == content
    warning = play.task("kafkaops.mirror.ambari_kafka : Say which Kafka brokers are stale and left running, and why")["msg"]
    assert all(host["host_name"] in warning for host in hosts if "KAFKA_BROKER" in host["components"]), warning
    assert "they are not restarted" in warning and "ambari_kafka_restart_stale" in warning
    assert len(emu.stale()) == 3

    asked = mirror_yml_source_play(emu, ambari_kafka_ip_advertising=True, ambari_kafka_restart_stale=True)
    assert not asked.failed, asked.stdout[-3000:]
    assert len(emu.config_versions()) == versions and emu.stale() == [] and len(emu.restarts()) == 3
