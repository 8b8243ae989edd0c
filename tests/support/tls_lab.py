# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two Kafka clusters reachable only over mutual TLS: a tansu broker behind a stunnel4 TLS terminator per cluster.

Quirk (sandbox brokers): noida advertises its bind address, so clients told about the broker in metadata would bypass a
terminator on another port. tansu advertises what --advertised-listener-url says, so each broker here listens in plain
text on 127.<net>.9.<10|20>:9092 and advertises the terminator's 127.<net>.9.<11|21>:9093, where stunnel (server
certificate with that IP, signed by a CA made for the test) requires a client certificate from the same CA. A client that
does not speak TLS with that certificate reaches nothing. The client key is encrypted, so its password is a secret the
roles must pass and never show. tansu keeps data in memory; the lab lives for one test module.
"""
from __future__ import annotations

import datetime
import ipaddress
import re
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

STUNNEL = "/usr/bin/stunnel4"
SUBNET = 9
CLUSTERS = {"primary": 10, "secondary": 20}  # last octet of the plain listener; the terminator is the next address
PLAIN_PORT, TLS_PORT = 9092, 9093


@dataclass
class TlsLab:
    root: Path
    net: int
    key_password: str = field(default_factory=lambda: "tls-key-" + uuid.uuid4().hex)
    processes: list = field(default_factory=list)

    def ip(self, cluster, tls):
        return "127.%d.%d.%d" % (self.net, SUBNET, CLUSTERS[cluster] + (1 if tls else 0))

    def bootstrap(self, cluster):
        return "%s:%d" % (self.ip(cluster, tls=True), TLS_PORT)

    @property
    def log(self):
        return self.root / "stunnel.log"

    def files(self):
        return {name: str(self.root / name) for name in ("ca.pem", "client.pem", "client.key")}

    def client_options(self, cluster):
        """kafka-python options of an independent client (not the collection's code) for `cluster`."""
        files = self.files()
        return {"bootstrap_servers": [self.bootstrap(cluster)], "security_protocol": "SSL", "ssl_cafile": files["ca.pem"],
                "ssl_certfile": files["client.pem"], "ssl_keyfile": files["client.key"], "ssl_password": self.key_password,
                "request_timeout_ms": 15000}

    def sessions(self, cluster):
        """Connections stunnel accepted for `cluster` after verifying the test client's certificate, so far."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return len(re.findall(r"Service \[%s\] connected remote server from" % re.escape(cluster), text))

    def start(self, tansu_binary):
        self.root.mkdir(parents=True, exist_ok=True)
        self._certificates()
        for cluster in CLUSTERS:
            command = [tansu_binary, "broker", "--listener-url", "tcp://%s:%d" % (self.ip(cluster, False), PLAIN_PORT),
                       "--advertised-listener-url", "tcp://%s" % self.bootstrap(cluster),
                       "--storage-engine", "memory://tansu/", "--cluster-id", "tls-" + cluster]
            log = open(self.root / ("tansu-%s.log" % cluster), "wb")  # pylint: disable=consider-using-with
            self.processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env={"RUST_LOG": "warn"}))
        config = self.root / "stunnel.conf"
        config.write_text(self._stunnel_config())
        self.processes.append(subprocess.Popen([STUNNEL, str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for cluster in CLUSTERS:
            _wait_for_port(self.ip(cluster, False), PLAIN_PORT)
            _wait_for_port(self.ip(cluster, True), TLS_PORT)
        return self

    def stop(self):
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _stunnel_config(self):
        services = "".join(
            "[%s]\naccept = %s:%d\nconnect = %s:%d\n" % (cluster, self.ip(cluster, True), TLS_PORT, self.ip(cluster, False), PLAIN_PORT)
            for cluster in CLUSTERS)
        return ("foreground = yes\npid =\noutput = %s\ndebug = info\n"
                "cert = %s\nkey = %s\nCAfile = %s\nverifyChain = yes\nrequireCert = yes\n%s"
                % (self.log, self.root / "server.pem", self.root / "server.key", self.root / "ca.pem", services))

    def _certificates(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kafkaops.mirror test CA")])
        ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
              .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
              .not_valid_after(now + datetime.timedelta(days=1))
              .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(ca_key, hashes.SHA256()))

        def leaf(common_name, extensions):
            key = ec.generate_private_key(ec.SECP256R1())
            builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
                       .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                       .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1)))
            for extension in extensions:
                builder = builder.add_extension(extension, critical=False)
            return key, builder.sign(ca_key, hashes.SHA256())

        addresses = [x509.IPAddress(ipaddress.ip_address(self.ip(cluster, True))) for cluster in CLUSTERS]
        server_key, server = leaf("kafka-tls-terminator", [x509.SubjectAlternativeName(addresses)])
        client_key, client = leaf("kafkaops-mirror-client", [])
        pem = serialization.Encoding.PEM
        (self.root / "ca.pem").write_bytes(ca.public_bytes(pem))
        (self.root / "server.pem").write_bytes(server.public_bytes(pem))
        (self.root / "server.key").write_bytes(server_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                                        serialization.NoEncryption()))
        (self.root / "client.pem").write_bytes(client.public_bytes(pem))
        (self.root / "client.key").write_bytes(client_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(self.key_password.encode())))
        for name in ("server.key", "client.key"):
            (self.root / name).chmod(0o600)


def _wait_for_port(host, port, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
