# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connection options: validation, the kafka-python config they become, and the failure messages."""
from __future__ import annotations

import logging
import socket
import threading
import time

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka import client as kafka_client
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import (
    KafkaConnection,
    KafkaConnectionError,
    client_config,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import connection_option_errors, kafka_connection_argument_spec

BASE = {"bootstrap_servers": ["127.30.9.9:9092"], "security_protocol": "PLAINTEXT", "request_timeout_ms": 30000}


def params(**extra):
    return dict(BASE, **extra)


@pytest.mark.parametrize(
    "extra, expected",
    [
        ({}, []),
        ({"security_protocol": "SASL_SSL"}, ["needs sasl_mechanism"]),
        ({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512"}, ["needs sasl_plain_username and sasl_plain_password"]),
        ({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_plain_username": "u"}, ["needs sasl_plain_password"]),
        ({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI"}, []),
        ({"sasl_mechanism": "PLAIN"}, ["security_protocol is PLAINTEXT"]),
        ({"ssl_keyfile": "/k.pem"}, ["ssl_keyfile is set without ssl_certfile"]),
        ({"api_version": "2.4"}, []),
        ({"api_version": "3.7.1"}, []),
        ({"api_version": "latest"}, ["not a Kafka version"]),
        ({"bootstrap_servers": []}, ["bootstrap_servers is empty"]),
        ({"request_timeout_ms": -1}, ["request_timeout_ms must be positive"]),
    ],
)
def test_connection_option_errors(extra, expected):
    errors = connection_option_errors(params(**extra))
    assert len(errors) == len(expected)
    for error, fragment in zip(errors, expected):
        assert fragment in error


def test_client_config_passes_only_given_options_and_parses_the_version_pin():
    config = client_config(params(api_version="2.4", ssl_cafile="/ca.pem", sasl_plain_password=None))
    assert config["api_version"] == (2, 4)
    assert config["ssl_cafile"] == "/ca.pem"
    assert "sasl_plain_password" not in config
    assert config["bootstrap_timeout_ms"] == config["request_timeout_ms"] == 30000


def test_invalid_options_fail_before_any_client_is_built():
    with pytest.raises(KafkaConnectionError, match=r"127\.30\.9\.9:9092 \(security_protocol SASL_SSL\).*needs sasl_mechanism"):
        KafkaConnection(params(security_protocol="SASL_SSL"))


def test_secrets_are_no_log():
    spec = kafka_connection_argument_spec()
    assert spec["sasl_plain_password"]["no_log"] and spec["ssl_password"]["no_log"]
    assert spec is not kafka_connection_argument_spec()


def test_probe_reports_refused_tcp():
    listener = socket.socket()
    listener.bind(("127.30.9.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    assert "refuses TCP" in kafka_client.probe_address("127.30.9.1", port, timeout=1)


def test_unusable_advertised_broker_names_both_fixes(monkeypatch):
    connection = KafkaConnection(params())
    connection._cluster = {"cluster_id": "c", "controller_id": 1, "brokers": [
        {"node_id": 1, "host": "wn0-primar.example.internal.cloudapp.net", "port": 9092, "rack": None},
        {"node_id": 2, "host": "127.30.9.10", "port": 9092, "rack": None},
    ]}
    monkeypatch.setattr(kafka_client, "probe_address", lambda host, port: None if host.startswith("127.") else "does not resolve (Name or service not known)")
    with pytest.raises(KafkaConnectionError) as error:
        connection.check_advertised_brokers()
    message = str(error.value)
    assert "127.30.9.9:9092 (security_protocol PLAINTEXT)" in message
    assert "broker 1 advertised as wn0-primar.example.internal.cloudapp.net:9092 does not resolve" in message
    assert "127.30.9.10" not in message
    assert "hosts_sync" in message and "ambari_kafka" in message


def test_missing_kafka_python_uses_the_standard_message(monkeypatch):
    class FailingModule:
        def fail_json(self, **kwargs):
            raise RuntimeError(kwargs["msg"])

    monkeypatch.setattr(kafka_client, "HAS_KAFKA", False)
    with pytest.raises(RuntimeError, match="Failed to import the required Python library \\(kafka-python\\)"):
        kafka_client.ensure_kafka_python(FailingModule())


def test_admin_keeps_refusing_while_an_advertised_broker_is_unusable(monkeypatch):
    connection = KafkaConnection(params())
    monkeypatch.setattr(connection, "_build", lambda factory, config: object())
    connection._cluster = {"cluster_id": "c", "controller_id": 1, "brokers": [{"node_id": 1, "host": "wn0-x", "port": 9092, "rack": None}]}
    monkeypatch.setattr(kafka_client, "probe_address", lambda host, port: "does not resolve (Name or service not known)")
    for _attempt in range(2):
        with pytest.raises(KafkaConnectionError, match="broker 1 advertised as wn0-x:9092 does not resolve"):
            connection.admin()
    monkeypatch.setattr(kafka_client, "probe_address", lambda host, port: None)
    assert connection.admin() is connection.admin()


class _Refused(kafka_client.KafkaError):
    pass


@pytest.mark.parametrize("extra, logged, principal, refusal", [
    ({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": "mirrormaker", "sasl_plain_password": "s3cret"},
     "Bootstrap connection to bootstrap-0 failed: [Error 58] SaslAuthenticationFailedError: Authentication failed during authentication due to "
     "invalid credentials with SASL mechanism SCRAM-SHA-512 (backoff 0.20 secs)",
     "SASL user 'mirrormaker' (SCRAM-SHA-512)", "SaslAuthenticationFailedError"),
    ({"security_protocol": "SSL", "ssl_certfile": "/etc/tls/mm.pem"},
     "Connection lost: KafkaConnectionError: [SSL: SSLV3_ALERT_CERTIFICATE_UNKNOWN] sslv3 alert certificate unknown (_ssl.c:2546)",
     "the client certificate /etc/tls/mm.pem", "certificate unknown"),
    ({"security_protocol": "SSL"},
     "Connection failed: KafkaConnectionError: Handshake failed: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed "
     "certificate in certificate chain (_ssl.c:992)",
     "no client identity", "CERTIFICATE_VERIFY_FAILED"),
])
def test_a_refused_login_names_the_principal_and_the_refusal_not_the_secret(extra, logged, principal, refusal):
    def factory(**_config):
        logging.getLogger("kafka.net.manager").warning(logged)
        raise _Refused("Unable to bootstrap from 127.30.9.9:9092")

    connection = KafkaConnection(params(**extra))
    with pytest.raises(KafkaConnectionError) as raised:
        connection._build(factory, connection.config)
    message = str(raised.value)
    assert principal in message and refusal in message and "127.30.9.9:9092" in message
    assert "s3cret" not in message
    assert not logging.getLogger("kafka.net").handlers  # the capture ends with the build


def test_a_refused_login_fails_at_the_first_refusal_not_at_the_bootstrap_timeout():
    """kafka-python goes on retrying a refused login until its bootstrap timeout; the module stops at the first refusal, and a
    client the abandoned build still makes is closed."""
    release, closed = threading.Event(), threading.Event()

    class Client:
        def close(self):
            closed.set()

    def factory(**_config):
        logging.getLogger("kafka.net.manager").warning(
            "Bootstrap connection to bootstrap-0 failed: [Error 58] SaslAuthenticationFailedError: Authentication failed (backoff 0.20 secs)")
        release.wait(30)  # kafka-python's retries until bootstrap_timeout_ms
        return Client()

    connection = KafkaConnection(params(security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512",
                                        sasl_plain_username="mirrormaker", sasl_plain_password="s3cret"))
    started = time.monotonic()
    with pytest.raises(KafkaConnectionError, match="refused SASL user 'mirrormaker' .*SaslAuthenticationFailedError"):
        connection._build(factory, connection.config)
    assert time.monotonic() - started < 5
    release.set()
    assert closed.wait(5), "the client built after the refusal was left open"


def test_a_client_built_before_any_refusal_is_returned():
    client = object()
    connection = KafkaConnection(params())
    assert connection._build(lambda **_config: client, connection.config) is client


def test_a_timeout_without_a_refusal_keeps_the_reachability_message():
    def factory(**_config):
        raise _Refused("Unable to bootstrap from 127.30.9.9:9092")

    connection = KafkaConnection(params())
    with pytest.raises(KafkaConnectionError, match="Could not fetch cluster metadata"):
        connection._build(factory, connection.config)
