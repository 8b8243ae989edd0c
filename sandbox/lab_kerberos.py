# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The secure lab's Kerberos realm (`up(secure=True)`): an MIT KDC from Debian's krb5-kdc, as an HDInsight ESP cluster has its
domain's (Azure AD DS) KDC, and a SASL_PLAINTEXT listener with GSSAPI on every broker next to lab_security's.

| listener | protocol | port | client authentication |
|---|---|---|---|
| KERBEROS | SASL_PLAINTEXT | 9098 | GSSAPI (service name `kafka`, broker principal kafka/<the broker's FQDN>@REALM) |

`up` makes the realm once per directory in DIR/security/kerberos (mode 0700): its own krb5.conf (KRB5_CONFIG) and kdc.conf
(KRB5_KDC_PROFILE), never /etc of this machine; the database (kdb5_util, a random master password in a stash file); principals
with random keys (kadmin.local): kafka/<FQDN> per broker, lab-admin, mm2-kerberos (MirrorMaker's) and intruder; keytabs, 0600:
one per broker, lab-admin's and mm2-kerberos's, and `stale.keytab`, mm2-kerberos's keys as they were before a second `ktadd`
gave the principal new ones (the case of an operator who copied a keytab before the account's keys changed), and intruder's,
whose principal was since deleted. krb5kdc runs in the foreground (-n) under the lab's supervisord on KDC_HOST (the primary's
block, last octet 30, not a node's) and KDC_PORT, TCP and UDP. Each host node gets the krb5.conf as its /etc/krb5.conf.

Brokers map a principal of the default realm to its first component (sasl.kerberos.principal.to.local.rules DEFAULT), so
mm2-kerberos@REALM is User:mm2-kerberos in ACLs, and lab-admin@REALM the super user User:lab-admin.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from pathlib import Path

REALM = "KAFKAOPS.LAB"
LISTENER = ("KERBEROS", "SASL_PLAINTEXT", 9098)
PORTS = (LISTENER[2],)
KDC_PORT = 10088
KDC_LAST_OCTET = 30
SERVICE = "kafka"
ADMIN, MIRRORMAKER, INTRUDER = "lab-admin", "mm2-kerberos", "intruder"
STATE = "realm.json"
# Where a node finds the realm's configuration (each host node's overlay).
KRB5_CONF_ON_NODE = "/etc/krb5.conf"
_ENCTYPES = "aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal"


def kdc_host(net: int, subnet: int) -> str:
    return f"127.{net}.{subnet}.{KDC_LAST_OCTET}"


def broker_principal(fqdn: str) -> str:
    return f"{SERVICE}/{fqdn}@{REALM}"


def krb5_conf(kdc: str, domains: list) -> str:
    """The realm's krb5.conf for this machine's clients and every node (`domains`: the lab's DNS suffixes)."""
    mapping = "".join(f" .{domain} = {REALM}\n {domain} = {REALM}\n" for domain in sorted(set(domains)))
    return (
        "[libdefaults]\n"
        f" default_realm = {REALM}\n"
        " dns_lookup_kdc = false\n"
        " dns_lookup_realm = false\n"
        # Quirk of the lab: its names live in per-node hosts files, not in DNS, and a reverse lookup of a 127.x address gives
        # whatever name comes first there (this machine knows none of them). A client must ask for kafka/<the name it was
        # given>, the broker's principal, not a name a (reverse) lookup canonicalized it to.
        " rdns = false\n"
        " dns_canonicalize_hostname = false\n"
        # TCP, as to a domain controller: one connection, no UDP retries on a loaded machine.
        " udp_preference_limit = 1\n"
        " ticket_lifetime = 24h\n"
        " forwardable = true\n"
        "\n[realms]\n"
        f" {REALM} = {{\n  kdc = {kdc}\n  admin_server = {kdc}\n }}\n"
        "\n[domain_realm]\n" + mapping
    )


def kdc_conf(directory: Path, kdc: str) -> str:
    """kdc.conf (KRB5_KDC_PROFILE): the database, stash and log under `directory`, listening on `kdc` (address:port) only."""
    return (
        "[kdcdefaults]\n"
        f" kdc_listen = {kdc}\n"
        f" kdc_tcp_listen = {kdc}\n"
        "\n[realms]\n"
        f" {REALM} = {{\n"
        f"  database_name = {directory / 'principal'}\n"
        f"  key_stash_file = {directory / 'stash'}\n"
        f"  acl_file = {directory / 'kadm5.acl'}\n"
        "  max_life = 24h\n"
        "  max_renewable_life = 7d\n"
        f"  supported_enctypes = {_ENCTYPES}\n"
        " }\n"
        "\n[logging]\n"
        f" kdc = FILE:{directory / 'kdc.log'}\n"
        f" admin_server = FILE:{directory / 'kadmin.log'}\n"
        f" default = FILE:{directory / 'krb5.log'}\n"
    )


def environment(realm: dict) -> dict:
    """KRB5_CONFIG and KRB5_KDC_PROFILE of the lab's realm (for kdb5_util, kadmin.local, krb5kdc and this machine's kinit)."""
    return {"KRB5_CONFIG": realm["krb5_conf"], "KRB5_KDC_PROFILE": realm["kdc_conf"]}


def _command(name: str) -> str:
    found = shutil.which(name) or next((str(Path(d) / name) for d in ("/usr/sbin", "/sbin") if (Path(d) / name).is_file()), None)
    if found is None:
        raise RuntimeError(f"the secure lab's KDC needs {name} (Debian: apt-get install krb5-kdc krb5-admin-server krb5-user; "
                           "scripts/machine-setup.sh test installs them)")
    return found


def _kadmin(env: dict, query: str) -> None:
    result = subprocess.run([_command("kadmin.local"), "-q", query], env=env, capture_output=True, text=True, timeout=60, check=False)
    # kadmin.local exits 0 whatever the query did: its errors are on stderr.
    if result.returncode or "kadmin.local:" in result.stderr or "error" in result.stderr.lower():
        raise RuntimeError(f"kadmin.local -q {query!r} failed: {(result.stderr or result.stdout).strip()[-800:]}")


def ensure_realm(security_dir: Path, kdc_address: str, brokers: list, domains: list) -> dict:
    """The lab's realm under `security_dir`/kerberos, made once per directory; `brokers`: every broker's FQDN, `domains`: the
    lab's DNS suffixes. Returns what state.json records (paths and names; the keytabs are the only secrets, in files)."""
    directory = security_dir / "kerberos"
    state_file = directory / STATE
    kdc = f"{kdc_address}:{KDC_PORT}"
    if not state_file.exists():
        if directory.exists():  # an earlier `up` stopped half-way: start the realm afresh
            shutil.rmtree(directory)
        directory.mkdir(mode=0o700, parents=True)
        (directory / "krb5.conf").write_text(krb5_conf(kdc, domains))
        (directory / "kdc.conf").write_text(kdc_conf(directory, kdc))
        (directory / "kadm5.acl").write_text(f"{ADMIN}/admin@{REALM} *\n")
        env = {**os.environ, "KRB5_CONFIG": str(directory / "krb5.conf"), "KRB5_KDC_PROFILE": str(directory / "kdc.conf")}
        subprocess.run([_command("kdb5_util"), "create", "-s", "-r", REALM, "-P", secrets.token_urlsafe(24)], env=env, capture_output=True,
                       text=True, timeout=120, check=True)
        keytabs = {}
        for principal, name in [(broker_principal(fqdn), fqdn) for fqdn in brokers] + [(f"{user}@{REALM}", user) for user in (ADMIN, MIRRORMAKER)]:
            keytab = directory / f"{name}.keytab"
            _kadmin(env, f"addprinc -randkey {principal}")
            if name == MIRRORMAKER:  # its keys now, then new ones: the first keytab is stale
                _kadmin(env, f"ktadd -k {directory / 'stale.keytab'} {principal}")
            _kadmin(env, f"ktadd -k {keytab} {principal}")
            keytabs[name] = str(keytab)
        _kadmin(env, f"addprinc -randkey {INTRUDER}@{REALM}")
        _kadmin(env, f"ktadd -k {directory / 'intruder.keytab'} {INTRUDER}@{REALM}")
        _kadmin(env, f"delprinc -force {INTRUDER}@{REALM}")
        keytabs["stale"], keytabs[INTRUDER] = str(directory / "stale.keytab"), str(directory / "intruder.keytab")
        for path in directory.iterdir():
            path.chmod(0o600)
        state_file.write_text(json.dumps({"keytabs": keytabs}, indent=2) + "\n")
    keytabs = json.loads(state_file.read_text())["keytabs"]
    return {
        "realm": REALM, "kdc": kdc, "dir": str(directory), "krb5_conf": str(directory / "krb5.conf"), "kdc_conf": str(directory / "kdc.conf"),
        "krb5_conf_on_node": KRB5_CONF_ON_NODE, "service_name": SERVICE,
        "listener": {"name": LISTENER[0], "protocol": LISTENER[1], "port": LISTENER[2], "mechanism": "GSSAPI"},
        "principals": {**{fqdn: broker_principal(fqdn) for fqdn in brokers}, ADMIN: f"{ADMIN}@{REALM}", MIRRORMAKER: f"{MIRRORMAKER}@{REALM}",
                       "stale": f"{MIRRORMAKER}@{REALM}", INTRUDER: f"{INTRUDER}@{REALM}"},
        "keytabs": keytabs, "admin": ADMIN, "mirrormaker": MIRRORMAKER, "intruder": INTRUDER,
    }


def write_node_conf(realm: dict, upper: Path) -> Path:
    """The realm's krb5.conf as a host node's /etc/krb5.conf: a file of the node's overlay (`upper`), readable by every account
    (kinit as the login user, MirrorMaker's Java as kafka), as /etc/krb5.conf is on an ESP node. A node's own is replaced: the
    realm's is what the lab's clients must use."""
    conf = upper / realm["krb5_conf_on_node"].lstrip("/")
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(Path(realm["krb5_conf"]).read_text())
    conf.chmod(0o644)
    return conf


def kdc_program_command(realm: dict) -> list:
    """krb5kdc in the foreground (supervisord keeps it), with the realm's environment (environment(realm))."""
    return [_command("krb5kdc"), "-n", "-r", REALM]


def broker_properties(security_dir: str, ip: str, advertised: str, fqdn: str) -> tuple:
    """(listener, advertised listener, protocol map entry, other keys) of the KERBEROS listener; None when the lab has no realm."""
    directory = Path(security_dir) / "kerberos"
    if not (directory / STATE).exists():
        return None
    name, protocol, port = LISTENER
    keytab = json.loads((directory / STATE).read_text())["keytabs"][fqdn]
    login = (f'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="{keytab}" '
             f'principal="{broker_principal(fqdn)}";')
    keys = {
        # GSSAPI on this listener only: the others keep SCRAM-SHA-512, and a listener offering GSSAPI needs a Kerberos login.
        f"listener.name.{name.lower()}.sasl.enabled.mechanisms": "GSSAPI",
        f"listener.name.{name.lower()}.gssapi.sasl.jaas.config": login,
        "sasl.kerberos.service.name": SERVICE,
        # The default, written out: a principal of the broker's default realm is its first component (mm2-kerberos@REALM ->
        # User:mm2-kerberos), as HDInsight ESP's brokers map a domain user.
        "sasl.kerberos.principal.to.local.rules": "DEFAULT",
    }
    return f"{name}://{ip}:{port}", f"{name}://{advertised}:{port}", f"{name}:{protocol}", keys


def jvm_options(security_dir: str) -> str:
    """The brokers' JVM option that points Java's Kerberos at the realm's krb5.conf (Java reads no KRB5_CONFIG), or ""."""
    conf = Path(security_dir) / "kerberos" / "krb5.conf"
    return f"-Djava.security.krb5.conf={conf}" if (Path(security_dir) / "kerberos" / STATE).exists() else ""
