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

import yaml

PINS = Path("roles") / "mirror_host" / "files" / "requirements.txt"
ROLE_VARS = Path("roles") / "mirror_host" / "vars" / "main.yml"
_COMPLETE = ".complete"


class WheelhouseError(RuntimeError):
    pass


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafkaops-sandbox" / "wheels"


def ensure(repo: Path) -> Path:
    """The directory holding a wheel of every pin and its dependencies, built now if this machine has none yet."""
    pins = repo / PINS
    return _built(_cache_root() / hashlib.sha256(pins.read_bytes()).hexdigest()[:16], ["-r", str(pins)],
                  "so the sandbox's nodes would have no package source for the mirror_host role")


def kerberos_pin(repo: Path) -> str:
    """The mirror_host role's python-gssapi pin for requirements.txt's Pythons (mirror_host_kerberos adds it)."""
    sets = yaml.safe_load((repo / ROLE_VARS).read_text())["_mirror_host_requirement_sets"]
    return next(entry["kerberos"] for entry in sets if entry["file"] == PINS.name)


def ensure_kerberos(repo: Path) -> Path:
    """A wheelhouse of its own for the role's python-gssapi pin, for the secure lab (its nodes' mirror_host_kerberos): built
    from PyPI's source distribution once per machine (about 45 CPU-s: no Linux wheel exists), so a lab without Kerberos
    neither waits for it nor needs the MIT Kerberos headers it compiles against (libkrb5-dev, scripts/machine-setup.sh test)."""
    pin = kerberos_pin(repo)
    return _built(_cache_root() / f"kerberos-{hashlib.sha256(pin.encode()).hexdigest()[:16]}", [pin],
                  f"so the secure lab's MirrorMaker node would have no {pin} (it builds against libkrb5-dev)")


def _built(directory: Path, requirements: list, consequence: str) -> Path:
    """`directory` with the wheels of `requirements` (pip wheel's arguments), built once per machine."""
    if (directory / _COMPLETE).exists():
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    # Sandboxes started at once (pytest-xdist workers) build it once: the others wait here.
    with open(f"{directory}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (directory / _COMPLETE).exists():
            command = [sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", *requirements, "-w", str(directory)]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise WheelhouseError(f"`{' '.join(command)}` failed (exit {result.returncode}), {consequence}: {result.stderr.strip()[-1500:]}")
            (directory / _COMPLETE).touch()
    return directory


def pip_environment(directory: Path, *more: Path) -> dict:
    """The mirror_host role's pip settings for this wheelhouse (and `more` of them): no index, only these wheels."""
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": " ".join(str(path) for path in (directory, *more))}
