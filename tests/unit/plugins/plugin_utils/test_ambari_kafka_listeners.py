# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Listener handling for ambari_kafka: names and security protocols kept (plugin_utils/kafka_listeners), and the
IP-advertising snippet run in bash against a server.properties as Ambari writes it."""
from __future__ import annotations

import os
import subprocess

import jinja2
import pytest

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.kafka_listeners import ListenersError, bound_to_all_interfaces, checked, parse
from tests.support.checkout import REPO

SNIPPET = REPO / "roles" / "ambari_kafka" / "templates" / "ip_advertising.sh.j2"


@pytest.mark.parametrize(
    "listeners, protocol_map, expected",
    [
        ("SASL_PLAINTEXT://wn0-primar.x.net:9092", None, "SASL_PLAINTEXT://0.0.0.0:9092"),
        ("PLAINTEXT://localhost:9092,SASL_SSL://:9093", None, "PLAINTEXT://0.0.0.0:9092,SASL_SSL://0.0.0.0:9093"),
        ("INTERNAL://[::1]:9092, EXTERNAL://wn0:9094", "INTERNAL:SASL_PLAINTEXT,EXTERNAL:SSL", "INTERNAL://0.0.0.0:9092,EXTERNAL://0.0.0.0:9094"),
    ],
)
def test_bound_to_all_keeps_every_listener_name_and_port(listeners, protocol_map, expected):
    assert bound_to_all_interfaces(listeners, protocol_map) == expected


def test_parse_reports_each_listeners_protocol_from_the_map():
    """KafkaConfig: a listener name is its own protocol unless listener.security.protocol.map maps it."""
    assert parse("INTERNAL://wn0:9092,SSL://wn0:9093", "INTERNAL:SASL_PLAINTEXT") == [
        ("INTERNAL", "wn0", 9092, "SASL_PLAINTEXT"), ("SSL", "wn0", 9093, "SSL")]


@pytest.mark.parametrize(
    "listeners, protocol_map, message",
    [
        ("INTERNAL://wn0:9092", None, "listener name INTERNAL .* not a security protocol .* add INTERNAL:<protocol>"),
        ("PLAINTEXT://wn0", None, "is not NAME://host:port"),
        ("", None, "listeners is empty"),
        ("PLAINTEXT://a:1,PLAINTEXT://b:2", None, "appears twice"),
        ("X://a:1", "X:KERBEROS", "not NAME:PROTOCOL"),
    ],
)
def test_bad_listeners_are_refused_with_the_reason(listeners, protocol_map, message):
    with pytest.raises(ListenersError, match=message):
        checked(listeners, protocol_map)


def run_snippet(tmp_path, server_properties, ip="10.0.0.15"):
    """Run the rendered snippet as kafka-env.sh would at broker start, with `hostname -i` answering `ip`."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "hostname").write_text(f"#!/bin/sh\necho '{ip} fe80::1'\n")
    (fake_bin / "hostname").chmod(0o755)
    properties = tmp_path / "server.properties"
    properties.write_text(server_properties)
    script = jinja2.Template(SNIPPET.read_text()).render(ambari_kafka_server_properties_path=str(properties))
    env = dict(os.environ, PATH=f"{fake_bin}:{os.environ['PATH']}")
    subprocess.run(["bash", "-e", "-c", script], check=True, env=env)
    subprocess.run(["bash", "-e", "-c", script], check=True, env=env)  # kafka-env.sh is sourced at every start
    return properties.read_text().splitlines()


def test_snippet_advertises_the_ip_on_every_listener_with_its_own_protocol(tmp_path):
    # What Ambari's kafka.py writes on an ESP cluster: localhost replaced by the FQDN, advertised.listeners = listeners.
    lines = run_snippet(tmp_path, "broker.id=1001\nlisteners=SASL_PLAINTEXT://wn0-primar.x.net:9092,INTERNAL://wn0-primar.x.net:9095\n"
                                  "listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT\n"
                                  "advertised.listeners=SASL_PLAINTEXT://wn0-primar.x.net:9092,INTERNAL://wn0-primar.x.net:9095\n")
    assert [line for line in lines if line.startswith("advertised.listeners=")] == [
        "advertised.listeners=SASL_PLAINTEXT://10.0.0.15:9092,INTERNAL://10.0.0.15:9095"]
    assert "listeners=SASL_PLAINTEXT://wn0-primar.x.net:9092,INTERNAL://wn0-primar.x.net:9095" in lines
    assert "listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT" in lines


def test_snippet_on_plaintext_matches_the_runbook(tmp_path):
    lines = run_snippet(tmp_path, "listeners=PLAINTEXT://0.0.0.0:9092\nadvertised.host.name=wn0\n")
    assert lines[-1] == "advertised.listeners=PLAINTEXT://10.0.0.15:9092" and "advertised.host.name=wn0" in lines


def test_snippet_without_listeners_leaves_the_file_alone(tmp_path):
    assert run_snippet(tmp_path, "broker.id=1\n") == ["broker.id=1"]
