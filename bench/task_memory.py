# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: peak memory of one comparison task of the validation job against the size of the partition it compares.

    .venv/bin/python -m bench.task_memory [--sizes 6000 12000 25000 50000] [--windows 100000 2000] [--net 53]
        [--provider tansu|apache] [--release ALIAS=VERSION ...] [--dir SANDBOX_DIR] [--baseline-rev GIT_REV]

Starts one tansu broker on 127.<net>.5.1 (tansu keeps to fetch size limits; noida-db answers a fetch with the whole
rest of the partition, so there a reader's memory is the broker's doing), or with --provider apache uses the primary of
an apache sandbox of real Kafka (bench/apache_sandbox.py; its own, or the running one in --dir; topics of replication
factor 3), writes per size a one-partition source topic
and its mirror `primary.<topic>` with the same records, then runs in a fresh Python process per measurement, outside
Spark, exactly what a Spark task of the job runs: the job's reader alone over both sides (`read_batches`, holding only
the batch in hand), or `spark_io.compare_works` on the partition pair with each window. Prints the process's peak RSS
(VmHWM) and seconds, and writes them as JSON to bench/results/task-memory-<provider>.json. The broker is stopped at the end.
With --baseline-rev, the task as it was at that git revision is measured too, on the same data in the same run.
bench.validation measures the whole job's executors; this one separates the task's memory from Spark's and lets the
partition grow past the job's window, which a multi-partition run on tansu cannot reach in reasonable time.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import apache_sandbox
from bench.validation import BROKER_PORT, PRODUCER_BATCH, READ_TIMEOUT_S, REPLICATION, baseline_job, create_topic, peak_rss_mb, produce, start_broker
from sandbox.providers import get_provider
from tests.support.checkout import REPO

JOB_PACKAGE_ROOT = REPO / "roles" / "mirror_validation" / "files"
READER_ONLY = "reader"


def run_task(bootstrap, topic, size, mode, read_timeout_s):
    """In the fresh process: read or compare the pair `topic` / primary.`topic` of `size` records; print the figures."""
    # pylint: disable=import-outside-toplevel
    from mirror_validation.connection import Connection
    from mirror_validation.kafka_reader import open_reader
    from mirror_validation.slices import SOURCE, TARGET, PartitionWork, Slice
    from mirror_validation.spark_io import SUMMARY, ReadSettings, _collections_by_growth, _TaskReaders, compare_works

    work = PartitionWork(Slice(SOURCE, 0, topic, 0, 0, size, False), Slice(TARGET, 0, "primary." + topic, 0, 0, size, False),
                         0, (), ())
    before = peak_rss_mb(os.getpid())
    started, matched = time.monotonic(), None
    if mode == READER_ONLY:
        with open_reader(Connection(bootstrap), "confluent-kafka", read_timeout_s) as reader:
            matched = sum(len(batch.offsets) for part in (work.source, work.target) for _part, batch in reader.read_batches([part]))
    else:
        settings = ReadSettings({SOURCE: Connection(bootstrap), TARGET: Connection(bootstrap)}, "confluent-kafka", read_timeout_s)
        with _collections_by_growth(), _TaskReaders(settings) as readers:
            for kind, row in compare_works(readers, [work], int(mode), 10):
                if kind == SUMMARY:
                    matched = row["matched"]
    print(json.dumps({"records": matched, "seconds": round(time.monotonic() - started, 2), "rss_before_mb": round(before, 1),
                      "peak_rss_mb": round(peak_rss_mb(os.getpid()), 1)}))


def measure(bootstrap, topic, size, mode, package_root, read_timeout_s):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(package_root), str(REPO)]))
    output = subprocess.run([sys.executable, "-m", "bench.task_memory", "--run", bootstrap, topic, str(size), mode, str(read_timeout_s)],
                            env=environment,
                            capture_output=True, text=True, check=True, cwd=REPO).stdout
    return json.loads(output.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[6000, 12000, 25000, 50000])
    parser.add_argument("--windows", type=int, nargs="+", default=[100000, 2000], help="the job's --window-records to measure")
    parser.add_argument("--net", type=int, default=53)
    parser.add_argument("--baseline-rev", help="also measure the task as it was at this git revision, on the same data")
    parser.add_argument("--provider", choices=("tansu", "apache"), default="tansu")
    parser.add_argument("--release", action="append", default=[], metavar="ALIAS=VERSION",
                        help="apache: a cluster's Kafka release (the primary's is measured), repeatable; default: the sandbox's")
    parser.add_argument("--dir", help="apache: use the running apache sandbox in this directory (left running)")
    parser.add_argument("--run", nargs=5, metavar=("BOOTSTRAP", "TOPIC", "SIZE", "MODE", "READ_TIMEOUT_S"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_task(args.run[0], args.run[1], int(args.run[2]), args.run[3], int(args.run[4]))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-task-memory-") as work, broker(args, Path(work)) as bootstrap:
        columns = [("reader only", READER_ONLY, JOB_PACKAGE_ROOT)]
        columns += [("task, window %d" % window, str(window), JOB_PACKAGE_ROOT) for window in args.windows]
        if args.baseline_rev:
            root = baseline_job(args.baseline_rev, Path(work)).parent
            columns += [("base task, window %d" % window, str(window), root) for window in args.windows]
        for size in args.sizes:
            for topic in ("memory-%d" % size, "primary.memory-%d" % size):
                create_topic(bootstrap, topic, 1, REPLICATION[args.provider])
                produce(bootstrap, topic, 1, size, PRODUCER_BATCH[args.provider])  # the same records on both sides
        for size in args.sizes:
            for title, mode, root in columns:
                rows.append(dict(measure(bootstrap, "memory-%d" % size, size, mode, root, READ_TIMEOUT_S[args.provider]), partition_records=size,
                                 column=title, provider=args.provider, load_1m=os.getloadavg()[0]))
                print(json.dumps(rows[-1]), flush=True)
    out = REPO / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / ("task-memory-%s.json" % args.provider)).write_text(json.dumps(rows, indent=2))
    titles = [title for title, _mode, _root in columns]
    print("\npeak RSS MB (seconds) of one task on %s, one partition per side (load average %.2f at the end)" % (args.provider, os.getloadavg()[0]))
    print("%18s  %s" % ("records per side", "  ".join("%22s" % title for title in titles)))
    for size in args.sizes:
        cells = ["%.1f (%.1f s)" % (row["peak_rss_mb"], row["seconds"]) for row in rows if row["partition_records"] == size]
        print("%18d  %s" % (size, "  ".join("%22s" % cell for cell in cells)))


@contextlib.contextmanager
def broker(args, work):
    """Bootstrap servers of what the tasks read: one tansu broker of the bench's, or an apache sandbox's primary."""
    if args.provider == "apache":
        with apache_sandbox.clusters(work, args.net, releases=apache_sandbox.parse_releases(args.release), sandbox_dir=args.dir) as (state, _pids):
            yield state["clusters"]["primary"]["bootstrap_servers"]
        return
    provider = get_provider("tansu")
    provider.check()
    address = "127.%d.5.1" % args.net
    process = start_broker(provider, "primary", address, work / "primary")
    try:
        yield "%s:%d" % (address, BROKER_PORT)
    finally:
        process.terminate()
        process.wait(30)


if __name__ == "__main__":
    main()
