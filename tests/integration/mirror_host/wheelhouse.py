# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A wheelhouse of the mirror_host role's pins, for sandbox nodes that cannot reach a package index.

Quirk of the sandbox: its nodes resolve names from their hosts files only (this machine's resolver is not on
127.0.0.0/8), so pip on a node reaches no index. The wheels are built here, on the machine, and the role is pointed at
them through mirror_host_pip_environment, as a host in a closed network is pointed at a local wheelhouse.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PINS = Path(__file__).resolve().parents[3] / "roles" / "mirror_host" / "files" / "requirements.txt"


def build(directory: Path) -> dict:
    """Wheels of every pin (and their dependencies) in `directory`; returns the role's mirror_host_pip_environment."""
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "-r", str(PINS), "-w", str(directory)], check=True, capture_output=True)
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(directory)}
