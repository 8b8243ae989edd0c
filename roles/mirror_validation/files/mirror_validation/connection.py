# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How to reach one side of the mirror, translated for confluent-kafka and for kafka-python."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

SIDES = ("source", "target")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
FETCH_MAX_BYTES = 52428800  # fetch.max.bytes of Kafka's consumer, librdkafka and kafka-python alike (50 MiB)


def password_env_var(side):
    """The environment variable the SASL password of `side` is read from (never from the command line)."""
    return "MIRROR_VALIDATION_%s_SASL_PASSWORD" % side.upper()


def key_password_env_var(side):
    """The environment variable the password of `side`'s TLS client key is read from (never from the command line)."""
    return "MIRROR_VALIDATION_%s_SSL_PASSWORD" % side.upper()


@dataclass(frozen=True)
class Connection:
    """Bootstrap servers plus the security settings of one cluster."""

    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: Optional[str] = None
    sasl_username: Optional[str] = None
    sasl_password: Optional[str] = None
    sasl_kerberos_service_name: str = "kafka"
    # With a keytab, librdkafka runs kinit itself (sasl.kerberos.kinit.cmd) into the default credential cache,
    # which kafka-python's GSSAPI reads too; without one, both use a ticket obtained with kinit beforehand.
    sasl_kerberos_principal: Optional[str] = None
    sasl_kerberos_keytab: Optional[str] = None
    ssl_cafile: Optional[str] = None
    ssl_certfile: Optional[str] = None
    ssl_keyfile: Optional[str] = None
    ssl_password: Optional[str] = None
    ssl_check_hostname: bool = True
    # The largest response the client accepts. Brokers that ignore fetch size limits answer with
    # everything up to the log end, which can exceed the clients' default caps. What a reader asks a
    # fetch for stays at the clients' default (FETCH_MAX_BYTES) or below, never this cap: a reader's
    # memory is then bounded by the fetch size on brokers that keep to it, whatever the partition's size.
    receive_max_bytes: Optional[int] = None

    def __repr__(self):
        # Keep the password out of logs and Spark UIs.
        return "Connection(bootstrap_servers=%r, security_protocol=%r)" % (self.bootstrap_servers, self.security_protocol)

    def confluent_config(self, consumer=True):
        """librdkafka settings; `consumer=False` leaves out the fetch settings an admin client rejects."""
        config = {"bootstrap.servers": self.bootstrap_servers, "security.protocol": self.security_protocol}
        if self.sasl_mechanism:
            config["sasl.mechanism"] = self.sasl_mechanism
        if self.sasl_username is not None:
            config["sasl.username"] = self.sasl_username
        if self.sasl_password is not None:
            config["sasl.password"] = self.sasl_password
        if self.sasl_mechanism == "GSSAPI":
            config["sasl.kerberos.service.name"] = self.sasl_kerberos_service_name
            if self.sasl_kerberos_principal:
                config["sasl.kerberos.principal"] = self.sasl_kerberos_principal
            if self.sasl_kerberos_keytab:
                config["sasl.kerberos.keytab"] = self.sasl_kerberos_keytab
        if self.ssl_cafile:
            config["ssl.ca.location"] = self.ssl_cafile
        if self.ssl_certfile:
            config["ssl.certificate.location"] = self.ssl_certfile
        if self.ssl_keyfile:
            config["ssl.key.location"] = self.ssl_keyfile
        if self.ssl_password is not None:
            config["ssl.key.password"] = self.ssl_password
        if self.security_protocol.endswith("SSL") and not self.ssl_check_hostname:
            config["ssl.endpoint.identification.algorithm"] = "none"
        if self.receive_max_bytes:
            config["receive.message.max.bytes"] = self.receive_max_bytes
            if consumer:
                # librdkafka requires receive.message.max.bytes >= fetch.max.bytes + 512.
                config["fetch.max.bytes"] = max(min(FETCH_MAX_BYTES, self.receive_max_bytes - 512), 1)
        return config

    def kafka_python_config(self, consumer=True):
        """kafka-python settings; `consumer=False` leaves out what KafkaAdminClient does not accept."""
        config = {"bootstrap_servers": self.bootstrap_servers.split(","), "security_protocol": self.security_protocol}
        if self.sasl_mechanism:
            config["sasl_mechanism"] = self.sasl_mechanism
        if self.sasl_username is not None:
            config["sasl_plain_username"] = self.sasl_username
        if self.sasl_password is not None:
            config["sasl_plain_password"] = self.sasl_password
        if self.sasl_mechanism == "GSSAPI":
            config["sasl_kerberos_service_name"] = self.sasl_kerberos_service_name
        if self.ssl_cafile:
            config["ssl_cafile"] = self.ssl_cafile
        if self.ssl_certfile:
            config["ssl_certfile"] = self.ssl_certfile
        if self.ssl_keyfile:
            config["ssl_keyfile"] = self.ssl_keyfile
        if self.ssl_password is not None:
            config["ssl_password"] = self.ssl_password
        if self.security_protocol.endswith("SSL"):
            config["ssl_check_hostname"] = self.ssl_check_hostname
        if self.receive_max_bytes:
            config["receive_message_max_bytes"] = self.receive_max_bytes
            if consumer:
                config["fetch_max_bytes"] = min(FETCH_MAX_BYTES, self.receive_max_bytes)
        return config


def add_connection_arguments(parser, side):
    group = parser.add_argument_group("%s cluster" % side)
    group.add_argument("--%s-bootstrap" % side, required=True, metavar="HOST:PORT[,...]", help="bootstrap servers of the %s cluster" % side)
    group.add_argument("--%s-security-protocol" % side, choices=SECURITY_PROTOCOLS, default="PLAINTEXT")
    group.add_argument("--%s-sasl-mechanism" % side, choices=SASL_MECHANISMS)
    group.add_argument("--%s-sasl-username" % side)
    group.add_argument("--%s-sasl-kerberos-service-name" % side, default="kafka")
    group.add_argument("--%s-sasl-kerberos-principal" % side, help="principal to kinit as from the keytab (GSSAPI)")
    group.add_argument("--%s-sasl-kerberos-keytab" % side, help="keytab of the principal (GSSAPI)")
    group.add_argument("--%s-ssl-cafile" % side)
    group.add_argument("--%s-ssl-certfile" % side)
    group.add_argument("--%s-ssl-keyfile" % side)
    group.add_argument("--%s-no-ssl-check-hostname" % side, action="store_true", help="do not verify the broker certificate's host name")


def connection_from_arguments(args, side, receive_max_bytes=None, environ=None):
    """Build the Connection of `side`; the passwords come from the environment (password_env_var, key_password_env_var)."""
    environ = os.environ if environ is None else environ

    def option(name):
        return getattr(args, "%s_%s" % (side, name))

    return Connection(
        bootstrap_servers=option("bootstrap"),
        security_protocol=option("security_protocol"),
        sasl_mechanism=option("sasl_mechanism"),
        sasl_username=option("sasl_username"),
        sasl_password=environ.get(password_env_var(side)),
        sasl_kerberos_service_name=option("sasl_kerberos_service_name"),
        sasl_kerberos_principal=option("sasl_kerberos_principal"),
        sasl_kerberos_keytab=option("sasl_kerberos_keytab"),
        ssl_cafile=option("ssl_cafile"),
        ssl_certfile=option("ssl_certfile"),
        ssl_keyfile=option("ssl_keyfile"),
        ssl_password=environ.get(key_password_env_var(side)),
        ssl_check_hostname=not option("no_ssl_check_hostname"),
        receive_max_bytes=receive_max_bytes,
    )
