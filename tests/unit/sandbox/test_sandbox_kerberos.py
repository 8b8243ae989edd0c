# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The secure lab's Kerberos realm (sandbox/lab_kerberos.py): its krb5.conf and kdc.conf, the brokers' KERBEROS listener, and the
realm made with Debian's MIT tools where they are installed (kdb5_util and kadmin.local run in a fraction of a second, no KDC)."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from sandbox import api, broker_config, lab_kerberos, lab_security
from sandbox.providers import ApacheProvider, BrokerSpec
from sandbox.topology import build_topology

FQDN = "wn1-primar.x.internal.cloudapp.net"
MIT_TOOLS = all(shutil.which(name) or Path("/usr/sbin", name).is_file() for name in ("kdb5_util", "kadmin.local", "klist"))


def security_dir(tmp_path: Path, realm: bool = True) -> Path:
    security = tmp_path / "security"
    (security / "kerberos").mkdir(parents=True)
    (security / lab_security.CREDENTIALS).write_text(json.dumps({"store_password": "sp"}))
    if realm:
        (security / "kerberos" / lab_kerberos.STATE).write_text(json.dumps({"keytabs": {FQDN: "/lab/security/kerberos/wn1.keytab"}}))
    return security


def broker_props(tmp_path: Path, security: Path, release: str) -> dict:
    spec = BrokerSpec(provider="apache", alias="primary", cluster_name="primary", ip="127.9.1.11", fqdn=FQDN, port=9092,
                      data_dir=str(tmp_path / "data-1"), log_dir=str(tmp_path / "logs"), broker_id=1, release=release,
                      zookeeper="127.9.1.20:2181", security_dir=str(security))
    text = ApacheProvider().server_properties(spec, broker_config.load(tmp_path))
    return dict(line.split("=", 1) for line in text.splitlines() if line)


def test_krb5_conf_names_the_lab_kdc_and_never_canonicalizes_a_host_name():
    conf = lab_kerberos.krb5_conf("127.9.1.30:10088", ["x.internal.cloudapp.net", "y.internal.cloudapp.net", "x.internal.cloudapp.net"])
    assert " default_realm = KAFKAOPS.LAB\n" in conf
    assert " rdns = false\n" in conf and " dns_canonicalize_hostname = false\n" in conf
    assert " dns_lookup_kdc = false\n" in conf and " dns_lookup_realm = false\n" in conf
    assert "  kdc = 127.9.1.30:10088\n" in conf
    assert conf.count(" .x.internal.cloudapp.net = KAFKAOPS.LAB\n") == 1 and " .y.internal.cloudapp.net = KAFKAOPS.LAB\n" in conf


def test_kdc_conf_keeps_everything_under_the_lab_directory(tmp_path):
    conf = lab_kerberos.kdc_conf(tmp_path, "127.9.1.30:10088")
    assert " kdc_listen = 127.9.1.30:10088\n" in conf and " kdc_tcp_listen = 127.9.1.30:10088\n" in conf
    paths = [line.split("=", 1)[1].strip().removeprefix("FILE:") for line in conf.splitlines() if "/" in line]
    assert len(paths) == 6 and all(path.startswith(str(tmp_path)) for path in paths), paths
    assert lab_kerberos.kdc_host(150, 50) == "127.150.50.30"


@pytest.mark.parametrize("release", ["2.4.1", "3.2.0"])
def test_secure_brokers_with_a_realm_add_a_gssapi_listener(tmp_path, release):
    props = broker_props(tmp_path, security_dir(tmp_path), release)
    assert props["listeners"].endswith(",SASLSSL://127.9.1.11:9097,KERBEROS://127.9.1.11:9098")
    assert props["advertised.listeners"].endswith(f",KERBEROS://{FQDN}:9098")  # the principal's host name
    assert props["listener.security.protocol.map"].endswith(",KERBEROS:SASL_PLAINTEXT")
    assert props["listener.name.kerberos.sasl.enabled.mechanisms"] == "GSSAPI"
    assert props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"  # the other SASL listeners keep theirs, without a Kerberos login
    login = props["listener.name.kerberos.gssapi.sasl.jaas.config"]
    assert login.startswith("com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true")
    assert 'keyTab="/lab/security/kerberos/wn1.keytab"' in login and f'principal="kafka/{FQDN}@KAFKAOPS.LAB";' in login
    assert props["sasl.kerberos.service.name"] == "kafka" and props["sasl.kerberos.principal.to.local.rules"] == "DEFAULT"
    env = ApacheProvider()._env(BrokerSpec(provider="apache", alias="primary", cluster_name="p", ip="", fqdn=FQDN, port=0, data_dir="",
                                           log_dir="", security_dir=str(tmp_path / "security")), "-Xmx1m")
    assert env["KAFKA_OPTS"] == f"-Djava.security.krb5.conf={tmp_path / 'security' / 'kerberos' / 'krb5.conf'}"


