# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options that say how to reach a Kafka cluster, and which combinations of them cannot work.

Kept apart from kafka_client, which imports kafka-python: the controller's filter kafkaops.mirror.kafka_connection
checks an inventory's connection against these, and Ansible loads a filter plugin afresh in every task's forked
worker, so importing kafka-python there cost about 0.2 CPU-s per task that templates a connection (a Python that
imports kafka_client: 0.21-0.23 CPU-s; this file: 0.01).
"""
from __future__ import annotations

import re

SECURITY_PROTOCOLS = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
SASL_MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI"]
_CREDENTIAL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# Inventory group variables carry the options of kafka_connection_argument_spec() with this prefix
# (kafka_bootstrap_servers, kafka_ssl_cafile, ...); filter kafkaops.mirror.kafka_connection reads them.
INVENTORY_PREFIX = "kafka_"
# Options a role sets itself rather than the inventory (each role has its own timeout variable).
_ROLE_OPTIONS = ("request_timeout_ms",)
_API_VERSION_PATTERN = re.compile(r"^\d+\.\d+(\.\d+)?$")


def kafka_connection_argument_spec():
    """A fresh argument spec for the options of doc fragment kafkaops.mirror.kafka_connection."""
    return dict(
        bootstrap_servers=dict(type="list", elements="str", required=True),
        security_protocol=dict(type="str", default="PLAINTEXT", choices=SECURITY_PROTOCOLS),
        sasl_mechanism=dict(type="str", choices=SASL_MECHANISMS),
        sasl_kerberos_service_name=dict(type="str"),
        sasl_kerberos_principal=dict(type="str"),
        sasl_kerberos_keytab=dict(type="path", no_log=False),
        sasl_plain_username=dict(type="str"),
        sasl_plain_password=dict(type="str", no_log=True),
        ssl_cafile=dict(type="path"),
        ssl_certfile=dict(type="path"),
        ssl_keyfile=dict(type="path", no_log=False),
        ssl_password=dict(type="str", no_log=True),
        ssl_check_hostname=dict(type="bool", default=True),
        request_timeout_ms=dict(type="int", default=30000),
        api_version=dict(type="str"),
    )


def inventory_connection_options():
    """The connection options an inventory gives per cluster, as group variables named INVENTORY_PREFIX + option."""
    return [option for option in kafka_connection_argument_spec() if option not in _ROLE_OPTIONS]


def connection_option_errors(params):
    """Combinations of connection options that cannot work, as messages (empty when fine)."""
    errors = []
    protocol = params.get("security_protocol") or "PLAINTEXT"
    mechanism = params.get("sasl_mechanism")
    if not params.get("bootstrap_servers"):
        errors.append("bootstrap_servers is empty: give at least one host:port")
    if protocol.startswith("SASL_") and not mechanism:
        errors.append(f"security_protocol {protocol} needs sasl_mechanism ({', '.join(SASL_MECHANISMS)})")
    if mechanism in _CREDENTIAL_MECHANISMS and protocol.startswith("SASL_"):
        missing = [key for key in ("sasl_plain_username", "sasl_plain_password") if not params.get(key)]
        if missing:
            errors.append(f"sasl_mechanism {mechanism} needs {' and '.join(missing)}")
    if mechanism and not protocol.startswith("SASL_"):
        errors.append(f"sasl_mechanism {mechanism} is set but security_protocol is {protocol}; use SASL_PLAINTEXT or SASL_SSL")
    kerberos = [key for key in ("sasl_kerberos_principal", "sasl_kerberos_keytab") if params.get(key)]
    if kerberos and mechanism != "GSSAPI":
        errors.append(f"{' and '.join(kerberos)} need sasl_mechanism GSSAPI (got {mechanism or 'none'})")
    elif len(kerberos) == 1:
        errors.append("sasl_kerberos_principal and sasl_kerberos_keytab go together (kinit -k -t <keytab> <principal>); "
                      "leave both unset to use a ticket obtained with kinit beforehand")
    if params.get("ssl_keyfile") and not params.get("ssl_certfile"):
        errors.append("ssl_keyfile is set without ssl_certfile")
    if params.get("api_version") and not _API_VERSION_PATTERN.match(params["api_version"]):
        errors.append(f"api_version {params['api_version']!r} is not a Kafka version like '2.4' or '3.7.1'")
    if (params.get("request_timeout_ms") or 1) <= 0:
        errors.append("request_timeout_ms must be positive")
    return errors
