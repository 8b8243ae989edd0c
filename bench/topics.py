# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: one batched kafka_topic task vs. one task per topic, then the idempotent re-runs, in the same run.

    .venv/bin/python -m bench.topics [--topics 500] [--partitions 8] [--net N] [--bootstrap HOST:PORT]

Without --bootstrap it starts a noida sandbox on 127.<net>.x.y (net from $SANDBOX_NET, default 10) and stops it at
the end. Each approach gets its own topic names, so both create the same number of topics from scratch.
Prints wall times and ratios and writes them as JSON to bench/results/.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from tests.support.ansible_play import run_tasks
from tests.support.checkout import REPO

CONFIGS = {"retention.ms": 604800000, "cleanup.policy": "delete", "segment.bytes": 536870912}


def topic_list(prefix: str, count: int, partitions: int) -> list:
    return [{"name": f"{prefix}-{index:04d}", "partitions": partitions, "replication_factor": 1, "configs": CONFIGS} for index in range(count)]


def batched(bootstrap: str, topics: list) -> dict:
    return {"name": "one batched task", "kafkaops.mirror.kafka_topic": {"bootstrap_servers": bootstrap, "topics": topics}}


def looped(bootstrap: str, topics: list) -> dict:
    return {
        "name": "one task per topic",
        "kafkaops.mirror.kafka_topic": {
            "bootstrap_servers": bootstrap,
            "name": "{{ item.name }}",
            "partitions": "{{ item.partitions }}",
            "replication_factor": "{{ item.replication_factor }}",
            "configs": "{{ item.configs }}",
        },
        "loop": topics,
        "loop_control": {"label": "{{ item.name }}"},
    }


def timed(task: dict, expect_changed: bool) -> float:
    started = time.monotonic()
    play = run_tasks([task], timeout=7200)
    elapsed = time.monotonic() - started
    if play.failed:
        raise SystemExit(f"{task['name']} failed:\n{play.stdout[-4000:]}")
    if (play.changed_count > 0) != expect_changed:
        raise SystemExit(f"{task['name']}: expected changed={expect_changed}, recap says {play.stats}")
    return elapsed


def measure(bootstrap: str, count: int, partitions: int) -> dict:
    batch_topics = topic_list("bench-batch", count, partitions)
    loop_topics = topic_list("bench-loop", count, partitions)
    figures = {
        "create_batched_s": timed(batched(bootstrap, batch_topics), expect_changed=True),
        "create_looped_s": timed(looped(bootstrap, loop_topics), expect_changed=True),
        "rerun_batched_s": timed(batched(bootstrap, batch_topics), expect_changed=False),
        "rerun_looped_s": timed(looped(bootstrap, loop_topics), expect_changed=False),
    }
    figures["create_ratio_looped_over_batched"] = figures["create_looped_s"] / figures["create_batched_s"]
    figures["rerun_ratio_looped_over_batched"] = figures["rerun_looped_s"] / figures["rerun_batched_s"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--net", type=int, default=int(os.environ.get("SANDBOX_NET", "10")))
    parser.add_argument("--bootstrap", help="use this cluster instead of starting a sandbox (topics bench-* are created on it)")
    args = parser.parse_args()

    if args.bootstrap:
        figures = measure(args.bootstrap, args.topics, args.partitions)
        provider = "given cluster"
    else:
        from sandbox import api

        with tempfile.TemporaryDirectory(prefix="bench-topics-") as directory:
            state = api.up(directory, provider="noida", net=args.net)
            try:
                figures = measure(state["clusters"]["secondary"]["bootstrap_servers"], args.topics, args.partitions)
            finally:
                api.down(directory)
        provider = "noida sandbox"

    result = {"topics": args.topics, "partitions": args.partitions, "configs_per_topic": len(CONFIGS), "cluster": provider, **figures}
    print(f"kafka_topic benchmark: {args.topics} topics x {args.partitions} partitions, {len(CONFIGS)} configs each ({provider})")
    print(f"  create  batched (1 task)      {figures['create_batched_s']:8.1f} s")
    print(f"  create  looped  ({args.topics} tasks)  {figures['create_looped_s']:8.1f} s   looped/batched {figures['create_ratio_looped_over_batched']:.1f}x")
    print(f"  re-run  batched (no change)   {figures['rerun_batched_s']:8.1f} s")
    print(f"  re-run  looped  (no change)   {figures['rerun_looped_s']:8.1f} s   looped/batched {figures['rerun_ratio_looped_over_batched']:.1f}x")
    results = REPO / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    out = results / f"topics-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  figures written to {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
