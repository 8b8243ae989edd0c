# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secure listeners of the real-Kafka lab (`up(secure=True)`: apache provider, ZooKeeper releases).

Next to the lab's PLAINTEXT client listener and INTERNAL replication listener, every broker gets three more on its own
address, each with one kind of client authentication as HDInsight's secure clusters have it:

| listener | protocol | port | client authentication |
|---|---|---|---|
| SCRAM | SASL_PLAINTEXT | 9095 | SCRAM-SHA-512 |
| MTLS | SSL | 9096 | a client certificate (ssl.client.auth=required) |
| SASLSSL | SASL_SSL | 9097 | SCRAM-SHA-512 over TLS (server certificate only) |

and an ACL authorizer (the stand-in for Ranger's Kafka policies): SimpleAclAuthorizer on 2.x, AclAuthorizer on 3.x, with
`super.users` holding User:ANONYMOUS (the PLAINTEXT and INTERNAL listeners', so that everything else the lab runs keeps
working unchanged) and User:lab-admin (the tests' independent clients). A certificate's subject CN=<name> maps to
User:<name> (ssl.principal.mapping.rules), so a principal is the same user over SCRAM and over TLS.

`up` makes the material once per directory in DIR/security (mode 0700, files 0600): a throwaway CA, a PKCS12 key store per
broker (its FQDN and IP as subject alternative names) and a trust store, PEM client files (private key and certificate in
one file, as Kafka's PEM key store and kafka-python both read it) for lab-admin and mirrormaker, one for `intruder` signed
by a CA the brokers do not trust (their keys encrypted with one random password), and random SCRAM passwords; the SCRAM
credentials are created with the release's own kafka.admin.ConfigCommand through ZooKeeper once the brokers answer.
credentials.json holds the passwords.
"""
from __future__ import annotations

import json
import os
import secrets
import subprocess
from pathlib import Path

from sandbox import kafka_dist

LISTENERS = (("SCRAM", "SASL_PLAINTEXT", 9095), ("MTLS", "SSL", 9096), ("SASLSSL", "SASL_SSL", 9097))
PORTS = tuple(port for _name, _protocol, port in LISTENERS)
MECHANISM = "SCRAM-SHA-512"
ADMIN, MIRRORMAKER, INTRUDER = "lab-admin", "mirrormaker", "intruder"
SCRAM_USERS = (ADMIN, MIRRORMAKER)
CREDENTIALS = "credentials.json"
_SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
_DAYS = "30"


def listener(name: str) -> dict:
    """{"name", "protocol", "port"} of one of LISTENERS."""
    found = next(entry for entry in LISTENERS if entry[0] == name)
    return {"name": found[0], "protocol": found[1], "port": found[2]}


def authorizer(release: str) -> str:
    """The ACL authorizer of a ZooKeeper release: SimpleAclAuthorizer is what 2.x clusters (HDInsight 5.0) run; 3.0 deprecated
    it for AclAuthorizer (KIP-504, in 2.4 already)."""
    return "kafka.security.auth.SimpleAclAuthorizer" if int(release.split(".")[0]) < 3 else "kafka.security.authorizer.AclAuthorizer"


def _run(*argv: str, cwd: Path) -> None:
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True, timeout=120)


def _private(path: Path) -> None:
    path.chmod(0o600)


def _signed(directory: Path, name: str, subject: str, ca: str, extension: str = "") -> None:
    """<name>.key (PKCS#8) and <name>.crt signed by <ca>.key/<ca>.crt."""
    _run("openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-subj", subject, "-out", f"{name}.csr", cwd=directory)
    extra = []
    if extension:
        (directory / f"{name}.ext").write_text(extension)
        extra = ["-extfile", f"{name}.ext"]
    _run("openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial", "-days", _DAYS,
         "-out", f"{name}.crt", *extra, cwd=directory)
    (directory / f"{name}.csr").unlink()
    _private(directory / f"{name}.key")


def _client_pem(directory: Path, name: str, ca: str, key_password: str) -> str:
    """<name>.pem: the private key, encrypted with `key_password`, and the certificate in one file (Kafka's PEM key store wants
    both in ssl.keystore.location, and before 3.3 only an encrypted key, KAFKA-12703; PBE-SHA1-3DES is a scheme the Java 8 that
    runs MirrorMaker decrypts)."""
    _signed(directory, name, f"/CN={name}", ca)
    _run("openssl", "pkcs8", "-topk8", "-v1", "PBE-SHA1-3DES", "-in", f"{name}.key", "-out", f"{name}.key.enc", "-passout", f"pass:{key_password}",
         cwd=directory)
    pem = directory / f"{name}.pem"
    pem.write_text((directory / f"{name}.key.enc").read_text() + (directory / f"{name}.crt").read_text())
    (directory / f"{name}.key.enc").unlink()
    _private(pem)
    return str(pem)


def _ca(directory: Path, name: str) -> None:
    _run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", _DAYS,
         "-subj", f"/CN=kafkaops lab {name}", cwd=directory)
    _private(directory / f"{name}.key")


def ensure_material(sandbox_dir: Path, brokers: list) -> dict:
    """DIR/security's CA, stores, client files and passwords (made once per directory; a reboot keeps them, as a cluster keeps
    its certificates); `brokers` are (fqdn, ip) of every broker node. Returns what state.json records (paths, no password)."""
    directory = sandbox_dir / "security"
    credentials = directory / CREDENTIALS
    if not credentials.exists():
        directory.mkdir(mode=0o700, exist_ok=True)
        store_password = secrets.token_urlsafe(16)
        _ca(directory, "ca")
        _ca(directory, "untrusted-ca")
        for fqdn, ip in brokers:
            _signed(directory, fqdn, f"/CN={fqdn}", "ca", f"subjectAltName=DNS:{fqdn},IP:{ip}\n")
            _run("openssl", "pkcs12", "-export", "-in", f"{fqdn}.crt", "-inkey", f"{fqdn}.key", "-certfile", "ca.crt", "-name", "broker",
                 "-out", f"{fqdn}.p12", "-passout", f"pass:{store_password}", cwd=directory)
            _private(directory / f"{fqdn}.p12")
        _run("keytool", "-importcert", "-noprompt", "-storetype", "PKCS12", "-keystore", "truststore.p12", "-storepass", store_password,
             "-alias", "ca", "-file", "ca.crt", cwd=directory)
        key_password = secrets.token_urlsafe(16)
        clients = {user: _client_pem(directory, user, "ca", key_password) for user in SCRAM_USERS}
        clients[INTRUDER] = _client_pem(directory, INTRUDER, "untrusted-ca", key_password)
        data = {"store_password": store_password, "key_password": key_password, "scram": {user: secrets.token_urlsafe(16) for user in SCRAM_USERS},
                "client_pem": clients, "ca": str(directory / "ca.crt"), "scram_created": []}
        credentials.write_text(json.dumps(data, indent=2) + "\n")
        _private(credentials)
    data = json.loads(credentials.read_text())
    return {"dir": str(directory), "credentials": str(credentials), "ca": data["ca"], "client_pem": data["client_pem"],
            "mechanism": MECHANISM, "listeners": {name: listener(name) for name, _protocol, _port in LISTENERS},
            "admin": ADMIN, "mirrormaker": MIRRORMAKER, "intruder": INTRUDER}


def credentials(security: dict) -> dict:
    """The passwords of a lab's security material (state["security"])."""
    return json.loads(Path(security["credentials"]).read_text())


def broker_properties(security_dir: str, ip: str, advertised: str, fqdn: str, release: str) -> tuple:
    """(listeners, advertised listeners, protocol map entries, other keys) the secure listeners add to a broker."""
    data = json.loads((Path(security_dir) / CREDENTIALS).read_text())
    listeners = ",".join(f"{name}://{ip}:{port}" for name, _protocol, port in LISTENERS)
    advertised_listeners = ",".join(f"{name}://{advertised}:{port}" for name, _protocol, port in LISTENERS)
    protocol_map = ",".join(f"{name}:{protocol}" for name, protocol, _port in LISTENERS)
    keys = {
        "sasl.enabled.mechanisms": MECHANISM,
        # A broker's SCRAM listener needs a JAAS login section even though SCRAM reads its users from ZooKeeper.
        **{f"listener.name.{name.lower()}.{MECHANISM.lower()}.sasl.jaas.config": _SCRAM_LOGIN
           for name, protocol, _port in LISTENERS if protocol.startswith("SASL_")},
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(Path(security_dir) / f"{fqdn}.p12"),
        "ssl.keystore.password": data["store_password"], "ssl.key.password": data["store_password"],
        "ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(Path(security_dir) / "truststore.p12"),
        "ssl.truststore.password": data["store_password"],
        "listener.name.mtls.ssl.client.auth": "required",
        # CN=<name> -> User:<name>, the same principal as the SCRAM user of that name (2.2+, KIP-371).
        "ssl.principal.mapping.rules": "RULE:^CN=([^,]+)$/$1/,DEFAULT",
        "authorizer.class.name": authorizer(release),
        "super.users": f"User:ANONYMOUS;User:{ADMIN}",
    }
    return listeners, advertised_listeners, protocol_map, keys


def create_scram_users(security: dict, zookeepers: dict) -> None:
    """The SCRAM-SHA-512 credentials of SCRAM_USERS in each cluster's ZooKeeper (`zookeepers`: host:port -> the cluster's
    release), with that release's own kafka.admin.ConfigCommand, all at once; once per directory (ZooKeeper keeps them)."""
    path = Path(security["credentials"])
    data = json.loads(path.read_text())
    env = {**os.environ, "KAFKA_HEAP_OPTS": "-Xmx96m", "KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
           "KAFKA_LOG4J_OPTS": "-Dlog4j.configuration=file:/dev/null"}
    running = []
    for zookeeper, release in zookeepers.items():
        if zookeeper in data["scram_created"]:
            continue
        launcher = kafka_dist.home_path(release) / "bin" / "kafka-run-class.sh"
        for user, password in data["scram"].items():
            argv = [str(launcher), "kafka.admin.ConfigCommand", "--zookeeper", zookeeper, "--alter", "--entity-type", "users",
                    "--entity-name", user, "--add-config", f"{MECHANISM}=[password={password}]"]
            running.append((zookeeper, user, subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    failed = []
    for zookeeper, user, proc in running:
        output = proc.communicate(timeout=180)[0]
        if proc.returncode:
            failed.append(f"{user} on {zookeeper}: {output[-800:]}")
    if failed:
        raise RuntimeError("kafka.admin.ConfigCommand could not create the lab's SCRAM users: " + "; ".join(failed))
    data["scram_created"] = sorted(set(data["scram_created"]) | set(zookeepers))
    path.write_text(json.dumps(data, indent=2) + "\n")
