# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real-Kafka lab with secure listeners (sandbox.api.up(secure=True), sandbox/lab_security.py) as the tests drive it: an
inventory whose clusters are reached through a secure listener as a given principal, the client files on the MirrorMaker
node as an operator puts them there, and read-back clients that authenticate as the lab's admin."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from sandbox import lab_security
from tests.support.checkout import REPO
from tests.support.real_lab import SUPPORT, RealLab

# Where the tests put the CA and the client files on the MirrorMaker node: owned by the login user (the collection's modules
# run as it) and group hadoop (MirrorMaker's kafka account), 0640.
CLIENT_FILES_ON_NODE = "/etc/kafkaops-lab-tls"
# The same for the Kerberos realm's keytabs.
KEYTABS_ON_NODE = "/etc/kafkaops-lab-krb5"


def _role_default(role: str, name: str):
    return yaml.safe_load((REPO / "roles" / role / "defaults" / "main.yml").read_text())[name]


# Where a run writes on the MirrorMaker node (besides the client files the tests deliver first), under the node's root.
MM2_CONFIG = _role_default("mirrormaker2", "mirrormaker2_config_dir").lstrip("/")
# The MirrorMaker host's virtualenv (mirror_host role, prepared by the mirror_host_ready fixture): kafka-python for the modules.
HOST_PYTHON = _role_default("mirror_host", "mirror_host_venv") + "/bin/python"
VALIDATION_REPORT = "kafkaops.mirror.mirror_validation : Keep the report as a fact"
PREFLIGHT_GATE = "kafkaops.mirror.preflight : Fail when any finding is an error"


def passwords(state: dict) -> dict:
    """user -> SCRAM password of the lab."""
    return lab_security.credentials(state["security"])["scram"]


def secrets_of(state: dict) -> list:
    """Every secret of the lab a run could leak: the SCRAM passwords, the stores' and the client keys' passwords, each client's
    private key (its base64 lines, as a log would carry them)."""
    data = lab_security.credentials(state["security"])
    found = [*data["scram"].values(), data["store_password"], data["key_password"]]
    for pem in data["client_pem"].values():
        text = Path(pem).read_text()
        key = text[text.index("-----BEGIN ENCRYPTED PRIVATE KEY-----"):text.index("-----END ENCRYPTED PRIVATE KEY-----")]
        found += [line for line in key.splitlines()[1:] if len(line) >= 40]
    return found


def broker_address(state: dict, alias: str, listener: str, by_ip: bool = False) -> str:
    broker = state["clusters"][alias]["brokers"][0]
    return f"{broker['host'] if by_ip else broker['node']}:{state['security']['listeners'][listener]['port']}"


def connection(state: dict, alias: str, listener: str, user: str, password: str | None = None, on_node: bool = True) -> dict:
    """The kafka-python options (the collection's connection options) that reach `alias` through `listener` as `user`: SCRAM
    with the user's password (or `password`), TLS with the lab's CA and, on MTLS, the user's client file (key and certificate
    in one, as ssl_certfile and ssl_keyfile, and the key's password). `on_node`: the files' paths on the MirrorMaker node (deliver_client_files),
    else this machine's."""
    security = state["security"]
    protocol = security["listeners"][listener]["protocol"]
    files = CLIENT_FILES_ON_NODE if on_node else None
    options = {"bootstrap_servers": broker_address(state, alias, listener, by_ip=True), "security_protocol": protocol}
    if protocol.startswith("SASL_"):
        options.update(sasl_mechanism=security["mechanism"], sasl_plain_username=user,
                       sasl_plain_password=passwords(state)[user] if password is None else password)
    if protocol.endswith("SSL"):
        options["ssl_cafile"] = f"{files}/ca.crt" if files else security["ca"]
    if protocol == "SSL":
        pem = f"{files}/{user}.pem" if files else security["client_pem"][user]
        options.update(ssl_certfile=pem, ssl_keyfile=pem, ssl_password=lab_security.credentials(security)["key_password"])
    return options


def secure_inventory(state: dict, path: Path, clusters: dict) -> Path:
    """A copy of the lab's inventory whose `clusters` (alias -> connection(...) options) are reached as given."""
    inventory = yaml.safe_load((Path(state["dir"]) / "inventory.yml").read_text())
    for alias, options in clusters.items():
        group = inventory["all"]["children"][f"{alias}_kafka"]["vars"]
        group.update({f"kafka_{key}": value for key, value in options.items()})
    path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    path.chmod(0o600)
    return path


