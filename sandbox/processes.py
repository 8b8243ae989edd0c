# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which PIDs belong to a sandbox, and stopping exactly those.

Every process a sandbox starts inherits MARKER=<sandbox dir> from supervisord's environment, so a
recorded PID that the kernel has since given to an unrelated process is never signalled.
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

MARKER = "KAFKAOPS_SANDBOX_DIR"


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


def belongs_to(pid: int, sandbox_dir: Path) -> bool:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    return f"{MARKER}={sandbox_dir}".encode() in environ.split(b"\0")


def wait_gone(pids, timeout: float) -> list:
    """Wait until none of `pids` is alive; return the ones still alive at the deadline."""
    deadline = time.monotonic() + timeout
    left = [pid for pid in pids if alive(pid)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [pid for pid in left if alive(pid)]
    return left


def _terminate(pids: list, grace: float) -> list:
    """SIGTERM, then SIGKILL, each of `pids`; return the ones that would not die."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        pids = wait_gone(pids, grace)
        if not pids:
            break
    return pids


def stop(pids, sandbox_dir: Path, grace: float = 5.0) -> list:
    """SIGTERM, then SIGKILL, each of `pids` that is alive and ours; return the ones that would not die."""
    return _terminate([pid for pid in pids if alive(pid) and belongs_to(pid, sandbox_dir)], grace)


def mount_namespace(pid: int) -> str | None:
    """The mount namespace of `pid` ("mnt:[inode]"), or None when it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def in_node(upper_dir) -> list:
    """Every live process inside the node whose overlay has `upper_dir` as its upper dir: the processes of a mount
    namespace whose mount table holds that overlay. (A node's sshd sessions carry no MARKER, since sshd resets the
    environment; and a namespace's inode number is reused once it is gone, so only the mount table identifies it.)"""
    by_namespace = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            by_namespace.setdefault(mount_namespace(int(entry.name)), []).append(int(entry.name))
    # Never this machine's own namespace, whatever its mount table says.
    for namespace in (None, mount_namespace(os.getpid()), mount_namespace(1)):
        by_namespace.pop(namespace, None)
    option = f"upperdir={upper_dir},"
    found = []
    for pids in by_namespace.values():
        for pid in pids:
            try:
                mounts = Path(f"/proc/{pid}/mountinfo").read_text()
            except OSError:  # FileNotFoundError, or EINVAL when the process exits while its mountinfo is read
                continue  # gone meanwhile: ask the next process of the namespace
            if option in mounts:
                found += [p for p in pids if alive(p)]
            break
    return found


def stop_nodes(upper_dirs, grace: float = 5.0) -> list:
    """SIGTERM, then SIGKILL, every process inside the nodes with these upper dirs; return the ones that would not die."""
    return _terminate([pid for upper in upper_dirs for pid in in_node(upper)], grace)
