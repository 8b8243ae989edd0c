# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The apache provider's server.properties, ZooKeeper and KRaft start, from a fake Kafka home (pure logic: no JVM)."""
from __future__ import annotations

import json

import pytest

from sandbox import api, broker_config, kafka_dist, lab_security
from sandbox.providers import CONTROLLER_PORT, ApacheProvider, BrokerSpec, get_provider

SNIPPET = 'echo "advertised.listeners=PLAINTEXT://$IP_ADDRESS:9092" >> /usr/hdp/current/kafka-broker/conf/server.properties\n'

FAKE_STORAGE = """#!/bin/sh
# stand-in for kafka-storage.sh: record the call, and format like the real one (meta.properties in log.dirs)
echo "$@" >> "$(dirname "$0")/storage-calls"
props=$(for a in "$@"; do :; done; echo "$a")
dir=$(sed -n 's/^log.dirs=//p' "$props")
mkdir -p "$dir" && echo "cluster.id=x" > "$dir/meta.properties"
"""


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True)
    for name in ("kafka-server-start.sh", "zookeeper-server-start.sh", "connect-mirror-maker.sh"):
        (home / "bin" / name).write_text("#!/bin/sh\nexit 0\n")
    (home / "bin" / "kafka-storage.sh").write_text(FAKE_STORAGE)
    for script in (home / "bin").iterdir():
        script.chmod(0o755)
    monkeypatch.setattr(kafka_dist, "ensure_home", lambda version: home)
    return home


def spec(tmp_path, **changes) -> BrokerSpec:
    fields = dict(provider="apache", alias="primary", cluster_name="primary", ip="127.9.1.11", fqdn="wn1-primar.x.internal.cloudapp.net",
                  port=9092, data_dir=str(tmp_path / "cluster" / "data-1"), log_dir=str(tmp_path / "logs"), broker_id=1, release="2.4.1",
                  zookeeper="127.9.1.20:2181")
    fields.update(changes)
    (tmp_path / "cluster").mkdir(exist_ok=True)
    return BrokerSpec(**fields)


def config(tmp_path, content: dict):
    (tmp_path / broker_config.FILE_NAME).write_text(json.dumps(content))
    return broker_config.load(tmp_path)


def properties(text: str) -> dict:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_zookeeper_mode_takes_ambari_settings_and_keeps_the_lab_listeners(tmp_path):
    stored = config(tmp_path, {"kafka-broker": {"listeners": "PLAINTEXT://0.0.0.0:9092", "zookeeper.connect": "zk0-primar:2181",
                                                "min.insync.replicas": "2", "default.replication.factor": "3", "auto.create.topics.enable": "true",
                                                "kafka.metrics.reporters": "org.apache.hadoop.metrics2.sink.kafka.KafkaTimelineMetricsReporter"}})
    props = properties(ApacheProvider().server_properties(spec(tmp_path), stored))
    assert props["broker.id"] == "1" and props["zookeeper.connect"] == "127.9.1.20:2181"
    assert props["listeners"] == "PLAINTEXT://127.9.1.11:9092,INTERNAL://127.9.1.11:9094"
    # Clients are told the FQDN (HDInsight's stock advertising); brokers reach each other by IP on INTERNAL.
    assert props["advertised.listeners"] == "PLAINTEXT://wn1-primar.x.internal.cloudapp.net:9092,INTERNAL://127.9.1.11:9094"
    assert props["inter.broker.listener.name"] == "INTERNAL"
    assert props["min.insync.replicas"] == "2" and props["default.replication.factor"] == "3" and props["auto.create.topics.enable"] == "true"
    assert "kafka.metrics.reporters" not in props and "process.roles" not in props


def test_ip_advertising_changes_what_clients_are_told(tmp_path):
    props = properties(ApacheProvider().server_properties(spec(tmp_path), config(tmp_path, {"kafka-env": SNIPPET})))
    assert props["advertised.listeners"].split(",")[0] == "PLAINTEXT://127.9.1.11:9092"


def test_kraft_mode_is_a_combined_node_of_the_quorum(tmp_path):
    quorum = f"0@127.9.1.10:{CONTROLLER_PORT},1@127.9.1.11:{CONTROLLER_PORT},2@127.9.1.12:{CONTROLLER_PORT}"
    props = properties(ApacheProvider().server_properties(spec(tmp_path, release="3.9.2", zookeeper="", quorum=quorum), broker_config.load(tmp_path)))
    assert props["process.roles"] == "broker,controller" and props["node.id"] == "1" and "broker.id" not in props
    assert props["controller.quorum.voters"] == quorum and "zookeeper.connect" not in props
    assert props["listeners"].endswith(f"CONTROLLER://127.9.1.11:{CONTROLLER_PORT}")


def test_kraft_formats_storage_once(tmp_path, home):
    broker = spec(tmp_path, release="3.9.2", zookeeper="", quorum="1@127.9.1.11:9093")
    for _attempt in range(2):
        argv, env = ApacheProvider().broker_command(broker, broker_config.load(tmp_path))
    properties_file = tmp_path / "cluster" / "server-1.properties"
    assert argv == [str(home / "bin" / "kafka-server-start.sh"), str(properties_file)]
    assert env["LOG_DIR"] == broker.log_dir and "-XX:+UseSerialGC" in env["KAFKA_JVM_PERFORMANCE_OPTS"]
    calls = (home / "bin" / "storage-calls").read_text().splitlines()
    assert calls == [f"format --ignore-formatted -t {ApacheProvider.cluster_id('primary')} -c {properties_file}"]


