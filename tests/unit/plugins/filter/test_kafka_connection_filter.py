# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter kafka_connection: every inventory connection variable becomes the module option of the same name, and nothing else."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.filter.kafka_connection import kafka_connection
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import inventory_connection_options

SECRET = "s3cr3t-never-shown"
# Every connection variable an inventory can give, with a value that works together with the others.
ALL_VARIABLES = {
    "kafka_bootstrap_servers": "wn0-primar:9092, wn1-primar:9092",
    "kafka_security_protocol": "SASL_SSL",
    "kafka_sasl_mechanism": "GSSAPI",
    "kafka_sasl_kerberos_service_name": "kafka",
    "kafka_sasl_kerberos_principal": "mirror@EXAMPLE.COM",
    "kafka_sasl_kerberos_keytab": "~mirror/mirror.keytab",
    "kafka_sasl_plain_username": "unused-by-gssapi",
    "kafka_sasl_plain_password": SECRET,
    "kafka_ssl_cafile": "/etc/kafka/ca.pem",
    "kafka_ssl_certfile": "/etc/kafka/client.pem",
    "kafka_ssl_keyfile": "/etc/kafka/client.key",
    "kafka_ssl_password": SECRET,
    "kafka_ssl_check_hostname": False,
    "kafka_api_version": "2.4.1",
}


def host(**variables):
    return dict({"inventory_hostname": "wn0-primar", "kafka_cluster_alias": "primary-kafka-cluster"}, **variables)


def test_every_connection_option_has_an_inventory_variable_and_arrives():
    assert sorted("kafka_" + option for option in inventory_connection_options()) == sorted(ALL_VARIABLES)
    connection = kafka_connection(host(**ALL_VARIABLES))
    expected = {name[len("kafka_"):]: value for name, value in ALL_VARIABLES.items()}
    expected["bootstrap_servers"] = ["wn0-primar:9092", "wn1-primar:9092"]
    # Paths are paths on the MirrorMaker host: the controller leaves them as written (no ~ expansion).
    assert connection == expected


def test_only_what_the_inventory_sets_is_returned_and_overrides_win():
    connection = kafka_connection(host(kafka_bootstrap_servers=["a:9092"], kafka_ssl_cafile="/ca.pem"),
                                  {"bootstrap_servers": "b:9093", "request_timeout_ms": 5000, "security_protocol": None})
    assert connection == {"bootstrap_servers": ["b:9093"], "ssl_cafile": "/ca.pem", "request_timeout_ms": 5000}


def test_a_misspelt_connection_variable_fails_naming_it():
    with pytest.raises(AnsibleFilterError, match=r"host wn0-primar defines kafka_ssl_ca_file, which no connection option reads"):
        kafka_connection(host(kafka_bootstrap_servers="a:9092", kafka_ssl_ca_file="/ca.pem"))


def test_an_unknown_override_fails():
    with pytest.raises(AnsibleFilterError, match=r"unknown connection option\(s\) sasl_password"):
        kafka_connection(host(kafka_bootstrap_servers="a:9092"), {"sasl_password": SECRET})


@pytest.mark.parametrize("variables, message", [
    ({}, "bootstrap_servers is empty"),
    ({"kafka_security_protocol": "SASL_SSL"}, "needs sasl_mechanism"),
    ({"kafka_security_protocol": "TLS"}, "security_protocol must be one of"),
    ({"kafka_security_protocol": "SASL_PLAINTEXT", "kafka_sasl_mechanism": "GSSAPI", "kafka_sasl_kerberos_keytab": "/k"},
     "sasl_kerberos_principal and sasl_kerberos_keytab go together"),
    ({"kafka_sasl_kerberos_principal": "p@R", "kafka_sasl_kerberos_keytab": "/k"}, "need sasl_mechanism GSSAPI"),
    ({"kafka_security_protocol": "SASL_SSL", "kafka_sasl_mechanism": "PLAIN", "kafka_sasl_plain_username": "u"},
     "needs sasl_plain_password"),
])
def test_options_that_cannot_work_together_fail_without_showing_values(variables, message):
    variables = dict({"kafka_bootstrap_servers": "a:9092"} if variables else {}, **variables)
    variables.setdefault("kafka_ssl_password", SECRET)
    with pytest.raises(AnsibleFilterError) as failure:
        kafka_connection(host(**variables))
    assert message in str(failure.value)
    assert SECRET not in str(failure.value)


def test_input_must_be_a_hosts_variables():
    with pytest.raises(AnsibleFilterError, match="expected the variables of a cluster host"):
        kafka_connection("primary_kafka")
