# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`python -m sandbox seed`: sandbox/seed_cluster.py's demo topics, records and group `orders-app`, on the primary.

The Kafka work runs as the primary's head node (its `python`), where the names a broker may advertise
resolve; from this machine they would be looked up through a DNS server outside 127.0.0.0/8.
"""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from sandbox import api
from sandbox.inventory import SOURCE_ALIAS
# The data set is read from here too (sandbox.seed.TOPICS, record(), ...); seed_cluster.py is its one definition.
from sandbox.seed_cluster import GROUP, GROUP_TOPIC, TIMEOUT_S, TOPICS, group_targets, per_partition, record  # noqa: F401  # pylint: disable=unused-import

SEED_SCRIPT = Path(__file__).with_name("seed_cluster.py")


def seed(sandbox_dir=api.DEFAULT_DIR) -> dict:
    """Seed the primary of the running sandbox in `sandbox_dir`, as the primary's head node."""
    state = api.read_state(sandbox_dir)
    if not state or not api.status(sandbox_dir).get("running"):
        raise api.SandboxError(f"no running sandbox in {Path(sandbox_dir).resolve()}: run `python -m sandbox up --dir {sandbox_dir}` first")
    cluster = state["clusters"][SOURCE_ALIAS]
    head = next(node for node in cluster["nodes"] if node["role"] == "head")
    started = time.monotonic()
    result = subprocess.run([head["python"], str(SEED_SCRIPT), "--bootstrap", cluster["bootstrap_servers"]], capture_output=True, text=True,
                            check=False, timeout=5 * TIMEOUT_S)
    if result.returncode != 0:
        raise api.SandboxError(f"seeding {SOURCE_ALIAS} ({cluster['bootstrap_servers']}) as {head['name']} failed: {result.stderr.strip()[-2000:]}")
    report = json.loads(result.stdout)
    report["seconds"] = round(time.monotonic() - started, 2)
    return report


def print_summary(report: dict) -> None:
    produced = ", ".join(f"{name} +{count}" for name, count in report["produced"].items())
    print(f"seeded {report['bootstrap_servers']} in {report['seconds']} s: created {report['created_topics'] or 'no topics'}; produced {produced}")
    for name, partitions in report["beyond_seed"].items():
        print(f"  {name}: partitions {partitions} already hold more records than the seed writes; left as they are")
    group = report["group"]
    print(f"  group {group['group']}: consumed {group['consumed']} now, committed offsets {group['committed']}")