def test_zookeeper_mode_never_formats_and_zookeeper_binds_zk0(tmp_path, home):
    broker = spec(tmp_path)
    ApacheProvider().broker_command(broker, broker_config.load(tmp_path))
    assert not (home / "bin" / "storage-calls").exists()
    argv, env = ApacheProvider().zookeeper_command(broker)
    zk = properties((tmp_path / "cluster" / "zookeeper.properties").read_text())
    assert argv[0] == str(home / "bin" / "zookeeper-server-start.sh")
    assert zk["clientPortAddress"] == "127.9.1.20" and zk["clientPort"] == "2181" and zk["admin.enableServer"] == "false"


def test_cluster_ids_are_stable_and_distinct():
    assert len(ApacheProvider.cluster_id("primary")) == 22 and ApacheProvider.cluster_id("primary") != ApacheProvider.cluster_id("secondary")


def test_apache_kafka_home_links_to_the_release_home(tmp_path, home):
    from sandbox.kafka_home import write_kafka_home

    (tmp_path / "sb").mkdir()
    link = write_kafka_home(tmp_path / "sb", ApacheProvider(), tmp_path, {"name": "wn0", "python": "/bin/false"}, "3.2.0")
    assert link.is_symlink() and link.resolve() == home.resolve()


def test_the_mirrormaker_node_has_the_labs_other_releases_beside_its_own():
    """The MirrorMaker node's Kafka homes besides its own (the runbooks' MirrorMaker 1 of the source's release runs from one):
    every other release of the lab's clusters, none where the clusters run the node's release or stand-ins."""
    assert api._other_kafka_homes({"releases": {"primary": "2.4.1", "secondary": "3.2.0"}, "kafka_version": "3.2.0"}) == {
        "2.4.1": f"{api.OTHER_KAFKA_HOMES_ON_NODE}/2.4.1"}
    assert api._other_kafka_homes({"releases": {"primary": "3.9.2", "secondary": "4.3.1"}, "kafka_version": "3.9.2"}) == {
        "4.3.1": f"{api.OTHER_KAFKA_HOMES_ON_NODE}/4.3.1"}
    assert api._other_kafka_homes({"releases": {"primary": "3.2.0", "secondary": "3.2.0"}, "kafka_version": "3.2.0"}) == {}
    assert api._other_kafka_homes({"releases": {}, "kafka_version": "3.9"}) == {}


@pytest.mark.parametrize("release, authorizer", [("2.4.1", "kafka.security.auth.SimpleAclAuthorizer"),
                                                 ("3.2.0", "kafka.security.authorizer.AclAuthorizer")])
def test_secure_brokers_add_three_listeners_and_an_authorizer_beside_plaintext(tmp_path, release, authorizer):
    security = tmp_path / "security"
    security.mkdir()
    (security / lab_security.CREDENTIALS).write_text(json.dumps({"store_password": "sp"}))
    stored = config(tmp_path, {"kafka-broker": {"authorizer.class.name": "org.apache.ranger.authorization.kafka.authorizer.RangerKafkaAuthorizer",
                                                "sasl.enabled.mechanisms": "GSSAPI"}})
    props = properties(ApacheProvider().server_properties(spec(tmp_path, release=release, security_dir=str(security)), stored))
    assert props["listeners"] == ("PLAINTEXT://127.9.1.11:9092,INTERNAL://127.9.1.11:9094,SCRAM://127.9.1.11:9095,MTLS://127.9.1.11:9096,"
                                  "SASLSSL://127.9.1.11:9097")
    assert props["advertised.listeners"].endswith(",SASLSSL://wn1-primar.x.internal.cloudapp.net:9097")
    assert props["listener.security.protocol.map"].endswith(",SCRAM:SASL_PLAINTEXT,MTLS:SSL,SASLSSL:SASL_SSL")
    assert props["inter.broker.listener.name"] == "INTERNAL"  # replication stays on the lab's PLAINTEXT listener
    # The lab owns the authorizer and the mechanisms (Ambari's ESP values name a Ranger class the lab lacks).
    assert props["authorizer.class.name"] == authorizer and props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert props["super.users"] == "User:ANONYMOUS;User:lab-admin"
    assert props["listener.name.mtls.ssl.client.auth"] == "required"
    assert props["ssl.keystore.location"] == str(security / "wn1-primar.x.internal.cloudapp.net.p12")


def test_plain_brokers_get_no_security_keys(tmp_path):
    props = properties(ApacheProvider().server_properties(spec(tmp_path), broker_config.load(tmp_path)))
    assert not any(key.startswith(("ssl.", "sasl.", "listener.name.")) or key in ("authorizer.class.name", "super.users") for key in props)


def test_secure_is_refused_for_kraft_releases_and_the_stand_ins():
    with pytest.raises(ValueError, match="ZooKeeper releases"):
        api._secure(ApacheProvider(), {"primary": "3.9.2", "secondary": "4.3.1"}, True, None)
    with pytest.raises(ValueError, match="provider noida"):
        api._secure(get_provider("noida"), {}, True, None)
    assert api._secure(ApacheProvider(), {"primary": "2.4.1", "secondary": "3.2.0"}, False, {"security": {"dir": "x"}})  # kept
    assert not api._secure(ApacheProvider(), {"primary": "2.4.1"}, False, None)