def deliver_client_files(lab: RealLab, users: tuple) -> None:
    """The CA and `users`' client files on the MirrorMaker node, as an operator copies them there (become, 0640)."""
    security = lab.state["security"]
    files = [{"src": security["ca"], "dest": f"{CLIENT_FILES_ON_NODE}/ca.crt", "mode": "0644"}]
    files += [{"src": security["client_pem"][user], "dest": f"{CLIENT_FILES_ON_NODE}/{user}.pem", "mode": "0640"} for user in users]
    deliver_files(lab, CLIENT_FILES_ON_NODE, files)


def deliver_keytabs(lab: RealLab, names: tuple) -> None:
    """The lab realm's keytabs `names` (sandbox/lab_kerberos.py: "mm2-kerberos", "stale", ...) on the MirrorMaker node, as an
    operator copies an ESP account's keytab there (become, 0640: the modules' login user and MirrorMaker's kafka account)."""
    keytabs = lab.state["security"]["kerberos"]["keytabs"]
    deliver_files(lab, KEYTABS_ON_NODE, [{"src": keytabs[name], "dest": f"{KEYTABS_ON_NODE}/{name}.keytab", "mode": "0640"} for name in names])


def kerberos_connection(state: dict, alias: str, keytab: str, principal: str | None = None) -> dict:
    """The connection options that reach `alias` through the KERBEROS listener (SASL_PLAINTEXT, GSSAPI) with the keytab `keytab`
    on the MirrorMaker node (deliver_keytabs), as its principal (or `principal`). By the broker's FQDN, as an ESP client must:
    the service principal is kafka/<the host name the client was given>."""
    kerberos = state["security"]["kerberos"]
    broker = state["clusters"][alias]["brokers"][0]
    return {"bootstrap_servers": f"{broker['node']}:{kerberos['listener']['port']}", "security_protocol": kerberos["listener"]["protocol"],
            "sasl_mechanism": "GSSAPI", "sasl_kerberos_service_name": kerberos["service_name"],
            "sasl_kerberos_principal": principal or kerberos["principals"][keytab], "sasl_kerberos_keytab": f"{KEYTABS_ON_NODE}/{keytab}.keytab"}


def deliver_files(lab: RealLab, folder_path: str, files: list) -> None:
    """`files` ({"src", "dest", "mode"}) into `folder_path` on the MirrorMaker node, owned by the login user, group hadoop."""
    owners = {"owner": "sshuser", "group": "hadoop"}
    folder = {"path": folder_path, "state": "directory", "mode": "0750", **owners}
    copy = {"src": "{{ item.src }}", "dest": "{{ item.dest }}", "mode": "{{ item.mode }}", **owners}
    play = [{"name": "client files", "hosts": "mirrormaker", "gather_facts": False, "become": True, "tasks": [
        {"name": "folder", "ansible.builtin.file": folder},
        {"name": "files", "ansible.builtin.copy": copy, "loop": files, "no_log": True}]}]
    playbook = Path(lab.state["dir"]) / f"deliver-{Path(folder_path).name}.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    result = lab.play(playbook)
    assert not result.failed, result.stdout[-3000:]


def admin_client(lab: RealLab, alias: str, *args) -> dict:
    """tests/support/read_back.py on a worker of `alias`, authenticating as the lab's admin over SCRAM: an independent
    client that is not the principal under test."""
    security = lab.state["security"]
    options = {key: value for key, value in connection(lab.state, alias, "SCRAM", security["admin"], on_node=False).items()
               if key != "bootstrap_servers"}
    proc = subprocess.run([lab.node(alias, 1)["python"], str(SUPPORT / "read_back.py"), broker_address(lab.state, alias, "SCRAM"), *map(str, args)],
                          capture_output=True, text=True, timeout=240, check=False, env={"READ_BACK_CLIENT": json.dumps(options), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def mirrormaker_files(lab: RealLab) -> dict:
    """MirrorMaker's configuration on its node as this machine sees it (path -> size, mtime), its logs aside: what a run that
    configures MirrorMaker changes. The lab's other files may have run MirrorMaker before this one."""
    root = lab.mirrormaker_node_root() / MM2_CONFIG
    return {str(path): (path.stat().st_size, path.stat().st_mtime_ns) for path in root.rglob("*")
            if path.is_file() and "logs" not in path.relative_to(root).parts} if root.is_dir() else {}


def failed_message(play) -> str:
    return "\n".join(str(task["result"].get("msg", "")) for task in play.tasks if task["status"] == "failed") or play.stdout[-3000:]
