# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every connection field of the inventory, SASL and Kerberos included, reaches every Kafka module call of every role and
the Spark job (its configuration, a 0600 file: passwords only there), and no secret reaches Ansible's output at -vvv or
the recorded task results.

No broker here speaks SASL or Kerberos: the roles run against a copy of the collection whose Kafka modules record their
arguments (tests/support/recorder_collection.py) and a spark-submit that records its command line and environment.
"""
from __future__ import annotations

import json
import stat
import uuid
from pathlib import Path

import pytest
import yaml

from tests.support.ansible_play import run_tasks
from tests.support.recorder_collection import build, environment, recorded_calls

pytestmark = pytest.mark.integration

SASL_PASSWORD = "sasl-" + uuid.uuid4().hex
KEY_PASSWORD = "key-" + uuid.uuid4().hex
SECRETS = (SASL_PASSWORD, KEY_PASSWORD)
# Primary: Kerberos with a keytab over TLS with a client certificate; secondary: SCRAM over TLS. Every connection
# variable appears on one of them. The addresses are never connected to (the modules only record).
PRIMARY = {
    "kafka_bootstrap_servers": "127.9.250.1:9093,127.9.250.2:9093",
    "kafka_security_protocol": "SASL_SSL",
    "kafka_sasl_mechanism": "GSSAPI",
    "kafka_sasl_kerberos_service_name": "kafka-svc",
    "kafka_sasl_kerberos_principal": "mirror/mm0.example.com@EXAMPLE.COM",
    "kafka_sasl_kerberos_keytab": "/etc/security/keytabs/mirror.keytab",
    "kafka_ssl_cafile": "/etc/kafka/primary-ca.pem",
    "kafka_ssl_certfile": "/etc/kafka/mirror.pem",
    "kafka_ssl_keyfile": "/etc/kafka/mirror.key",
    "kafka_ssl_password": KEY_PASSWORD,
    "kafka_ssl_check_hostname": False,
    "kafka_api_version": "2.4.1",
}
SECONDARY = {
    "kafka_bootstrap_servers": "127.9.251.1:9093",
    "kafka_security_protocol": "SASL_SSL",
    "kafka_sasl_mechanism": "SCRAM-SHA-512",
    "kafka_sasl_plain_username": "mirror",
    "kafka_sasl_plain_password": SASL_PASSWORD,
    "kafka_ssl_cafile": "/etc/kafka/secondary-ca.pem",
}
ALIASES = {"primary": "primary-kafka-cluster", "secondary": "secondary-kafka-cluster"}


def expected(variables):
    connection = {name[len("kafka_"):]: value for name, value in variables.items()}
    connection["bootstrap_servers"] = variables["kafka_bootstrap_servers"].split(",")
    return connection


PRIMARY_CONNECTION, SECONDARY_CONNECTION = expected(PRIMARY), expected(SECONDARY)


def arrived(args, connection):
    """The connection options of `args` that differ from `connection` (empty when every field arrived as given)."""
    return {key: args.get(key) for key, value in connection.items() if args.get(key) != value}


@pytest.fixture(name="lab", scope="module")
def recorder_lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("connection-recorder")
    collections = build(root / "collections")
    local = {"ansible_connection": "local"}
    inventory = {"all": {"children": {
        "primary_kafka": {"hosts": {"wn0-primar": local}, "vars": dict(PRIMARY, kafka_cluster_alias=ALIASES["primary"])},
        "secondary_kafka": {"hosts": {"wn0-second": local}, "vars": dict(SECONDARY, kafka_cluster_alias=ALIASES["secondary"])},
        # No Kafka installation on this host: the release MirrorMaker runs is declared, as a user without one would.
        "mirrormaker": {"hosts": {"mm0": dict(local, mirrormaker2_kafka_version="3.9")}},
    }}}
    (root / "inventory.yml").write_text(yaml.safe_dump(inventory))
    spark_record = root / "spark-submit.json"
    spark_submit = root / "spark-submit"
    spark_submit.write_text(
        "#!/usr/bin/env python3\n"
        "import json, os, sys\n"
        f"json.dump({{'argv': sys.argv[1:], 'environ': {{k: v for k, v in os.environ.items() if k.startswith('MIRROR_VALIDATION_')}}}},"
        f" open({str(spark_record)!r}, 'w'))\n"
        "sys.exit(2)\n"
    )
    spark_submit.chmod(spark_submit.stat().st_mode | stat.S_IXUSR)
    return {"root": root, "collections": collections, "inventory": root / "inventory.yml", "spark_record": spark_record,
            "spark_submit": spark_submit}


def run_role(lab, name, role, tasks_from="main", **role_vars):
    """Run one role entry point on the mirrormaker host at -vvv; the calls its Kafka modules recorded, and the play."""
    record = lab["root"] / (name + ".jsonl")
    task = {"name": name, "ansible.builtin.include_role": {"name": "kafkaops.mirror." + role, "tasks_from": tasks_from},
            "vars": role_vars}
    play = run_tasks([task], hosts="mirrormaker", inventory=lab["inventory"], verbosity=3,
                     env=environment(lab["collections"], record))
    for secret in SECRETS:
        assert secret not in play.stdout and secret not in play.stderr, f"{name}: a secret reached Ansible's output at -vvv"
        assert secret not in json.dumps(play.tasks), f"{name}: a secret reached the recorded task results"
    return recorded_calls(record), play


def by_alias(calls):
    return {call["args"]["cluster_alias"]: call["args"] for call in calls}


def test_preflight_probes_each_cluster_with_its_whole_connection(lab):
    calls, play = run_role(lab, "preflight", "preflight", preflight_clock_check=False)
    assert [call["module"] for call in calls] == ["kafka_cluster_info", "kafka_cluster_info"], play.stdout[-3000:]
    probes = by_alias(calls)
    assert arrived(probes[ALIASES["primary"]], PRIMARY_CONNECTION) == {}
    assert arrived(probes[ALIASES["secondary"]], SECONDARY_CONNECTION) == {}


def test_preflight_reads_mirrormaker_state_with_both_connections(lab):
    # The probes' results of two clusters that answered (the recorder stops the role at the probes themselves).
    probes = [{"item": {"alias": ALIASES[side], "host": host}, "failed": False, "bootstrap_reachable": True, "skipped": [],
               "brokers": [{"node_id": 1, "usable": True}]} for side, host in (("primary", "wn0-primar"), ("secondary", "wn0-second"))]
    calls, play = run_role(lab, "preflight stale state", "preflight", "stale_state", __preflight_cluster_info={"results": probes})
    [call] = calls or [None]
    assert call and call["module"] == "kafka_mirror_status", play.stdout[-3000:]
    assert (call["args"]["source_alias"], call["args"]["target_alias"]) == (ALIASES["primary"], ALIASES["secondary"])
    assert call["args"]["mirrormaker_version"] == "3.9"
    assert arrived(call["args"], SECONDARY_CONNECTION) == {}
    assert arrived(call["args"]["source"], PRIMARY_CONNECTION) == {}


def test_kafka_topics_gives_the_target_and_the_copy_source_their_connections(lab):
    calls, play = run_role(lab, "kafka_topics", "kafka_topics", kafka_topics_copy_from_source=True,
                           kafka_topics_copy_rename_prefix=ALIASES["primary"] + ".")
    [call] = calls or [None]
    assert call and call["module"] == "kafka_topic", play.stdout[-3000:]
    assert arrived(call["args"], SECONDARY_CONNECTION) == {}
    assert arrived(call["args"]["copy_from"], PRIMARY_CONNECTION) == {}
    assert call["args"]["copy_from"]["rename_prefix"] == "primary-kafka-cluster."


def test_mirrormaker2_discovery_and_health_use_the_inventory_connections(lab):
    calls, play = run_role(lab, "mirrormaker2 discovery", "mirrormaker2", "discover")
    assert len(calls) == 2, play.stdout[-3000:]
    probes = by_alias(calls)
    assert arrived(probes[ALIASES["primary"]], PRIMARY_CONNECTION) == {}
    assert arrived(probes[ALIASES["secondary"]], SECONDARY_CONNECTION) == {}

    calls, play = run_role(lab, "mirrormaker2 health", "mirrormaker2", "health")
    [call] = calls or [None]
    assert call and call["module"] == "kafka_mirror_status", play.stdout[-3000:]
    assert (call["args"]["source_alias"], call["args"]["target_alias"]) == (ALIASES["primary"], ALIASES["secondary"])
    assert arrived(call["args"], SECONDARY_CONNECTION) == {}
    assert arrived(call["args"]["source"], PRIMARY_CONNECTION) == {}


@pytest.mark.parametrize("step, module, step_vars", [
    ("lag wait", "kafka_mirror_status", {"failover_wait_for_lag": True}),
    ("offset translation", "kafka_mirror_offsets", {"failover_wait_for_lag": False}),
])
def test_failover_gives_both_modules_both_connections(lab, step, module, step_vars):
    calls, play = run_role(lab, "failover " + step, "failover", failover_pause=False, failover_stop_mirrormaker=False, **step_vars)
    [call] = calls or [None]
    assert call and call["module"] == module, play.stdout[-3000:]
    assert (call["args"]["source_alias"], call["args"]["target_alias"]) == (ALIASES["primary"], ALIASES["secondary"])
    assert arrived(call["args"], SECONDARY_CONNECTION) == {}
    assert arrived(call["args"]["source"], PRIMARY_CONNECTION) == {}


@pytest.mark.parametrize("role, role_vars", [
    ("kafka_topics", {"kafka_topics_align_to_source": True}),
    ("mirror_validation", {}),
])
def test_the_topic_drift_reads_each_cluster_with_its_whole_connection(lab, tmp_path, role, role_vars):
    role_vars = dict(role_vars, mirror_validation_work_dir=str(tmp_path / "work"), mirror_validation_report_dir=str(tmp_path / "reports"))
    calls, play = run_role(lab, role + " drift", role, **role_vars)
    [call] = calls or [None]
    assert call and call["module"] == "kafka_mirror_topic_drift_info", play.stdout[-3000:]
    assert (call["args"]["source_alias"], call["args"]["target_alias"]) == (ALIASES["primary"], ALIASES["secondary"])
    assert arrived(call["args"], SECONDARY_CONNECTION) == {}
    assert arrived(call["args"]["source"], PRIMARY_CONNECTION) == {}


def test_the_validation_job_gets_every_field_and_passwords_only_through_its_configuration_file(lab, tmp_path):
    # The topic drift read before the job is the test above; the recorder would stop the role there.
    _calls, play = run_role(lab, "mirror_validation", "mirror_validation", mirror_validation_spark_submit=str(lab["spark_submit"]),
                            mirror_validation_work_dir=str(tmp_path / "work"), mirror_validation_report_dir=str(tmp_path / "reports"),
                            mirror_validation_topic_drift=False)
    assert lab["spark_record"].exists(), play.stdout[-3000:]
    job = json.loads(lab["spark_record"].read_text())
    argv = job["argv"]
    config_file = Path(argv[argv.index("--config") + 1])
    config = json.loads(config_file.read_text())
    source, target = config["source"], config["target"]
    # The connections as the Kafka modules take them (kafkaops.mirror.kafka_connection), which the job reads too.
    assert source["bootstrap_servers"] == ["127.9.250.1:9093", "127.9.250.2:9093"]
    assert (source["security_protocol"], source["sasl_mechanism"], source["sasl_kerberos_service_name"]) == ("SASL_SSL", "GSSAPI", "kafka-svc")
    for name in ("sasl_kerberos_principal", "sasl_kerberos_keytab", "ssl_cafile", "ssl_certfile", "ssl_keyfile"):
        assert source[name] == PRIMARY["kafka_" + name], name
    assert source["ssl_check_hostname"] is False and target.get("ssl_check_hostname", True) is True
    assert target["bootstrap_servers"] == ["127.9.251.1:9093"]
    assert (target["sasl_mechanism"], target["sasl_plain_username"]) == ("SCRAM-SHA-512", "mirror")
    assert target["ssl_cafile"] == SECONDARY["kafka_ssl_cafile"]
    assert (config["source_alias"], config["target_alias"]) == (ALIASES["primary"], ALIASES["secondary"])
    assert not any(secret in " ".join(argv) for secret in SECRETS), "a password is on the job's command line"
    assert not any(secret in json.dumps(job["environ"]) for secret in SECRETS), "a password is in the job's environment"
    assert stat.S_IMODE(config_file.stat().st_mode) == 0o600
    assert (target["sasl_plain_password"], source["ssl_password"]) == (SASL_PASSWORD, KEY_PASSWORD)
    for path in (tmp_path / "work").rglob("*"):
        if path.is_file() and path != config_file:
            assert not any(secret in path.read_text(errors="replace") for secret in SECRETS), f"{path} holds a secret"