def test_secure_brokers_without_a_realm_get_no_kerberos_keys(tmp_path):
    props = broker_props(tmp_path, security_dir(tmp_path, realm=False), "3.2.0")
    assert "KERBEROS" not in props["listeners"] and not any("kerberos" in key for key in props)
    assert "KAFKA_OPTS" not in ApacheProvider()._env(BrokerSpec(provider="apache", alias="p", cluster_name="p", ip="", fqdn=FQDN, port=0,
                                                                data_dir="", log_dir=""), "-Xmx1m")


@pytest.mark.skipif(not MIT_TOOLS, reason="Debian's krb5-kdc, krb5-admin-server and krb5-user (scripts/machine-setup.sh test)")
def test_the_realm_is_made_once_with_private_keytabs_and_a_stale_one(tmp_path):
    realm = lab_kerberos.ensure_realm(tmp_path, "127.9.1.30", [FQDN], ["x.internal.cloudapp.net"])
    directory = Path(realm["dir"])
    listener = {"name": "KERBEROS", "protocol": "SASL_PLAINTEXT", "port": 9098, "mechanism": "GSSAPI"}
    assert realm["kdc"] == "127.9.1.30:10088" and realm["listener"] == listener
    assert realm["principals"][FQDN] == f"kafka/{FQDN}@KAFKAOPS.LAB" and realm["principals"]["mm2-kerberos"] == "mm2-kerberos@KAFKAOPS.LAB"
    assert directory.stat().st_mode & 0o777 == 0o700
    for keytab in realm["keytabs"].values():
        assert Path(keytab).stat().st_mode & 0o777 == 0o600, keytab
    env = {"PATH": "/usr/bin:/bin:/usr/sbin", **lab_kerberos.environment(realm)}

    def kvno(keytab: str) -> set:
        listing = subprocess.run(["klist", "-k", keytab], env=env, capture_output=True, text=True, check=True).stdout
        return {int(line.split()[0]) for line in listing.splitlines() if "@KAFKAOPS.LAB" in line}

    stale, current = kvno(realm["keytabs"]["stale"]), kvno(realm["keytabs"]["mm2-kerberos"])
    assert len(stale) == len(current) == 1 and max(stale) < min(current)  # every ktadd gives the principal new keys
    listing = subprocess.run(["kadmin.local", "-q", "listprincs"], env=env, capture_output=True, text=True, check=True).stdout
    assert "intruder@KAFKAOPS.LAB" not in listing and f"kafka/{FQDN}@KAFKAOPS.LAB" in listing
    before = (directory / "principal").stat().st_mtime_ns
    assert lab_kerberos.ensure_realm(tmp_path, "127.9.1.30", [FQDN], ["x.internal.cloudapp.net"]) == realm  # kept with the directory
    assert (directory / "principal").stat().st_mtime_ns == before


def test_each_host_node_gets_the_realms_krb5_conf_in_its_overlay(tmp_path):
    (tmp_path / "krb5.conf").write_text("[libdefaults]\n default_realm = KAFKAOPS.LAB\n")
    realm = {"krb5_conf": str(tmp_path / "krb5.conf"), "krb5_conf_on_node": lab_kerberos.KRB5_CONF_ON_NODE}
    written = lab_kerberos.write_node_conf(realm, tmp_path / "node" / "upper")
    assert written == tmp_path / "node" / "upper" / "etc" / "krb5.conf"
    assert written.read_text() == (tmp_path / "krb5.conf").read_text() and written.stat().st_mode & 0o777 == 0o644


def test_up_refuses_a_kdc_address_in_use():
    clusters = build_topology(9, subnet=7)
    with socket.socket() as taken:
        taken.bind((lab_kerberos.kdc_host(9, 7), lab_kerberos.KDC_PORT))
        taken.listen()
        kdc = ((lab_kerberos.kdc_host(9, 7), lab_kerberos.KDC_PORT, "Kerberos KDC"),)
        with pytest.raises(api.SandboxError, match=r"127\.9\.7\.30:10088 \(the Kerberos KDC\) is already in use"):
            api._check_ports_free(clusters, ApacheProvider(), "local", 1, kdc)
        api._check_ports_free(clusters, ApacheProvider(), "local", 1)  # a lab without the realm does not need it
