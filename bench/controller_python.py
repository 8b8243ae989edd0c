# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: what the Python that runs Ansible costs, side by side, in one run.

    .venv/bin/python -m bench.controller_python [--python /usr/bin/python3 --python ~/.pyenv/versions/3.11.7/bin/python3]
                                               [--tasks 20] [--rounds 3]

Each interpreter gets a virtualenv of its own (cached under ~/.cache/kafkaops-mirror/bench/controller-python) with the
ansible-core that requirements-dev.txt pins, and a copy of this collection's plugins. Then, round by round and setting by
setting in turn (so that the machine's load falls on each alike), ansible-playbook runs three plays on localhost with that
virtualenv's Python for the controller and for the modules: TASKS ansible.builtin.ping tasks (a worker fork plus a module
run each, the shape of most of the collection's tasks), TASKS ansible.builtin.debug tasks (a worker fork only) and TASKS
debug tasks templating one of the collection's filters (kafkaops.mirror.kafka_version_from_jars: the worker imports the
filter plugin and its plugin_utils). The first interpreter runs twice: with the bytecode of the collection's copy cached
in __pycache__, and with PYTHONDONTWRITEBYTECODE=1 on a copy that has none, as in an environment that sets it (container
images often do, this machine's included). Prints the CPU seconds (user + system of ansible-playbook and everything it
ran) per task, the lowest of the rounds, and each setting's ratio to the first.

2026-11-28 on the 2-core machine, ansible-core 2.19.14: ping 0.421 / 0.484 CPU-s per task (Debian's 3.11.2 / pyenv's 3.11.7,
1.15), debug 1.23, filter 1.23; without bytecode 0.94, 0.89 and 1.02, the same within the noise, so the Makefile picks the
interpreter and leaves PYTHONDONTWRITEBYTECODE alone.

Nothing leaves the machine but pip's downloads from the package index; the plays use the local connection only.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.checkout import REPO

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kafkaops-mirror" / "bench" / "controller-python"
KINDS = {
    "ping": "ansible.builtin.ping: {}",
    "debug": "ansible.builtin.debug: {msg: step}",
    "filter": "ansible.builtin.debug: {msg: \"{{ ['/k/libs/kafka-clients-3.2.0.jar'] | kafkaops.mirror.kafka_version_from_jars('/k', 'h', 'v') }}\"}",
}


def pinned(requirement: str, text: str) -> str:
    """The `name==version` line of `requirement` in a requirements file's text."""
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if re.match(rf"{re.escape(requirement)}\s*==", line, re.I):
            return line.replace(" ", "")
    raise SystemExit(f"{requirement} is not pinned in requirements-dev.txt")


def playbook(kind: str, tasks: int) -> str:
    steps = "".join(f"    - name: {kind} {index}\n      {KINDS[kind]}\n" for index in range(tasks))
    return f"- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n{steps}"


def describe(python: str) -> str:
    """Version, and whether libpython is linked into the executable or loaded as a shared library (ldd): a shared one, as a
    pyenv build with --enable-shared has, is position-independent code called through the PLT."""
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True, check=True).stdout.strip()
    real = os.path.realpath(python)
    linked = subprocess.run(["ldd", real], capture_output=True, text=True, check=False).stdout
    return f"{version}, " + ("libpython shared" if "libpython" in linked else "libpython linked in")


def venv_for(python: str, ansible_core: str) -> Path:
    real = os.path.realpath(python)
    venv = CACHE / hashlib.sha1(f"{real} {ansible_core}".encode()).hexdigest()[:12]
    if not (venv / ".ready").exists():
        subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", ansible_core], check=True)
        (venv / ".ready").write_text(real + "\n")
    return venv


def copy_collection(root: Path) -> Path:
    """The collection's plugins and metadata under root/ansible_collections/kafkaops/mirror, without bytecode; returns root."""
    target = root / "ansible_collections" / "kafkaops" / "mirror"
    for name in ("plugins", "meta"):
        shutil.copytree(REPO / name, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(REPO / "galaxy.yml", target / "galaxy.yml")
    return root


def cpu_of(argv: list, env: dict) -> float:
    """User + system CPU seconds of argv and every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    default_pythons = [python for python in ("/usr/bin/python3", str(Path.home() / ".pyenv" / "versions" / "3.11.7" / "bin" / "python3"))
                       if os.access(python, os.X_OK)]
    parser.add_argument("--python", action="append", help="an interpreter to compare (repeat); default: " + ", ".join(default_pythons))
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    pythons = args.python or default_pythons
    ansible_core = pinned("ansible-core", (REPO / "requirements-dev.txt").read_text())
    venvs = {python: venv_for(python, ansible_core) for python in pythons}
    # (interpreter, bytecode cached): every interpreter as the suite runs it, then the first without bytecode.
    settings = [(python, True) for python in pythons] + [(pythons[0], False)]
    best = {(setting, kind): float("inf") for setting in settings for kind in KINDS}
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="controller-python-") as work:
        plays = {kind: Path(work, f"{kind}.yml") for kind in KINDS}
        for kind, path in plays.items():
            path.write_text(playbook(kind, args.tasks))
        collections = {setting: copy_collection(Path(work, f"collection-{index}")) for index, setting in enumerate(settings)}
        # Round 0 is a warm-up, not counted: it writes the cached settings' bytecode and fills the file cache.
        for round_number in range(args.rounds + 1):
            for setting in settings:
                python, cached = setting
                venv = venvs[python]
                run_env = {**env, "ANSIBLE_CONFIG": str(REPO / "tests" / "ansible.cfg"), "ANSIBLE_LOCAL_TEMP": str(Path(work, "tmp")),
                           "ANSIBLE_PYTHON_INTERPRETER": str(venv / "bin" / "python"), "ANSIBLE_COLLECTIONS_PATH": str(collections[setting])}
                if not cached:
                    run_env["PYTHONDONTWRITEBYTECODE"] = "1"
                for kind, path in plays.items():
                    seconds = cpu_of([str(venv / "bin" / "ansible-playbook"), "-i", "localhost,", str(path)], run_env)
                    if round_number:
                        best[(setting, kind)] = min(best[(setting, kind)], seconds)
    print(f"{ansible_core}, {args.tasks} tasks a play, lowest CPU of {args.rounds} rounds, settings in turn")
    first = settings[0]
    print(f"{'python':<44} {'build':<30} {'bytecode':<10} " + " ".join(f"{kind + ' CPU-s/task':>18} {'ratio':>6}" for kind in KINDS))
    for setting in settings:
        python, cached = setting
        cells = " ".join(f"{best[(setting, kind)] / args.tasks:>18.3f} {best[(setting, kind)] / best[(first, kind)]:>6.2f}" for kind in KINDS)
        print(f"{python:<44} {describe(python):<30} {'cached' if cached else 'never':<10} {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
