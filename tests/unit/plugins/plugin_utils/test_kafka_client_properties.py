# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cluster's connection (the modules' options) -> MirrorMaker 2's client properties, secrets marked, per Kafka version."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.kafka_client_properties import java_client_properties
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_config import (
    MM1_CONSUMER_FILE,
    MM2_PROPERTIES_FILE,
    MirrorConfigError,
    build_config,
)
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_properties import parse, render

NEW, OLD = (3, 9, 0), (2, 4, 1)


@pytest.mark.parametrize("mechanism, login_module", [
    ("PLAIN", "org.apache.kafka.common.security.plain.PlainLoginModule"),
    ("SCRAM-SHA-256", "org.apache.kafka.common.security.scram.ScramLoginModule"),
    ("SCRAM-SHA-512", "org.apache.kafka.common.security.scram.ScramLoginModule"),
])
def test_user_and_password_become_a_jaas_line_with_quotes_escaped(mechanism, login_module):
    props, errors = java_client_properties({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": mechanism,
                                            "sasl_plain_username": "mirror", "sasl_plain_password": 'p"w\\d'}, OLD)
    assert errors == []
    assert props == {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                     "sasl.jaas.config": login_module + ' required username="mirror" password="p\\"w\\\\d";'}


def test_kerberos_principal_and_keytab_become_a_keytab_login():
    props, errors = java_client_properties({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI",
                                            "sasl_kerberos_service_name": "kafka", "sasl_kerberos_principal": "mirror@EXAMPLE.COM",
                                            "sasl_kerberos_keytab": "/etc/security/keytabs/mirror.keytab"}, OLD)
    assert errors == []
    assert props["sasl.kerberos.service.name"] == "kafka"
    assert props["sasl.jaas.config"] == ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
                                         'keyTab="/etc/security/keytabs/mirror.keytab" principal="mirror@EXAMPLE.COM";')


def test_kerberos_without_keytab_leaves_the_login_to_mirrormaker2_jaas_config():
    props, _errors = java_client_properties({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI"}, NEW)
    assert "sasl.jaas.config" not in props


def test_pem_files_become_pem_stores_from_kafka_2_7():
    props, errors = java_client_properties({"security_protocol": "SSL", "ssl_cafile": "/ca.pem", "ssl_certfile": "/client.pem",
                                            "ssl_password": "kp", "ssl_check_hostname": False}, (2, 7, 0))
    assert errors == []
    assert props == {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": "/ca.pem",
                     "ssl.keystore.type": "PEM", "ssl.keystore.location": "/client.pem", "ssl.key.password": "kp",
                     "ssl.endpoint.identification.algorithm": ""}


def test_pem_files_on_kafka_2_4_fail_asking_for_jks_stores():
    props, errors = java_client_properties({"security_protocol": "SSL", "ssl_cafile": "/ca.pem"}, OLD)
    assert props == {}
    assert errors and "from Kafka 2.7 on (KIP-651) and this Kafka is 2.4.1" in errors[0] and "ssl_truststore_location" in errors[0]


@pytest.mark.parametrize("version, refused", [((2, 7, 0), True), ((3, 2, 0), True), ((3, 3, 0), False), (NEW, False)])
def test_an_unencrypted_pem_key_is_refused_before_kafka_3_3(version, refused):
    """KAFKA-12703: MirrorMaker 3.2.0 stopped at start on a PEM key store without ssl.key.password (the lab's mTLS listener)."""
    props, errors = java_client_properties({"security_protocol": "SSL", "ssl_cafile": "/ca.pem", "ssl_certfile": "/client.pem"}, version)
    assert bool(errors) == refused
    assert not errors or ("KAFKA-12703" in errors[0] and "ssl_password" in errors[0])
    assert props.get("ssl.keystore.location") == "/client.pem"


def test_a_separate_key_file_is_refused_with_the_fix():
    _props, errors = java_client_properties({"security_protocol": "SSL", "ssl_certfile": "/c.pem", "ssl_keyfile": "/k.pem"}, NEW)
    assert errors and "one PEM file" in errors[0]


def cluster(alias, **extra):
    return dict({"alias": alias, "bootstrap_servers": "127.0.1.10:9092", "broker_count": 1}, **extra)


SASL_SSL = {"bootstrap_servers": ["127.0.1.10:9093"], "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_plain_username": "mirror", "sasl_plain_password": "hunter2", "ssl_cafile": "/ca.pem"}


def test_mm2_renders_each_clusters_connection_and_marks_its_secrets():
    clusters = [cluster("primary-kafka-cluster", connection=SASL_SSL), cluster("secondary-kafka-cluster")]
    config = build_config({"kafka_version": "3.9", "clusters": clusters,
                           "flows": [{"source": "primary-kafka-cluster", "target": "secondary-kafka-cluster"}]})
    props = parse(render(config.files[MM2_PROPERTIES_FILE]))
    assert props["primary-kafka-cluster.security.protocol"] == "SASL_SSL"
    assert props["primary-kafka-cluster.ssl.truststore.location"] == "/ca.pem"
    assert 'password="hunter2"' in props["primary-kafka-cluster.sasl.jaas.config"]
    assert not any(key.startswith(("secondary-kafka-cluster.security", "secondary-kafka-cluster.ssl", "secondary-kafka-cluster.sasl")) for key in props)
    assert config.secret_keys == {"primary-kafka-cluster.sasl.jaas.config"}
    assert "hunter2" not in str(config.redacted().files)


def test_explicit_security_fields_replace_what_the_connection_says():
    config = build_config({"kafka_version": "2.4.1", "clusters": [
        cluster("primary", connection=SASL_SSL, security_protocol="SSL", ssl_truststore_location="/ts.jks", ssl_truststore_password="t"),
        cluster("secondary")], "flows": [{"source": "primary", "target": "secondary"}]})
    props = config.files[MM2_PROPERTIES_FILE]
    assert props["primary.security.protocol"] == "SSL" and props["primary.ssl.truststore.location"] == "/ts.jks"
    assert "primary.sasl.jaas.config" not in props and "primary.ssl.truststore.type" not in props


def test_mm2_2_4_with_a_pem_connection_fails_naming_the_cluster():
    with pytest.raises(MirrorConfigError, match=r"clusters\[0\] \(primary\): connection ssl_cafile: MirrorMaker reads PEM files"):
        build_config({"kafka_version": "2.4.1", "clusters": [cluster("primary", connection=SASL_SSL), cluster("secondary")],
                      "flows": [{"source": "primary", "target": "secondary"}]})


def test_mm1_files_get_the_connection_too():
    clusters = [cluster("primary", connection=SASL_SSL), cluster("secondary")]
    config = build_config({"engine": "mm1", "kafka_version": "3.9", "clusters": clusters,
                           "flows": [{"source": "primary", "target": "secondary"}]})
    consumer = config.files[MM1_CONSUMER_FILE]
    assert consumer["security.protocol"] == "SASL_SSL" and "sasl.jaas.config" in config.secret_keys
