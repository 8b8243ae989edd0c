# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A sandbox cluster as the Kafka admin module tests see it.

Imported from here, never `from conftest import`: that would get whichever of the suite's conftest modules was imported
last."""
from __future__ import annotations

import json
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from tests.support.ansible_play import run_module, run_tasks


READ_BACK = Path(__file__).resolve().parent / "read_back.py"


@dataclass
class KafkaTarget:
    """A sandbox cluster seen from one of its own nodes (where its advertised names resolve)."""

    provider: str
    alias: str
    bootstrap_servers: str
    python: str
    state: dict

    def run(self, module: str, args: dict, check: bool = False, diff: bool = False, **kwargs) -> dict:
        args = dict({"bootstrap_servers": self.bootstrap_servers, "request_timeout_ms": 10000}, **args)
        return run_module(module, args, check=check, diff=diff, env={"ANSIBLE_PYTHON_INTERPRETER": self.python}, **kwargs)

    def run_tasks(self, tasks: list, **kwargs):
        return run_tasks(tasks, env={"ANSIBLE_PYTHON_INTERPRETER": self.python}, **kwargs)

    def read(self, command: str, *args) -> dict:
        proc = subprocess.run([self.python, str(READ_BACK), self.bootstrap_servers, command, *map(str, args)],
                              capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def topics(self) -> dict:
        return self.read("topics")["topics"]

    def configs(self, *names) -> dict:
        return self.read("configs", *names)["configs"]

    def unique(self, stem: str) -> str:
        return f"{stem}-{uuid.uuid4().hex[:6]}"


def target_for(state: dict, alias: str) -> KafkaTarget:
    cluster = state["clusters"][alias]
    broker_node = cluster["brokers"][0]["node"]
    python = next(node["python"] for node in cluster["nodes"] if node["name"] == broker_node)
    return KafkaTarget(state["provider"], alias, cluster["bootstrap_servers"], python, state)
