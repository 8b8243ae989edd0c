# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job's connection arguments: every field reaches confluent-kafka and kafka-python; passwords come from the
environment or the --config file, never from the command line."""
import json

import pytest

from mirror_validation.cli import build_parser, given_options
from mirror_validation.options import job_options

ARGV = ["--source-bootstrap", "a:9093,b:9093", "--source-security-protocol", "SASL_SSL", "--source-sasl-mechanism", "GSSAPI",
        "--source-sasl-kerberos-service-name", "kafka-svc", "--source-sasl-kerberos-principal", "mirror@EXAMPLE.COM",
        "--source-sasl-kerberos-keytab", "/k/mirror.keytab", "--source-ssl-cafile", "/ca.pem", "--source-ssl-certfile", "/c.pem",
        "--source-ssl-keyfile", "/c.key", "--source-no-ssl-check-hostname",
        "--target-bootstrap", "c:9093", "--target-security-protocol", "SASL_PLAINTEXT", "--target-sasl-mechanism", "SCRAM-SHA-512",
        "--target-sasl-username", "mirror", "--topics", ".*", "--source-alias", "primary-kafka-cluster"]


def options(environ, *extra):
    return job_options(given_options(build_parser().parse_args(ARGV + list(extra))), environ)


def test_every_field_reaches_both_clients():
    parsed = options({"MIRROR_VALIDATION_SOURCE_SSL_PASSWORD": "kp", "MIRROR_VALIDATION_TARGET_SASL_PASSWORD": "sp"})
    assert parsed.source.confluent_config() == {
        "bootstrap.servers": "a:9093,b:9093", "security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI",
        "sasl.kerberos.service.name": "kafka-svc", "sasl.kerberos.principal": "mirror@EXAMPLE.COM",
        "sasl.kerberos.keytab": "/k/mirror.keytab", "ssl.ca.location": "/ca.pem", "ssl.certificate.location": "/c.pem",
        "ssl.key.location": "/c.key", "ssl.key.password": "kp", "ssl.endpoint.identification.algorithm": "none"}
    python_config = parsed.source.kafka_python_config()
    assert python_config["ssl_password"] == "kp" and python_config["ssl_check_hostname"] is False
    assert python_config["sasl_kerberos_service_name"] == "kafka-svc"
    target = parsed.target.confluent_config()
    assert (target["sasl.username"], target["sasl.password"]) == ("mirror", "sp")
    assert "sp" not in repr(parsed.target) and "kp" not in repr(parsed.source)


@pytest.mark.parametrize("cap, librdkafka_fetch, kafka_python_fetch", [
    (512 * 1024 * 1024, 52428800, 52428800),  # a raised cap accepts larger replies but asks for no more
    (10 * 1024 * 1024, 10 * 1024 * 1024 - 512, 10 * 1024 * 1024),  # librdkafka wants the cap 512 bytes above the fetch size
])
def test_the_receive_cap_never_raises_the_fetch_size(cap, librdkafka_fetch, kafka_python_fetch):
    parsed = options({}, "--receive-max-bytes", str(cap))
    confluent = parsed.source.confluent_config()
    assert (confluent["receive.message.max.bytes"], confluent["fetch.max.bytes"]) == (cap, librdkafka_fetch)
    kafka_python = parsed.source.kafka_python_config()
    assert (kafka_python["receive_message_max_bytes"], kafka_python["fetch_max_bytes"]) == (cap, kafka_python_fetch)
    assert "fetch.max.bytes" not in parsed.source.confluent_config(consumer=False)


def test_the_config_file_passwords_win_over_the_environment_and_its_flags_lose_to_the_command_line(tmp_path, monkeypatch):
    path = tmp_path / "job.json"
    path.write_text(json.dumps({"target": {"bootstrap_servers": ["from-file:9092"], "sasl_plain_password": "from-file"},
                                "catch_up_timeout": "60", "source_alias": "from-file"}))
    monkeypatch.setenv("MIRROR_VALIDATION_TARGET_SASL_PASSWORD", "from-env")
    monkeypatch.setenv("MIRROR_VALIDATION_SOURCE_SSL_PASSWORD", "key-from-env")
    parsed = job_options(given_options(build_parser().parse_args(["--config", str(path)] + ARGV)))
    assert parsed.target.sasl_plain_password == "from-file" and parsed.source.ssl_password == "key-from-env"
    assert (parsed.target.bootstrap_servers, parsed.source_alias, parsed.catch_up_timeout) == ("c:9093", "primary-kafka-cluster", 60.0)


def test_passwords_have_no_flag():
    with pytest.raises(SystemExit):
        build_parser().parse_args(ARGV + ["--target-sasl-plain-password", "secret"])


def test_an_unreadable_config_file_is_a_bad_argument(tmp_path):
    with pytest.raises(ValueError, match="--config .* cannot be read as JSON"):
        given_options(build_parser().parse_args(["--config", str(tmp_path / "absent.json")]))


def test_the_configuration_check_the_role_runs_on_the_controller(capsys):
    """`python -m mirror_validation.options`: 0 for what the job takes, 2 with the reason for what it refuses, and a password of
    the wrong kind is named without its value (the message reaches Ansible's output)."""
    from io import StringIO

    from mirror_validation.options import main

    config = {"topics": ".*", "source_alias": "primary", "source": {"bootstrap_servers": "a:9093", "sasl_plain_password": "hunter2"},
              "target": {"bootstrap_servers": "c:9093"}}
    assert main(StringIO(json.dumps(config))) == 0
    assert main(StringIO(json.dumps(dict(config, catch_up_interval=0)))) == 2
    assert "bad settings: catch_up_timeout must be >= 0 and catch_up_interval > 0" in capsys.readouterr().err
    assert main(StringIO(json.dumps(dict(config, source={"bootstrap_servers": "a:9093", "sasl_plain_password": {"p": "hunter2"}})))) == 2
    said = capsys.readouterr().err
    assert "source.sasl_plain_password must be text, got a value of type dict" in said and "hunter2" not in said
    assert main(StringIO("{not json")) == 2 and "bad settings" in capsys.readouterr().err
