# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A wheelhouse of the mirror_host role's pins, for the sandbox's host nodes (ssh node mode).

Quirk of the sandbox: a node resolves names from its hosts file only (this machine's resolver is not on
127.0.0.0/8), so pip on a node reaches no package index, where an HDInsight host reaches PyPI. `up` builds the
wheels here, once per machine and set of pins (~/.cache/kafkaops-sandbox/wheels/<hash of the pins>), and the
inventory points the role at them through `mirror_host_pip_environment`, as a host in a closed network is pointed at
a local wheelhouse. The nodes see the cache through their lower layer (this machine's /); the role's pip runs as
root there (become).
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from pathlib import Path

PINS = Path("roles") / "mirror_host" / "files" / "requirements.txt"
_COMPLETE = ".complete"


class WheelhouseError(RuntimeError):
    pass


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafkaops-sandbox" / "wheels"


def ensure(repo: Path) -> Path:
    """The directory holding a wheel of every pin and its dependencies, built now if this machine has none yet."""
    pins = repo / PINS
    directory = _cache_root() / hashlib.sha256(pins.read_bytes()).hexdigest()[:16]
    if (directory / _COMPLETE).exists():
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    # Sandboxes started at once (pytest-xdist workers) build it once: the others wait here.
    with open(f"{directory}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (directory / _COMPLETE).exists():
            command = [sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "-r", str(pins), "-w", str(directory)]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise WheelhouseError(f"`{' '.join(command)}` failed (exit {result.returncode}), so the sandbox's nodes would have no "
                                      f"package source for the mirror_host role: {result.stderr.strip()[-1500:]}")
            (directory / _COMPLETE).touch()
    return directory


def pip_environment(directory: Path) -> dict:
    """The mirror_host role's pip settings for this wheelhouse: no index, only these wheels."""
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(directory)}
