# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kerberos principal + keytab: kinit into a private credential cache that the kafka-python clients use, removed at close."""
from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka import client as kafka_client
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaConnectionError
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.kerberos import CCACHE_VARIABLE

GSSAPI = {"bootstrap_servers": ["127.30.9.9:9092"], "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI",
          "sasl_kerberos_principal": "mirror@EXAMPLE.COM", "request_timeout_ms": 30000}


@pytest.fixture(name="kinit")
def fake_kinit(tmp_path, monkeypatch):
    """A kinit on PATH that records its arguments and the cache it was told to write, and writes it; exit code from a file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "kinit.json"
    script = bin_dir / "kinit"
    script.write_text(
        "#!/usr/bin/env python3\n"
        "import json, os, sys\n"
        f"record = {str(record)!r}\n"
        "ccache = os.environ['KRB5CCNAME']\n"
        "calls = json.load(open(record)) if os.path.exists(record) else []\n"
        "calls.append({'argv': sys.argv[1:], 'ccache': ccache})\n"
        "json.dump(calls, open(record, 'w'))\n"
        "if os.environ.get('FAKE_KINIT_FAIL'):\n"
        "    sys.exit('kinit: Keytab contains no suitable keys for mirror@EXAMPLE.COM')\n"
        "open(ccache[len('FILE:'):], 'w').write('ticket')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
    monkeypatch.delenv(CCACHE_VARIABLE, raising=False)
    monkeypatch.setattr(kafka_client, "gssapi_available", lambda: True)
    keytab = tmp_path / "mirror.keytab"
    keytab.write_bytes(b"\x05\x02")
    return {"record": record, "keytab": str(keytab)}


def calls(kinit):
    return json.loads(kinit["record"].read_text()) if kinit["record"].exists() else []


def seen_by_clients(monkeypatch, connection):
    """The credential cache kafka-python would read while each client is built."""
    seen = []
    monkeypatch.setattr(kafka_client, "KafkaAdminClient", lambda **config: seen.append(os.environ.get(CCACHE_VARIABLE)) or object())
    connection._build(kafka_client.KafkaAdminClient, connection.config)  # pylint: disable=protected-access
    return seen


def test_principal_and_keytab_log_in_once_into_a_private_cache_removed_at_close(kinit, monkeypatch):
    connection = KafkaConnection(dict(GSSAPI, sasl_kerberos_keytab=kinit["keytab"]))
    assert "sasl_kerberos_principal" not in connection.config and "sasl_kerberos_keytab" not in connection.config
    first = seen_by_clients(monkeypatch, connection)
    second = seen_by_clients(monkeypatch, connection)
    [call] = calls(kinit)
    assert call["argv"] == ["-k", "-t", kinit["keytab"], "mirror@EXAMPLE.COM"]
    assert first == second == [call["ccache"]]
    cache_file = call["ccache"][len("FILE:"):]
    assert os.path.exists(cache_file) and stat.S_IMODE(os.stat(os.path.dirname(cache_file)).st_mode) == 0o700
    connection.close()
    assert not os.path.exists(os.path.dirname(cache_file))
    assert CCACHE_VARIABLE not in os.environ


def test_two_connections_with_one_identity_share_the_login(kinit, monkeypatch):
    source = KafkaConnection(dict(GSSAPI, sasl_kerberos_keytab=kinit["keytab"]))
    target = KafkaConnection(dict(GSSAPI, sasl_kerberos_keytab=kinit["keytab"]))
    seen_by_clients(monkeypatch, source)
    seen_by_clients(monkeypatch, target)
    source.close()
    assert os.environ[CCACHE_VARIABLE] == calls(kinit)[0]["ccache"], "the target still uses the login"
    target.close()
    assert len(calls(kinit)) == 1 and CCACHE_VARIABLE not in os.environ


def test_a_second_identity_in_one_run_is_refused(kinit, monkeypatch, tmp_path):
    other_keytab = tmp_path / "other.keytab"
    other_keytab.write_bytes(b"\x05\x02")
    source = KafkaConnection(dict(GSSAPI, sasl_kerberos_keytab=kinit["keytab"]))
    seen_by_clients(monkeypatch, source)
    target = KafkaConnection(dict(GSSAPI, sasl_kerberos_principal="other@EXAMPLE.COM", sasl_kerberos_keytab=str(other_keytab)))
    with pytest.raises(KafkaConnectionError, match="same principal and keytab"):
        seen_by_clients(monkeypatch, target)
    source.close()


def test_a_refused_keytab_fails_with_kinits_message_and_leaves_nothing(kinit, monkeypatch):
    monkeypatch.setenv("FAKE_KINIT_FAIL", "1")
    connection = KafkaConnection(dict(GSSAPI, sasl_kerberos_keytab=kinit["keytab"]))
    with pytest.raises(KafkaConnectionError, match=r"Kerberos login .* failed: kinit -k -t .* mirror@EXAMPLE.COM failed .*no suitable keys"):
        seen_by_clients(monkeypatch, connection)
    [call] = calls(kinit)
    assert not os.path.exists(os.path.dirname(call["ccache"][len("FILE:"):]))
    assert CCACHE_VARIABLE not in os.environ


def test_missing_kinit_or_keytab_say_what_to_install_or_fix(kinit, monkeypatch, tmp_path):
    connection = KafkaConnection(dict(GSSAPI, sasl_kerberos_keytab=str(tmp_path / "absent.keytab")))
    with pytest.raises(KafkaConnectionError, match="absent.keytab is not a file on this host"):
        seen_by_clients(monkeypatch, connection)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    connection = KafkaConnection(dict(GSSAPI, sasl_kerberos_keytab=kinit["keytab"]))
    with pytest.raises(KafkaConnectionError, match="needs MIT Kerberos' kinit on this host"):
        seen_by_clients(monkeypatch, connection)
    assert calls(kinit) == []


def test_without_a_keytab_the_users_own_ticket_is_used(kinit, monkeypatch):
    params = dict(GSSAPI)
    del params["sasl_kerberos_principal"]
    monkeypatch.setenv(CCACHE_VARIABLE, "FILE:/tmp/krb5cc_user")
    connection = KafkaConnection(params)
    assert seen_by_clients(monkeypatch, connection) == ["FILE:/tmp/krb5cc_user"]
    connection.close()
    assert calls(kinit) == [] and os.environ[CCACHE_VARIABLE] == "FILE:/tmp/krb5cc_user"


def test_gssapi_without_the_python_package_says_what_to_install(kinit, monkeypatch):
    monkeypatch.setattr(kafka_client, "gssapi_available", lambda: False)
    connection = KafkaConnection(dict(GSSAPI, sasl_kerberos_keytab=kinit["keytab"]))
    with pytest.raises(KafkaConnectionError, match="needs the Python package gssapi"):
        seen_by_clients(monkeypatch, connection)
    assert calls(kinit) == []
