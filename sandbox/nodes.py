# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-node files under DIR/nodes/<fqdn>/. A node is one of two kinds (docs/development.md, "Nodes"):

- a host: the head node (hn0) and the workers when the sandbox runs in `ssh` node mode (root's default).
  It has its own root filesystem (an overlay: this machine's / below, `upper/` on top, so what the node
  writes is the node's alone) and an init (sandbox/node_init.py) that creates its accounts and runs sshd
  on the node's address; Ansible logs in as `sshuser` and needs sudo for root's work, as on HDInsight.
  `exec` runs a command as root inside the node, `python` runs this project's Python there.
- a name view: the ZooKeeper nodes, and every node in `local` node mode. Only its hosts file
  and a `python` that resolves names through it: as root that Python runs in a private mount namespace
  with the hosts file bind-mounted on /etc/hosts (without root it is plain Python, names resolve
  through the machine's /etc/hosts). Each run is a fresh namespace, so a process sees the hosts file as
  it was when the process started.

Both kinds resolve hosts from files only: this machine's resolver is not on 127.0.0.0/8, and a lookup of
a sandbox name that the node does not know must fail here, not be sent out as a DNS query.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from sandbox.node_init import LOGIN_USER
from sandbox.processes import MARKER
from sandbox.supervisor import Program
from sandbox.topology import Cluster, Node

NODE_MODES = ("ssh", "local")
NSSWITCH = "hosts: files\n"
SSH_PORT = 22
# A node's host key is new with every sandbox dir: never check or record it.
SSH_OPTIONS = ("-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR")
# HDInsight's service account for Kafka on the MirrorMaker node (and every node of a real-Kafka lab): it exists before any role runs.
MIRRORMAKER_SERVICE_ACCOUNTS = ({"user": "kafka", "group": "hadoop", "shell": "/bin/bash"},)
# Debian packages of the commands a host node needs, for the message when one is missing.
HOST_NODE_COMMANDS = {"sshd": "openssh-server", "ssh": "openssh-client", "ssh-keygen": "openssh-client", "sudo": "sudo",
                      "visudo": "sudo", "useradd": "passwd", "groupadd": "passwd", "nsenter": "util-linux", "unshare": "util-linux",
                      "mount": "mount"}
# Where sshd and visudo live when they are not on root's PATH (a login without /usr/sbin).
_SBIN = "/usr/local/sbin:/usr/sbin:/sbin"

# Arguments after the script: hosts file, nsswitch file, python, then the caller's arguments.
_NAME_VIEW_WRAPPER = """#!/bin/sh
# Python as node {node}: its own /etc/hosts ({hosts}) in a private mount namespace.
exec {unshare} --mount --propagation private /bin/sh -c \\
  'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/nsswitch.conf && py="$3" && shift 3 && exec "$py" "$@"' \\
  node-python {hosts_q} {nss_q} {python_q} "$@"
"""

_PLAIN_WRAPPER = """#!/bin/sh
# Python for node {node}. Not isolated: mount namespaces need root, so names resolve through the
# machine's /etc/hosts; the node's hosts file is {hosts}.
exec {python_q} "$@"
"""

_EXEC_WRAPPER = """#!/bin/sh
# Runs a command as root inside node {node}: its mount and UTS namespaces, chrooted into its root filesystem.
# exec all the way down: the PID the caller sees is the command's.
pid=$(cat {pid_file_q} 2>/dev/null)
if [ -z "$pid" ] || ! tr '\\0' '\\n' < "/proc/$pid/environ" 2>/dev/null | grep -qxF {marker_q}; then
  echo "node {node} is not running (no live init in {pid_file}): start it with python -m sandbox up --dir {sandbox_dir}" >&2
  exit 125
fi
exec {nsenter} --target "$pid" --mount --uts --root --wd="$(pwd)" "$@"
"""

_HOST_PYTHON_WRAPPER = """#!/bin/sh
# This project's Python as root inside node {node} (bytecode is not written into the node's filesystem).
exec {exec_q} /usr/bin/env PYTHONDONTWRITEBYTECODE=1 {python_q} "$@"
"""


class NodeSetupError(RuntimeError):
    pass


def _quote(value) -> str:
    return "'" + str(value).replace("'", "'\"'\"'") + "'"


def _write_script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def can_isolate() -> bool:
    """True when this process may create mount namespaces and bind-mount (root, unshare present, allowed)."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        return False
    probe = subprocess.run([unshare, "--mount", "--propagation", "private", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def choose_mode(requested: str | None) -> str:
    """The node mode for `up`: `ssh` as root by default, `local` without root (and on request)."""
    if requested not in (None, *NODE_MODES):
        raise NodeSetupError(f"unknown node mode {requested!r}; choose one of {', '.join(NODE_MODES)}")
    isolate = can_isolate()
    if requested == "ssh" and not isolate:
        raise NodeSetupError("node mode ssh needs root and mount namespaces (unshare --mount): run as root, or use --node-mode local")
    if requested:
        return requested
    return "ssh" if isolate else "local"


def check_host_commands() -> None:
    """Raise with the package to install when a command a host node needs is missing."""
    search = os.pathsep.join(filter(None, [os.environ.get("PATH"), _SBIN]))
    missing = {name: package for name, package in HOST_NODE_COMMANDS.items() if shutil.which(name, path=search) is None}
    if missing:
        packages = " ".join(sorted(set(missing.values())))
        raise NodeSetupError(f"node mode ssh needs {', '.join(f'{name} (package {package})' for name, package in missing.items())}: "
                             f"install them with `apt-get install -y {packages}`, or use --node-mode local")


def node_dir(sandbox_dir: Path, node: Node) -> Path:
    return sandbox_dir / "nodes" / node.name


def write_name_view(sandbox_dir: Path, cluster: Cluster, node: Node, isolate: bool, python: str = sys.executable) -> dict:
    """Seed the node's hosts file (kept if it exists: hosts_sync may have edited it) and write its python."""
    directory = node_dir(sandbox_dir, node)
    directory.mkdir(parents=True, exist_ok=True)
    hosts = directory / "hosts"
    if not hosts.exists():
        hosts.write_text(cluster.hosts_file())
    nss = directory / "nsswitch.conf"
    nss.write_text(NSSWITCH)
    fields = {"node": node.name, "hosts": hosts, "hosts_q": _quote(hosts), "nss_q": _quote(nss), "python_q": _quote(python),
              "unshare": shutil.which("unshare") or "unshare"}
    _write_script(directory / "python", (_NAME_VIEW_WRAPPER if isolate else _PLAIN_WRAPPER).format(**fields))
    return {"name": node.name, "short": node.short, "ip": node.ip, "role": node.role, "hosts_file": str(hosts),
            "python": str(directory / "python"), "isolated": isolate}


def ssh_key(sandbox_dir: Path) -> tuple:
    """(private key path, public key line) of the sandbox's login key, made at the first `up`."""
    key = sandbox_dir / "ssh" / "id_ed25519"
    if not key.exists():
        key.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        result = subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"kafkaops-sandbox {sandbox_dir}", "-f", str(key)],
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise NodeSetupError(f"ssh-keygen could not make {key}: {result.stderr.strip()}")
    return key, Path(f"{key}.pub").read_text()


def upper_dir(sandbox_dir: Path, node: Node) -> Path:
    return node_dir(sandbox_dir, node) / "upper"


def write_host(sandbox_dir: Path, cluster: Cluster, node: Node, service_accounts: tuple = (), kafka_home_bind: dict | None = None,
               extra_binds: list | None = None, python: str = sys.executable) -> tuple:
    """Lay out a host node (its init's spec and wrappers); return (state entry, the supervisord program of its init).

    `kafka_home_bind`: {"source": machine path, "target": node path} to bind-mount a real Kafka distribution;
    `extra_binds`: more of those, read-only (a Java home).
    """
    directory = node_dir(sandbox_dir, node)
    for name in ("upper", "work", "root"):
        (directory / name).mkdir(parents=True, exist_ok=True)
    key, public_key = ssh_key(sandbox_dir)
    pid_file = directory / "init.pid"
    pid_file.unlink(missing_ok=True)
    spec = {
        "name": node.name,
        "short": node.short,
        "ip": node.ip,
        "sandbox_dir": str(sandbox_dir),
        "upper": str(directory / "upper"),
        "work": str(directory / "work"),
        "root": str(directory / "root"),
        "pid_file": str(pid_file),
        "log_dir": str(sandbox_dir / "logs" / "nodes" / node.tag),
        "hosts": cluster.hosts_file(),
        "authorized_key": public_key,
        "service_accounts": list(service_accounts),
        "kafka_home": kafka_home_bind["target"] if kafka_home_bind else None,
        "kafka_home_source": kafka_home_bind["source"] if kafka_home_bind else None,
        "extra_binds": list(extra_binds or []),
        "python": python,
        "marker_name": MARKER,
    }
    (directory / "node.json").write_text(json.dumps(spec, indent=2) + "\n")
    fields = {"node": node.name, "pid_file": pid_file, "pid_file_q": _quote(pid_file), "marker_q": _quote(f"{MARKER}={sandbox_dir}"),
              "sandbox_dir": sandbox_dir, "nsenter": shutil.which("nsenter") or "nsenter", "exec_q": _quote(directory / "exec"),
              "python_q": _quote(python)}
    _write_script(directory / "exec", _EXEC_WRAPPER.format(**fields))
    _write_script(directory / "python", _HOST_PYTHON_WRAPPER.format(**fields))
    program = Program(f"node-{node.tag}", [shutil.which("unshare") or "unshare", "--mount", "--uts", "--propagation", "private",
                                           python, "-m", "sandbox.node_init", str(directory / "node.json")])
    entry = {
        "name": node.name, "short": node.short, "ip": node.ip, "role": node.role,
        "hosts_file": str(directory / "upper" / "etc" / "hosts"),
        "python": str(directory / "python"),
        "exec": str(directory / "exec"),
        "isolated": True,
        "upper": str(directory / "upper"),
        "program": program.name,
        "ssh": {"host": node.ip, "port": SSH_PORT, "user": LOGIN_USER, "private_key": str(key)},
        "service_accounts": list(service_accounts),
    }
    return entry, program


def account_lines(node: dict, user: str, group: str) -> dict:
    """The node's /etc/passwd, shadow, group and gshadow lines for `user` and `group`, read from its upper dir.

    For tests that prove a pre-existing service account is left exactly as it was (None where absent).
    """
    lines = {}
    for name, key in (("passwd", user), ("shadow", user), ("group", group), ("gshadow", group)):
        path = Path(node["upper"]) / "etc" / name
        if not path.exists():  # never written by the node: it sees the machine's file below its upper dir
            path = Path("/etc") / name
        found = [line for line in path.read_text().splitlines() if line.split(":", 1)[0] == key]
        lines[name] = found[0] if found else None
    return lines


def ssh_argv(node: dict, command: str) -> list:
    """ssh as the node's login user (sshuser), running `command` through its login shell: how Ansible reaches the node."""
    login = node["ssh"]
    return ["ssh", *SSH_OPTIONS, "-o", "BatchMode=yes", "-i", login["private_key"], "-p", str(login["port"]),
            f"{login['user']}@{login['host']}", command]


def as_root(node: dict) -> list:
    """The argv prefix that runs a command as root on `node`: its `exec` on a host node; nothing on a name view (the
    command runs on this machine, as in local node mode)."""
    return [node["exec"]] if "exec" in node else []


def machine_path(node: dict, path: str) -> Path:
    """Where this machine reads the node's `path` as the node wrote it: under its upper dir on a host node (a file the
    node never wrote is the machine's own, below it), the path itself elsewhere. Read only: change a running node's files
    through `as_root` (an overlay's layers must not change under it)."""
    return Path(node["upper"]) / path.lstrip("/") if "upper" in node else Path(path)
