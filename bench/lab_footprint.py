# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: what one real-Kafka lab costs per Kafka release: its start time, the CPU its JVMs spend starting, their memory.

    .venv/bin/python -m bench.lab_footprint [--releases 2.4.1 3.2.0 3.9.2 4.3.1] [--net N] [--settle 20]

For each release, one after the other, an apache sandbox whose two clusters both run that release (ZooKeeper mode up to
3.x where the sandbox runs it so, KRaft from 3.9: sandbox/kafka_dist.py), in local node mode: the brokers and ZooKeepers
are the same JVMs the tests start, without the SSH nodes around them. It measures `sandbox.api.up` to its return (every
broker answering Metadata), the CPU seconds the lab's JVMs used up to then, and after --settle seconds their resident
memory and the CPU they use at rest (% of one core over 10 s). Prints a table with the 1-minute load average (the start
time is wall time: on a busy machine it grows) and writes it as JSON to bench/results/.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from sandbox import api

RELEASES = ("2.4.1", "3.2.0", "3.9.2", "4.3.1")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def jvm_pids(sandbox_dir: Path) -> list:
    """PIDs of the lab's broker, controller and ZooKeeper processes (bench/apache_sandbox.py names them the same way)."""
    processes = api.status(sandbox_dir)["processes"]
    return [entry["pid"] for name, entry in processes.items() if ("-broker" in name or "-zookeeper" in name) and entry["pid"]]


def cpu_seconds(pids: list) -> float:
    """User + system CPU seconds of the processes so far (fields 14 and 15 of /proc/PID/stat, after the command's parentheses)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS


def resident_mb(pids: list) -> float:
    return sum(int(Path(f"/proc/{pid}/statm").read_text().split()[1]) for pid in pids) * PAGE / 2**20


def measure(release: str, work: Path, net: int, settle: float) -> dict:
    directory = work / f"lab-{release}"
    started = time.monotonic()
    api.up(directory, provider="apache", net=net, node_mode="local", releases={"primary": release, "secondary": release}, timeout=900)
    try:
        up_seconds = time.monotonic() - started
        load = os.getloadavg()[0]
        pids = jvm_pids(directory)
        start_cpu = cpu_seconds(pids)
        time.sleep(settle)
        before = cpu_seconds(pids)
        time.sleep(10)
        idle_percent = (cpu_seconds(pids) - before) / 10 * 100
        return dict(release=release, jvms=len(pids), up_seconds=round(up_seconds, 1), start_cpu_seconds=round(start_cpu, 1),
                    resident_mb=round(resident_mb(pids)), idle_percent_of_a_core=round(idle_percent, 1), load_average=round(load, 1))
    finally:
        api.down(directory, timeout=120)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", nargs="+", default=list(RELEASES))
    parser.add_argument("--net", type=int, default=int(os.environ.get("SANDBOX_NET", "10")))
    parser.add_argument("--settle", type=float, default=20.0, help="seconds between the lab's start and the memory reading")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-lab-footprint-") as work:
        rows = [measure(release, Path(work), args.net, args.settle) for release in args.releases]
    print(f"{'release':8} {'JVMs':>4} {'up s':>6} {'start CPU-s':>11} {'RSS MB':>7} {'idle %core':>10} {'load':>5}")
    for row in rows:
        print(f"{row['release']:8} {row['jvms']:4d} {row['up_seconds']:6.1f} {row['start_cpu_seconds']:11.1f} {row['resident_mb']:7d} "
              f"{row['idle_percent_of_a_core']:10.1f} {row['load_average']:5.1f}")
    results = Path(__file__).resolve().parent / "results" / f"lab-footprint-{time.strftime('%Y%m%dT%H%M%S')}.json"
    results.parent.mkdir(parents=True, exist_ok=True)  # git keeps no empty folder: a fresh clone has none
    results.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"written to {results}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
