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


def stop(pids, sandbox_dir: Path, grace: float = 5.0) -> list:
    """SIGTERM, then SIGKILL, each of `pids` that is alive and ours; return the ones that would not die."""
    ours = [pid for pid in pids if alive(pid) and belongs_to(pid, sandbox_dir)]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in ours:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        ours = wait_gone(ours, grace)
        if not ours:
            break
    return ours
