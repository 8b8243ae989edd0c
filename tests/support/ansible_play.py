# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the collection's modules and playbooks with ansible-playbook and collect every task result.

Tests assert on state read back with independent clients; these results are what the module said.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.support.checkout import REPO, collections_path

CALLBACKS = Path(__file__).resolve().parent / "callback_plugins"
ANSIBLE_CONFIG = REPO / "tests" / "ansible.cfg"


def ansible_collections_path(environ: dict) -> str:
    """ANSIBLE_COLLECTIONS_PATH for a run: this checkout's collections root first, then any folders the caller's
    environment already lists (os.pathsep-separated, as Ansible reads them)."""
    listed = [entry for entry in environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep) if entry]
    return os.pathsep.join(dict.fromkeys([str(collections_path()), *listed]))


@dataclass
class PlayResult:
    returncode: int
    stdout: str
    stderr: str
    tasks: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)

    def task(self, name: str, host: str | None = None) -> dict:
        """The result of the first task called `name` (on `host` when given)."""
        for entry in self.tasks:
            if entry["task"] == name and (host is None or entry["host"] == host):
                return entry["result"]
        raise KeyError(f"no result for task {name!r}; tasks seen: {[t['task'] for t in self.tasks]}\n{self.stdout[-4000:]}")

    @property
    def changed_count(self) -> int:
        return sum(s.get("changed", 0) for s in self.stats.values())

    @property
    def failed(self) -> bool:
        return self.returncode != 0


def ansible_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env.update(
        {
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
            "ANSIBLE_COLLECTIONS_PATH": ansible_collections_path(env),
            "ANSIBLE_CONFIG": str(ANSIBLE_CONFIG),
            "ANSIBLE_CALLBACK_PLUGINS": str(CALLBACKS),
            "ANSIBLE_CALLBACKS_ENABLED": "record_results",
            "ANSIBLE_HOST_KEY_CHECKING": "False",
            "ANSIBLE_RETRY_FILES_ENABLED": "False",
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_PYTHON_INTERPRETER": env.get("ANSIBLE_PYTHON_INTERPRETER", sys.executable),
            "ANSIBLE_LOCALHOST_WARNING": "False",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "False",
        }
    )
    env.update(extra or {})
    return env


def run_playbook(
    playbook: str | Path,
    inventory: str | Path | None = None,
    extra_vars: dict | None = None,
    check: bool = False,
    diff: bool = False,
    tags: str | None = None,
    skip_tags: str | None = None,
    limit: str | None = None,
    verbosity: int = 0,
    env: dict | None = None,
    timeout: int = 900,
    node_python: bool = False,
) -> PlayResult:
    """ansible-playbook `playbook`, every task result recorded. The playbooks' node_python stage (mirror.yml, failover.yml,
    preflight.yml: a Python 3.8+ for the modules on every node, tagged always) is skipped unless `node_python`: the
    playbooks' documented --skip-tags node_python, which leaves the inventory's interpreter. Every lab node's Python is the
    lab machine's 3.11, so the stage only probes there, on every node of the inventory: about 4 CPU-s per play (measured
    2026-11-29: mirror.yml --tags nothing took 6.1 CPU-s with it, 2.0 without), which the suite's hundreds of plays on the
    2-core CI machine cannot spare. Its own tests (tests/integration/mirror_host/test_node_python.py) and the README's quick
    start (tests/integration/mirror/test_quick_start_hn0.py) run it."""
    skip_tags = ",".join(filter(None, [skip_tags, None if node_python else "node_python"])) or None
    with tempfile.TemporaryDirectory(prefix="kafkaops-play-") as tmp:
        record = Path(tmp) / "results.json"
        cmd = [str(Path(sys.executable).parent / "ansible-playbook"), str(playbook)]
        cmd += ["-i", str(inventory) if inventory else "localhost,"]
        if extra_vars:
            vars_file = Path(tmp) / "extra_vars.json"
            vars_file.write_text(json.dumps(extra_vars))
            cmd += ["-e", f"@{vars_file}"]
        if check:
            cmd.append("--check")
        if diff:
            cmd.append("--diff")
        if tags:
            cmd += ["--tags", tags]
        if skip_tags:
            cmd += ["--skip-tags", skip_tags]
        if limit:
            cmd += ["--limit", limit]
        if verbosity:
            cmd.append("-" + "v" * verbosity)
        proc = subprocess.run(
            cmd,
            env=ansible_env({"RECORD_RESULTS_FILE": str(record), **(env or {})}),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=str(REPO),
            check=False,
        )
        recorded = json.loads(record.read_text()) if record.exists() else {"tasks": [], "stats": {}}
    return PlayResult(proc.returncode, proc.stdout, proc.stderr, recorded["tasks"], recorded["stats"])


def run_tasks(tasks: list, hosts: str = "localhost", **kwargs) -> PlayResult:
    """Run a list of task dicts in a one-play playbook."""
    play = {"name": "kafkaops.mirror test", "hosts": hosts, "gather_facts": False, "tasks": tasks}
    if "inventory" not in kwargs and hosts == "localhost":
        play["connection"] = "local"
    with tempfile.NamedTemporaryFile("w", suffix=".yml", prefix="kafkaops-play-", delete=False) as handle:
        yaml.safe_dump([play], handle, sort_keys=False)
        path = handle.name
    try:
        return run_playbook(path, **kwargs)
    finally:
        os.unlink(path)


def run_module(module: str, args: dict, check: bool = False, diff: bool = False, **kwargs) -> dict:
    """Run one kafkaops.mirror module once and return its result (with 'failed' and 'msg' on failure)."""
    fqcn = module if "." in module else f"kafkaops.mirror.{module}"
    play = run_tasks([{"name": "module under test", fqcn: args}], check=check, diff=diff, **kwargs)
    try:
        return play.task("module under test")
    except KeyError:
        raise AssertionError(f"ansible-playbook did not run the module:\n{play.stdout}\n{play.stderr}") from None
