# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation job over GSSAPI (found by the lab's first Kerberos run, tests/integration/real_kafka/test_kerberos_mirror.py):
PyPI's confluent-kafka wheels have a librdkafka without GSSAPI, so `auto` must read with kafka-python, and kafka-python takes no
keytab, so the job logs in with kinit into a credential cache of its own."""
from __future__ import annotations

import os

import pytest

from mirror_validation import connection as connection_module
from mirror_validation import kafka_reader
from mirror_validation.connection import Connection, kerberos_login
from mirror_validation.errors import ValidationUnavailable

KERBEROS = dict(bootstrap_servers="wn0-primar:9098", security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI",
                sasl_kerberos_principal="mm2-kerberos@KAFKAOPS.LAB", sasl_kerberos_keytab="/etc/kafkaops/mm2.keytab")
FAKE_KINIT = """#!/bin/sh
echo "$KRB5CCNAME $*" >> "{calls}"
[ "$4" = "mm2-kerberos@KAFKAOPS.LAB" ] || {{ echo "kinit: Password incorrect while getting initial credentials" >&2; exit 1; }}
"""


@pytest.fixture
def kinit(tmp_path, monkeypatch):
    calls = tmp_path / "calls"
    script = tmp_path / "bin" / "kinit"
    script.parent.mkdir()
    script.write_text(FAKE_KINIT.format(calls=calls))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}:{os.environ['PATH']}")
    monkeypatch.delenv(connection_module.CCACHE_VARIABLE, raising=False)
    monkeypatch.setattr(connection_module, "_KERBEROS_CACHES", {})
    return calls


@pytest.mark.parametrize("supports, expected", [(False, "kafka-python"), (True, "confluent-kafka")])
def test_auto_reads_gssapi_with_kafka_python_where_librdkafka_lacks_it(monkeypatch, supports, expected):
    monkeypatch.setattr(kafka_reader, "confluent_available", lambda: True)
    monkeypatch.setattr(kafka_reader, "_CONFLUENT_MECHANISMS", {"GSSAPI": supports, "SCRAM-SHA-512": True})
    gssapi, scram = Connection(**KERBEROS), Connection(bootstrap_servers="b:9095", security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512")
    assert kafka_reader.resolve_client("auto", [gssapi, scram]) == expected
    assert kafka_reader.resolve_client("auto", [scram, Connection(bootstrap_servers="b:9092")]) == "confluent-kafka"
    assert kafka_reader.resolve_client("confluent-kafka", [gssapi]) == "confluent-kafka"  # asked for: as asked


def test_the_probe_names_the_mechanism_librdkafka_refuses(monkeypatch):
    pytest.importorskip("confluent_kafka")
    monkeypatch.setattr(kafka_reader, "_CONFLUENT_MECHANISMS", {})
    assert kafka_reader.confluent_supports("SCRAM-SHA-512") is True
    assert kafka_reader.confluent_supports("GSSAPI") in (True, False)  # PyPI's wheels: False; a librdkafka with Cyrus SASL: True


def test_a_keytab_logs_in_once_into_a_cache_of_the_process(kinit):
    kerberos_login(Connection(**KERBEROS))
    cache = os.environ[connection_module.CCACHE_VARIABLE]
    assert cache.startswith("FILE:") and "kafkaops-validation-krb5-" in cache
    kerberos_login(Connection(**{**KERBEROS, "bootstrap_servers": "wn0-second:9098"}))  # the other side, same identity
    assert kinit.read_text().splitlines() == [f"{cache} -k -t /etc/kafkaops/mm2.keytab mm2-kerberos@KAFKAOPS.LAB"]
    with pytest.raises(ValidationUnavailable, match="one credential cache per process"):
        kerberos_login(Connection(**{**KERBEROS, "sasl_kerberos_principal": "other@KAFKAOPS.LAB"}))


def test_a_refused_keytab_is_unavailable_naming_the_principal(kinit):
    with pytest.raises(ValidationUnavailable, match=r"kinit -k -t /etc/kafkaops/mm2.keytab intruder@KAFKAOPS.LAB failed \(1\): .*Password incorrect"):
        kerberos_login(Connection(**{**KERBEROS, "sasl_kerberos_principal": "intruder@KAFKAOPS.LAB"}))
    assert connection_module.CCACHE_VARIABLE not in os.environ


def test_no_keytab_or_another_mechanism_runs_no_kinit(kinit):
    kerberos_login(Connection(**{**KERBEROS, "sasl_kerberos_keytab": None}))
    kerberos_login(Connection(bootstrap_servers="b:9095", security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512"))
    assert not kinit.exists() and connection_module.CCACHE_VARIABLE not in os.environ
