# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kafka Java client properties (MirrorMaker 2's) that reach a cluster the way a kafkaops.mirror connection does.

The connection is the dict of the modules' options (doc fragment kafka_connection, filter kafka_connection): PEM
files and a SASL user, where Java clients want a JAAS line and, before Kafka 2.7, JKS stores.
"""
from __future__ import annotations

# KIP-651: PEM trust and key stores (ssl.truststore.type / ssl.keystore.type = PEM).
PEM_STORES_SINCE = (2, 7, 0)
# KAFKA-12703: before 3.3, a PEM key store's private key must be encrypted, with ssl.key.password; MirrorMaker 3.2.0 stopped at
# start on an unencrypted one ("SSL PEM key store is specified, but key password is not specified", first real mTLS run).
PEM_UNENCRYPTED_KEY_SINCE = (3, 3, 0)
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
KERBEROS_LOGIN_MODULE = "com.sun.security.auth.module.Krb5LoginModule"


def _jaas_value(value):
    return '"%s"' % str(value).replace("\\", "\\\\").replace('"', '\\"')


def _jaas_line(module, options):
    return "%s required %s;" % (module, " ".join("%s=%s" % (key, value) for key, value in options))


def java_client_properties(connection, version):
    """(properties, errors): unprefixed client properties for `connection` on Kafka `version` (a (major, minor, patch) tuple).

    Only what the connection sets is rendered. Errors say what MirrorMaker of that version cannot read and what to set instead.
    """
    props, errors = {}, []
    protocol = connection.get("security_protocol")
    if protocol:
        props["security.protocol"] = protocol
    mechanism = connection.get("sasl_mechanism")
    if mechanism:
        props["sasl.mechanism"] = mechanism
    if mechanism in _LOGIN_MODULES and connection.get("sasl_plain_username") is not None:
        props["sasl.jaas.config"] = _jaas_line(_LOGIN_MODULES[mechanism], [
            ("username", _jaas_value(connection["sasl_plain_username"])),
            ("password", _jaas_value(connection.get("sasl_plain_password") or "")),
        ])
    if mechanism == "GSSAPI":
        if connection.get("sasl_kerberos_service_name"):
            props["sasl.kerberos.service.name"] = connection["sasl_kerberos_service_name"]
        if connection.get("sasl_kerberos_keytab"):
            props["sasl.jaas.config"] = _jaas_line(KERBEROS_LOGIN_MODULE, [
                ("useKeyTab", "true"), ("storeKey", "true"),
                ("keyTab", _jaas_value(connection["sasl_kerberos_keytab"])),
                ("principal", _jaas_value(connection.get("sasl_kerberos_principal") or "")),
            ])
    pem_files = [key for key in ("ssl_cafile", "ssl_certfile") if connection.get(key)]
    if pem_files and tuple(version) < PEM_STORES_SINCE:
        errors.append(
            "connection %s: MirrorMaker reads PEM files from Kafka 2.7 on (KIP-651) and this Kafka is %s; give the cluster "
            "ssl_truststore_location / ssl_keystore_location (JKS stores) and their passwords, which replace what the connection "
            "says for MirrorMaker" % (" and ".join(pem_files), ".".join(str(part) for part in version)))
        return {}, errors
    if connection.get("ssl_cafile"):
        props["ssl.truststore.type"] = "PEM"
        props["ssl.truststore.location"] = connection["ssl_cafile"]
    if connection.get("ssl_certfile"):
        if connection.get("ssl_keyfile") and connection["ssl_keyfile"] != connection["ssl_certfile"]:
            errors.append(
                "connection ssl_certfile and ssl_keyfile: MirrorMaker reads a client key and its certificate chain from one PEM file "
                "(ssl.keystore.type PEM); put the private key (PKCS#8) and the chain in one file and give it as ssl_certfile without "
                "ssl_keyfile (kafka-python reads the key from the same file), or give the cluster ssl_keystore_location")
        if connection.get("ssl_password") is None and tuple(version) < PEM_UNENCRYPTED_KEY_SINCE:
            errors.append(
                "connection ssl_certfile without ssl_password: MirrorMaker of Kafka %s reads a client key from a PEM file only when the "
                "key is encrypted and ssl.key.password given (unencrypted keys from Kafka 3.3 on, KAFKA-12703); encrypt the key "
                "(openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES, which Java 8 reads too) and give its password as ssl_password, or give the "
                "cluster ssl_keystore_location (a PKCS12 or JKS store) and its passwords" % ".".join(str(part) for part in version))
        props["ssl.keystore.type"] = "PEM"
        props["ssl.keystore.location"] = connection["ssl_certfile"]
        if connection.get("ssl_password") is not None:
            props["ssl.key.password"] = connection["ssl_password"]
    if connection.get("ssl_check_hostname") is False:
        props["ssl.endpoint.identification.algorithm"] = ""
    return props, errors
