# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: one batched kafka_topic task vs. one task per topic, then the idempotent re-runs, in the same run.

    .venv/bin/python -m bench.topics [--topics 500] [--partitions 8] [--net N] [--provider noida|apache ...]
        [--release ALIAS=VERSION ...] [--dir SANDBOX_DIR] [--replication-factor RF] [--bootstrap HOST:PORT]

Without --bootstrap it starts a sandbox of each --provider in turn on 127.<net>.x.y (net from $SANDBOX_NET, default 10;
default provider noida) and stops it at the end, and measures on its secondary cluster. apache is real Kafka
(bench/apache_sandbox.py: three brokers, HDInsight's replication factor 3 and min.insync.replicas 2, IP advertising
applied through Ambari; --dir uses a running apache sandbox instead, left running with its bench-* topics), where the
topics get replication factor 3 unless --replication-factor says otherwise (1 on noida, which has one broker). tansu is
not offered: the sandbox's tansu advertises node FQDNs, which this machine must not resolve. Each approach gets its own
topic names, so both create the same number of topics from scratch. Prints wall times, ratios and the 1-minute load
average and writes them as JSON to bench/results/.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time

from bench import apache_sandbox
from tests.support.ansible_play import run_tasks
from tests.support.checkout import REPO

CONFIGS = {"retention.ms": 604800000, "cleanup.policy": "delete", "segment.bytes": 536870912}


# A topic's replication factor per provider: noida has one broker; the apache sandbox three, as HDInsight's stock settings
# want (min.insync.replicas 2 refuses acks=all writes to a topic of one replica).
REPLICATION = {"noida": 1, "apache": 3}


def topic_list(prefix: str, count: int, partitions: int, replication: int = 1) -> list:
    return [{"name": f"{prefix}-{index:04d}", "partitions": partitions, "replication_factor": replication, "configs": CONFIGS}
            for index in range(count)]


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


def measure(bootstrap: str, count: int, partitions: int, replication: int = 1) -> dict:
    batch_topics = topic_list("bench-batch", count, partitions, replication)
    loop_topics = topic_list("bench-loop", count, partitions, replication)
    figures = {
        "replication_factor": replication,
        "load_1m_at_start": os.getloadavg()[0],
        "create_batched_s": timed(batched(bootstrap, batch_topics), expect_changed=True),
        "create_looped_s": timed(looped(bootstrap, loop_topics), expect_changed=True),
        "rerun_batched_s": timed(batched(bootstrap, batch_topics), expect_changed=False),
        "rerun_looped_s": timed(looped(bootstrap, loop_topics), expect_changed=False),
    }
    figures["load_1m_at_end"] = os.getloadavg()[0]
    figures["create_ratio_looped_over_batched"] = figures["create_looped_s"] / figures["create_batched_s"]
    figures["rerun_ratio_looped_over_batched"] = figures["rerun_looped_s"] / figures["rerun_batched_s"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--net", type=int, default=int(os.environ.get("SANDBOX_NET", "10")))
    parser.add_argument("--provider", choices=sorted(REPLICATION), nargs="+", default=["noida"],
                        help="one or more sandboxes, measured one after the other in one run")
    parser.add_argument("--release", action="append", default=[], metavar="ALIAS=VERSION",
                        help="apache: a cluster's Kafka release (primary, secondary), repeatable; default: the sandbox's")
    parser.add_argument("--dir", help="apache: use the running apache sandbox in this directory (left running)")
    parser.add_argument("--replication-factor", type=int, help="of every topic (default: 3 on apache, 1 on noida)")
    parser.add_argument("--bootstrap", help="use this cluster instead of starting a sandbox (topics bench-* are created on it)")
    args = parser.parse_args()
    releases = apache_sandbox.parse_releases(args.release)

    runs = []
    if args.bootstrap:
        runs.append(("given cluster", measure(args.bootstrap, args.topics, args.partitions, args.replication_factor or 1)))
    else:
        for provider in args.provider:
            with sandbox_cluster(provider, args, releases) as (bootstrap, cluster):
                runs.append((cluster, measure(bootstrap, args.topics, args.partitions, args.replication_factor or REPLICATION[provider])))

    results = REPO / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime('%Y%m%dT%H%M%S')
    for cluster, figures in runs:
        result = {"topics": args.topics, "partitions": args.partitions, "configs_per_topic": len(CONFIGS), "cluster": cluster, **figures}
        print(f"kafka_topic benchmark: {args.topics} topics x {args.partitions} partitions x RF {figures['replication_factor']}, {len(CONFIGS)} configs"
              f" each ({cluster}; load average {figures['load_1m_at_start']:.2f} at start, {figures['load_1m_at_end']:.2f} at end)")
        print(f"  create  batched (1 task)      {figures['create_batched_s']:8.1f} s")
        print(f"  create  looped  ({args.topics} tasks)  {figures['create_looped_s']:8.1f} s"
              f"   looped/batched {figures['create_ratio_looped_over_batched']:.1f}x")
        print(f"  re-run  batched (no change)   {figures['rerun_batched_s']:8.1f} s")
        print(f"  re-run  looped  (no change)   {figures['rerun_looped_s']:8.1f} s   looped/batched {figures['rerun_ratio_looped_over_batched']:.1f}x")
        out = results / f"topics-{cluster.split()[0]}-{stamp}.json"
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"  figures written to {out.relative_to(REPO)}")


@contextlib.contextmanager
def sandbox_cluster(provider: str, args, releases: dict):
    """(bootstrap servers of the secondary, a description) of a sandbox of `provider`, stopped at the end unless given."""
    from sandbox import api  # pylint: disable=import-outside-toplevel

    with tempfile.TemporaryDirectory(prefix="bench-topics-") as directory:
        if provider == "apache":
            with apache_sandbox.clusters(directory, args.net, releases=releases, sandbox_dir=args.dir) as (state, _pids):
                secondary = state["clusters"]["secondary"]
                yield secondary["bootstrap_servers"], f"apache sandbox (Kafka {secondary.get('release')}, {len(secondary['brokers'])} brokers)"
            return
        state = api.up(directory, provider=provider, net=args.net)
        try:
            yield state["clusters"]["secondary"]["bootstrap_servers"], f"{provider} sandbox"
        finally:
            api.down(directory)


if __name__ == "__main__":
    main()
