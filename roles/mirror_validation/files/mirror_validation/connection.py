# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How to reach one side of the mirror, translated for confluent-kafka and for kafka-python."""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Optional

from .errors import ValidationUnavailable

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
FETCH_MAX_BYTES = 52428800  # fetch.max.bytes of Kafka's consumer, librdkafka and kafka-python alike (50 MiB)
# A password is never an argument (a command line is visible in ps): the configuration file (0600) or the environment holds it.
SECRET = {"secret": True}


def secret_env_var(side, name):
    """The environment variable a password of `side` is read from when the configuration has none: the SASL password
    (sasl_plain_password) from MIRROR_VALIDATION_SOURCE_SASL_PASSWORD, the TLS key's (ssl_password) from ..._SSL_PASSWORD."""
    return "MIRROR_VALIDATION_%s_%s_PASSWORD" % (side.upper(), name.split("_")[0].upper())


# The settings both clients take as they are, unset ones left out: (field, librdkafka's name). kafka-python's name is the
# field's, as it is the Kafka modules' (which use kafka-python).
_AS_THEY_ARE = (("sasl_mechanism", "sasl.mechanism"), ("sasl_plain_username", "sasl.username"), ("sasl_plain_password", "sasl.password"),
                ("ssl_cafile", "ssl.ca.location"), ("ssl_certfile", "ssl.certificate.location"), ("ssl_keyfile", "ssl.key.location"),
                ("ssl_password", "ssl.key.password"))


@dataclass(frozen=True)
class Connection:
    """Bootstrap servers plus the security settings of one cluster, named as the Kafka modules' connection options."""

    # "flag": the command line's name after --source- / --target-, where it differs from the option's (the earlier
    # versions' flags, which bench/validation.py's baseline runs still give).
    bootstrap_servers: str = field(metadata={"flag": "bootstrap", "help": "HOST:PORT[,...]"})
    security_protocol: str = field(default="PLAINTEXT", metadata={"choices": SECURITY_PROTOCOLS})
    sasl_mechanism: Optional[str] = field(default=None, metadata={"choices": SASL_MECHANISMS})
    sasl_plain_username: Optional[str] = field(default=None, metadata={"flag": "sasl-username"})
    sasl_plain_password: Optional[str] = field(default=None, metadata=SECRET)
    sasl_kerberos_service_name: str = "kafka"
    # With a keytab, librdkafka runs kinit itself (sasl.kerberos.kinit.cmd); kafka-python's GSSAPI takes no keytab and reads
    # the credential cache that kerberos_login() fills. Without one, both use a ticket obtained with kinit beforehand.
    sasl_kerberos_principal: Optional[str] = None
    sasl_kerberos_keytab: Optional[str] = None
    ssl_cafile: Optional[str] = None
    ssl_certfile: Optional[str] = None
    ssl_keyfile: Optional[str] = None
    ssl_password: Optional[str] = field(default=None, metadata=SECRET)
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
        config.update((key, getattr(self, name)) for name, key in _AS_THEY_ARE if getattr(self, name) is not None)
        if self.sasl_mechanism == "GSSAPI":
            config["sasl.kerberos.service.name"] = self.sasl_kerberos_service_name
            if self.sasl_kerberos_principal:
                config["sasl.kerberos.principal"] = self.sasl_kerberos_principal
            if self.sasl_kerberos_keytab:
                config["sasl.kerberos.keytab"] = self.sasl_kerberos_keytab
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
        config.update((name, getattr(self, name)) for name, _key in _AS_THEY_ARE if getattr(self, name) is not None)
        if self.sasl_mechanism == "GSSAPI":
            config["sasl_kerberos_service_name"] = self.sasl_kerberos_service_name
        if self.security_protocol.endswith("SSL"):
            config["ssl_check_hostname"] = self.ssl_check_hostname
        if self.receive_max_bytes:
            config["receive_message_max_bytes"] = self.receive_max_bytes
            if consumer:
                config["fetch_max_bytes"] = min(FETCH_MAX_BYTES, self.receive_max_bytes)
        return config


# Per process: (principal, keytab) -> the credential cache kerberos_login() made for it.
_KERBEROS_CACHES = {}
CCACHE_VARIABLE = "KRB5CCNAME"


def kerberos_login(connection):
    """For kafka-python over GSSAPI with a keytab: `kinit -k -t keytab principal` into a credential cache of this process's
    own (once per process: the Spark driver and each Python worker), and KRB5CCNAME pointing at it. python-gssapi takes no
    keytab; it reads the cache KRB5CCNAME names, a process-wide setting, so one process logs in as one principal."""
    if connection.sasl_mechanism != "GSSAPI" or not connection.sasl_kerberos_keytab:
        return
    identity = (connection.sasl_kerberos_principal, connection.sasl_kerberos_keytab)
    if identity not in _KERBEROS_CACHES:
        if _KERBEROS_CACHES:
            raise ValidationUnavailable(
                "Kerberos principal %s and %s in one validation job: kafka-python reads one credential cache per process, so both "
                "sides must log in as the same principal with the same keytab" % (next(iter(_KERBEROS_CACHES))[0], identity[0]))
        kinit = shutil.which("kinit")
        if kinit is None:
            raise ValidationUnavailable("sasl_kerberos_keytab needs MIT Kerberos' kinit on this host (krb5-user, krb5-workstation)")
        directory = tempfile.mkdtemp(prefix="kafkaops-validation-krb5-")
        atexit.register(shutil.rmtree, directory, True)
        ccache = "FILE:" + os.path.join(directory, "ccache")
        result = subprocess.run([kinit, "-k", "-t", identity[1], identity[0] or ""], env=dict(os.environ, **{CCACHE_VARIABLE: ccache}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60, check=False)
        if result.returncode != 0:
            said = (result.stderr or result.stdout).strip()
            raise ValidationUnavailable("kinit -k -t %s %s failed (%d): %s" % (identity[1], identity[0], result.returncode, said))
        _KERBEROS_CACHES[identity] = ccache
    os.environ[CCACHE_VARIABLE] = _KERBEROS_CACHES[identity]
