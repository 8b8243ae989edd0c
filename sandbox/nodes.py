"""Per-node files under DIR/nodes/<fqdn>/: the node's hosts file and a Python interpreter for the node.

As root the interpreter runs in a private mount namespace where the node's hosts file is bind-mounted
on /etc/hosts, so names resolve as on that node while the machine's /etc/hosts stays untouched. It
also mounts an nsswitch.conf that resolves hosts from files only: this machine's resolver is not on
127.0.0.0/8, and a lookup of a sandbox name that the node does not know must fail here, not be sent
out as a DNS query. Each run is a fresh namespace, so a process sees the hosts file as it was when
the process started (a replaced file reaches long-running processes when they restart).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from sandbox.topology import Cluster, Node

NSSWITCH = "hosts: files\n"

# Arguments after the script: hosts file, nsswitch file, python, then the caller's arguments.
_ISOLATED_WRAPPER = """#!/bin/sh
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


def _quote(value) -> str:
    return "'" + str(value).replace("'", "'\"'\"'") + "'"


def can_isolate() -> bool:
    """True when this process may create mount namespaces and bind-mount (root, unshare present, allowed)."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        return False
    probe = subprocess.run([unshare, "--mount", "--propagation", "private", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def node_dir(sandbox_dir: Path, node: Node) -> Path:
    return sandbox_dir / "nodes" / node.name


def write_node(sandbox_dir: Path, cluster: Cluster, node: Node, isolate: bool, python: str = sys.executable) -> dict:
    """Seed the node's hosts file (kept if it exists: hosts_sync may have edited it) and write its python."""
    directory = node_dir(sandbox_dir, node)
    directory.mkdir(parents=True, exist_ok=True)
    hosts = directory / "hosts"
    if not hosts.exists():
        hosts.write_text(cluster.hosts_file())
    nss = directory / "nsswitch.conf"
    nss.write_text(NSSWITCH)
    wrapper = directory / "python"
    fields = {"node": node.name, "hosts": hosts, "hosts_q": _quote(hosts), "nss_q": _quote(nss), "python_q": _quote(python),
              "unshare": shutil.which("unshare") or "unshare"}
    wrapper.write_text((_ISOLATED_WRAPPER if isolate else _PLAIN_WRAPPER).format(**fields))
    wrapper.chmod(0o755)
    return {"name": node.name, "short": node.short, "ip": node.ip, "role": node.role, "hosts_file": str(hosts), "python": str(wrapper),
            "isolated": isolate}
