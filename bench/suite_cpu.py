# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: where a command's CPU goes, by process name, from the kernel's process accounting.

    sudo .venv/bin/python -m bench.suite_cpu [--out DIR] -- make test

Runs the command with BSD process accounting on (`accton`, Debian's package acct; root only), then reads the records back
with `dump-acct`: every process that ended while it ran, with its user + system CPU seconds, its lifetime and whether it
forked without exec (Ansible's worker processes). Prints the CPU seconds per process name (a forked child as `name*`), the
whole, and the cores in use minute by minute (each process's CPU spread evenly over its lifetime): a run that keeps both
cores busy throughout gets shorter only with less CPU, not with another order of its parts.

Accounting is machine-wide: run nothing else meanwhile. A process still running at the end (a daemon the command left
behind) has no record and is not counted. Names are the kernel's 15-character command names ("ansible-playboo").
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

TICKS = 100  # acct v3 records CPU and elapsed time in AHZ ticks, 100 per second on Linux


def parse_records(text: str) -> list:
    """dump-acct's lines as dicts: name, cpu_s (user + system), elapsed_s, forked (fork without exec), started (epoch s)."""
    records = []
    for line in text.splitlines():
        fields = [field.strip() for field in line.split("|")]
        if len(fields) < 15 or fields[1] != "v3":
            continue
        records.append({"name": fields[0], "cpu_s": (float(fields[2]) + float(fields[3])) / TICKS, "elapsed_s": float(fields[4]) / TICKS,
                        "forked": "F" in fields[11],
                        "started": datetime.strptime(fields[14], "%a %b %d %H:%M:%S %Y").timestamp()})
    return records


def by_name(records: list) -> list:
    """[(name, processes, CPU seconds)], the most CPU first; a forked child that never exec'd counts as `name*`."""
    count, cpu = collections.Counter(), collections.Counter()
    for record in records:
        name = record["name"] + ("*" if record["forked"] else "")
        count[name] += 1
        cpu[name] += record["cpu_s"]
    return sorted(((name, count[name], cpu[name]) for name in cpu), key=lambda row: -row[2])


def cores_per_minute(records: list, start: float, end: float) -> list:
    """Cores in use in each minute from start to end: each process's CPU seconds spread evenly over its lifetime."""
    minutes = max(1, int((end - start) // 60) + 1)
    used = [0.0] * minutes
    for record in records:
        lifetime = max(record["elapsed_s"], 1.0)
        per_second = record["cpu_s"] / lifetime
        first, last = record["started"], record["started"] + lifetime
        # only the minutes the process lived in (a run has tens of thousands of short processes)
        for minute in range(max(0, int((first - start) // 60)), min(minutes, int((last - start) // 60) + 1)):
            overlap = min(start + 60 * (minute + 1), last) - max(start + 60 * minute, first)
            if overlap > 0:
                used[minute] += per_second * overlap
    return [round(seconds / 60, 2) for seconds in used]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"), help="folder for the accounting file and the JSON")
    parser.add_argument("--top", type=int, default=15, help="process names to print")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to measure, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --, e.g. -- make test")
    missing = [tool for tool in ("accton", "dump-acct") if shutil.which(tool) is None]
    if missing or os.geteuid() != 0:
        raise SystemExit(f"needs root and {' and '.join(missing) or 'accton'} (Debian: apt-get install acct): process accounting is the kernel's")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    accounting = out / f"suite-cpu-{stamp}.pacct"
    accounting.touch()
    start = time.time()
    subprocess.run(["accton", str(accounting)], check=True, capture_output=True)
    try:
        code = subprocess.run(command, check=False).returncode
    finally:
        subprocess.run(["accton", "off"], check=True, capture_output=True)
    end = time.time()
    dumped = subprocess.run(["dump-acct", str(accounting)], check=True, capture_output=True, text=True).stdout
    # btime has whole seconds: a process started in the second before the command counts as the command's
    records = [record for record in parse_records(dumped) if record["started"] >= int(start) - 1]
    rows = by_name(records)
    total = sum(row[2] for row in rows)
    print(f"\n{'process':18} {'count':>7} {'CPU-s':>9} {'share':>6}")
    for name, count, cpu in rows[:args.top]:
        print(f"{name:18} {count:7d} {cpu:9.0f} {100 * cpu / total if total else 0:5.1f}%")
    print(f"whole: {total:.0f} CPU-s in {end - start:.0f} s, {total / max(end - start, 1):.2f} cores on average; command exit {code}")
    minutes = cores_per_minute(records, start, end)
    print("cores per minute: " + " ".join(f"{value:.1f}" for value in minutes))
    result = out / f"suite-cpu-{stamp}.json"
    result.write_text(json.dumps({"command": command, "exit": code, "seconds": round(end - start), "cpu_seconds": round(total),
                                  "by_name": [{"name": n, "processes": c, "cpu_seconds": round(s, 1)} for n, c, s in rows],
                                  "cores_per_minute": minutes}, indent=1) + "\n")
    print(f"written to {result} (accounting records: {accounting})")
    return code


if __name__ == "__main__":
    sys.exit(main())
