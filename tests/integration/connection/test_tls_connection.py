# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every role reaches clusters that speak only mutual TLS (a CA file, a client certificate and a password-protected key),
with the connection taken from the inventory's group variables alone.

Read back: stunnel's log counts the TLS sessions it accepted with the client certificate during each role, and what a role
wrote (topics) or read (the validation report) is checked with an independent kafka-python client. Every run is at -vvv
and must not show the key's password.
"""
from __future__ import annotations

import json
import sys

import pytest
import yaml
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from sandbox.providers import ProviderUnavailable, TansuProvider
from tests.support.ansible_play import run_tasks
from tests.support.tls_lab import TlsLab

pytestmark = [pytest.mark.integration, pytest.mark.tansu]

ALIASES = {"primary": "primary-tls", "secondary": "secondary-tls"}
SOURCE_TOPIC, PARTITIONS, RECORDS = "tls-orders", 3, 30
REMOTE_TOPIC = ALIASES["primary"] + "." + SOURCE_TOPIC


@pytest.fixture(name="lab", scope="module")
def tls_lab(sandbox_net, tmp_path_factory):
    try:
        tansu = TansuProvider().binary()
    except ProviderUnavailable as exc:
        pytest.skip(str(exc))
    lab = TlsLab(tmp_path_factory.mktemp("tls-lab"), sandbox_net).start(tansu)
    files = lab.files()
    cluster_vars = {"kafka_security_protocol": "SSL", "kafka_ssl_cafile": files["ca.pem"], "kafka_ssl_certfile": files["client.pem"],
                    "kafka_ssl_keyfile": files["client.key"], "kafka_ssl_password": lab.key_password}
    inventory = {"all": {
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
        "children": {
            cluster + "_kafka": {"hosts": {"tls-" + cluster: {}},
                                 "vars": dict(cluster_vars, kafka_cluster_alias=ALIASES[cluster], kafka_bootstrap_servers=lab.bootstrap(cluster))}
            for cluster in ("primary", "secondary")}
        # No Kafka installation on this host: the release MirrorMaker runs is declared, as a user without one would.
        | {"mirrormaker": {"hosts": {"tls-mm": {"mirrormaker2_kafka_version": "3.9"}}}},
    }}
    lab.inventory = lab.root / "inventory.yml"
    lab.inventory.write_text(yaml.safe_dump(inventory))
    try:
        yield lab
    finally:
        lab.stop()


def run_role(lab, role, tasks_from="main", **role_vars):
    """Run a role entry point on the MirrorMaker host at -vvv; the play and the TLS sessions it opened per cluster."""
    before = {cluster: lab.sessions(cluster) for cluster in ALIASES}
    task = {"name": role, "ansible.builtin.include_role": {"name": "kafkaops.mirror." + role, "tasks_from": tasks_from}, "vars": role_vars}
    play = run_tasks([task], hosts="mirrormaker", inventory=lab.inventory, verbosity=3)
    assert lab.key_password not in play.stdout + play.stderr + json.dumps(play.tasks), f"{role}: the key password was shown"
    return play, {cluster: lab.sessions(cluster) - before[cluster] for cluster in ALIASES}


def module_result(play, module):
    """The result of the one task of the play that ran kafkaops.mirror.`module`."""
    [result] = [entry["result"] for entry in play.tasks if entry["action"] == "kafkaops.mirror." + module]
    return result


def admin(lab, cluster):
    return KafkaAdminClient(**lab.client_options(cluster))


def test_plain_text_reaches_nothing(lab):
    before = lab.sessions("primary")
    with pytest.raises(Exception):  # noqa: B017 - the bootstrap timeout's type differs between kafka-python releases
        KafkaAdminClient(**dict(lab.client_options("primary"), security_protocol="PLAINTEXT", bootstrap_timeout_ms=5000))
    assert lab.sessions("primary") == before


def test_preflight_checks_both_clusters_through_tls(lab):
    play, sessions = run_role(lab, "preflight", preflight_clock_check=False)
    assert not play.failed, play.stdout[-4000:]
    assert sessions["primary"] > 0 and sessions["secondary"] > 0, sessions


def test_kafka_topics_creates_and_copies_through_tls(lab):
    client = admin(lab, "primary")
    client.create_topics({SOURCE_TOPIC: {"num_partitions": PARTITIONS, "replication_factor": 1}})
    client.close()
    play, sessions = run_role(lab, "kafka_topics", kafka_topics_list=[{"name": "tls-created", "partitions": 2}],
                              kafka_topics_copy_from_source=True, kafka_topics_copy_topics=SOURCE_TOPIC,
                              kafka_topics_copy_rename_prefix=ALIASES["primary"] + ".",
                              # Quirk (tansu 0.6.0): it applies CreateTopics with validate_only, so no dry run on the broker.
                              kafka_topics_validate_on_broker=False)
    assert not play.failed, play.stdout[-4000:]
    assert sessions["primary"] > 0 and sessions["secondary"] > 0, sessions
    client = admin(lab, "secondary")
    try:
        described = {topic["name"]: len(topic["partitions"]) for topic in client.describe_topics(["tls-created", REMOTE_TOPIC])}
    finally:
        client.close()
    assert described == {"tls-created": 2, REMOTE_TOPIC: PARTITIONS}


def test_mirrormaker2_discovers_both_clusters_through_tls(lab):
    play, sessions = run_role(lab, "mirrormaker2", "discover")
    assert not play.failed, play.stdout[-4000:]
    discovered = module_result(play, "kafka_cluster_info")["results"]
    assert {item["item"]: item["broker_count"] for item in discovered} == {ALIASES["primary"]: 1, ALIASES["secondary"]: 1}
    assert sessions["primary"] > 0 and sessions["secondary"] > 0, sessions


def test_mirrormaker2_health_reads_the_target_through_tls(lab):
    # No MirrorMaker runs here (the sandbox's stand-in speaks no TLS), so the health wait must end with its verdict on
    # what it read through TLS (no heartbeats yet), not with a connection error.
    play, sessions = run_role(lab, "mirrormaker2", "health", mirrormaker2_health_timeout=3, mirrormaker2_health_poll_interval=1)
    assert play.failed
    assert "no heartbeat from %s->%s on the target yet" % (ALIASES["primary"], ALIASES["secondary"]) in play.stdout, play.stdout[-4000:]
    assert sessions["secondary"] > 0, sessions


def mirror_by_hand(lab):
    """Produce the source topic and copy it record by record to its remote name, as MirrorMaker would."""
    producer = KafkaProducer(**lab.client_options("primary"))
    for index in range(RECORDS):
        producer.send(SOURCE_TOPIC, key=b"k%d" % index, value=b"v%d" % index, partition=index % PARTITIONS, headers=[("i", b"%d" % index)])
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(**lab.client_options("primary"), group_id=None, enable_auto_commit=False, auto_offset_reset="earliest")
    partitions = [TopicPartition(SOURCE_TOPIC, partition) for partition in range(PARTITIONS)]
    consumer.assign(partitions)
    copied = []
    while len(copied) < RECORDS:
        for records in consumer.poll(timeout_ms=2000).values():
            copied.extend(records)
    consumer.close()
    producer = KafkaProducer(**lab.client_options("secondary"))
    for record in copied:
        producer.send(REMOTE_TOPIC, key=record.key, value=record.value, partition=record.partition, headers=record.headers,
                      timestamp_ms=record.timestamp)
    producer.flush()
    producer.close()


def test_failover_reads_both_clusters_through_tls(lab):
    mirror_by_hand(lab)
    # Quirk (tansu 0.6.0 + kafka-python 3.0.12): DescribeGroups answers carry authorized-operation bits kafka-python cannot
    # decode, so no group is moved here: the offsets module still lists the groups of both clusters through TLS.
    play, sessions = run_role(lab, "failover", failover_pause=False, failover_stop_mirrormaker=False, failover_topics=[SOURCE_TOPIC],
                              failover_groups=["no-group-matches-this"], failover_lag_timeout=30, failover_lag_poll_interval=1)
    assert not play.failed, play.stdout[-4000:]
    lag = module_result(play, "kafka_mirror_status")
    assert lag["topics"] == [SOURCE_TOPIC] and lag["lag_total"] == 0 and len(lag["partitions"]) == PARTITIONS
    assert sessions["primary"] > 0 and sessions["secondary"] > 0, sessions


@pytest.mark.spark
def test_validation_job_reads_both_clusters_through_tls(lab, tmp_path):
    play, sessions = run_role(lab, "mirror_validation", mirror_validation_topics=SOURCE_TOPIC, mirror_validation_target_alias="",
                              mirror_validation_catch_up_timeout=30, mirror_validation_work_dir=str(tmp_path / "work"),
                              mirror_validation_report_dir=str(tmp_path / "reports"))
    assert not play.failed, play.stdout[-4000:]
    report = json.loads((tmp_path / "reports" / "tls-mm" / "report.json").read_text())
    assert report["exit_code"] == 0, report["message"]
    assert sessions["primary"] > 0 and sessions["secondary"] > 0, sessions
