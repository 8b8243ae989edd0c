# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: the mirror exporter's cost per run against the number of partitions a flow replicates (issue 31 item 5).

    .venv/bin/python -m bench.exporter_cost [--sizes 100 1000 10000] [--runs 3] [--partitions-per-topic 100] [--net N]
        [--dir SANDBOX_DIR] [--no-drift]

On real Apache Kafka (bench/apache_sandbox.py: both clusters of the apache provider, three brokers each, IP advertising; or
a running one with --dir), each size gets a flow of its own (aliases src<N> -> dst<N>, topics bench-<N>-*, so no flow reads
another's internal topics) in the state a running MirrorMaker 2 leaves: the source topics with records, their remote topics
on the target with the same records, one offset sync per partition in the offset-syncs topic on the source, one checkpoint
per partition of a group in the checkpoints topic on the target, a heartbeat. That state is written by this bench with the
collection's own record codec (plugins/module_utils/_mm2/records.py), not by MirrorMaker: the exporter reads it as it reads
MirrorMaker's, and a real MirrorMaker copying 11,100 partitions on the lab's 2 cores would measure the lab, not the exporter.

The exporter then runs as its systemd timer starts it: the shipped entry point with `--once`, a new process with the
role's archive of module_utils, `--runs` times per size, the sizes interleaved (one run of each, then again) so that they
share the machine's load. Per run: the process's wall and CPU seconds (its start and imports included), and the run itself
as the exporter reports it in its output (kafka_mirror_exporter_run_seconds and _cpu_seconds: what a run costs in the
supervisor's loop, where the process stays). Medians are printed and written as JSON to bench/results/.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka import KafkaAdminClient, KafkaProducer

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint, Heartbeat, OffsetSync
from bench import apache_sandbox
from tests.support import prometheus_text
from tests.support.checkout import REPO

ENTRY = REPO / "roles" / "mirrormaker2" / "files" / "kafka_mirror_exporter.py"
RECORDS = 10  # per partition, on both sides
GROUP = "bench-app"


def topics_of(size, per_topic):
    count = max(1, size // per_topic)
    return {f"bench-{size}-{index:04d}": min(per_topic, size) for index in range(count)}


def create(admin, topics, compacted=()):
    existing = set(admin.list_topics())
    new = [(name, {"num_partitions": partitions, "replication_factor": 1, "configs": {"cleanup.policy": "compact"} if name in compacted else {}})
           for name, partitions in sorted(topics.items()) if name not in existing]
    for start in range(0, len(new), 20):  # 2,000 partitions per CreateTopics request: the controller answers within its timeout
        admin.create_topics(dict(new[start:start + 20]), timeout_ms=120000, wait_for_metadata=True)


def fabricate(state, size, per_topic):
    """The state a running MirrorMaker 2 of flow src<size> -> dst<size> leaves, written with the collection's codec."""
    source_bootstrap = state["clusters"]["primary"]["bootstrap_servers"]
    target_bootstrap = state["clusters"]["secondary"]["bootstrap_servers"]
    source_alias, target_alias = f"src{size}", f"dst{size}"
    topics = topics_of(size, per_topic)
    remote = {f"{source_alias}.{name}": partitions for name, partitions in topics.items()}
    syncs_topic, checkpoints_topic = f"mm2-offset-syncs.{target_alias}.internal", f"{source_alias}.checkpoints.internal"
    with contextlib.closing(KafkaAdminClient(bootstrap_servers=source_bootstrap, request_timeout_ms=120000)) as admin:
        create(admin, dict(topics, **{syncs_topic: 1}), compacted=(syncs_topic,))
    with contextlib.closing(KafkaAdminClient(bootstrap_servers=target_bootstrap, request_timeout_ms=120000)) as admin:
        create(admin, dict(remote, **{checkpoints_topic: 1, "heartbeats": 1}), compacted=(checkpoints_topic, "heartbeats"))
    for bootstrap, names in ((source_bootstrap, topics), (target_bootstrap, remote)):
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, batch_size=65536)
        for name, partitions in names.items():
            for partition in range(partitions):
                for index in range(RECORDS):
                    producer.send(name, key=b"k%d" % index, value=b"v" * 100, partition=partition)
        producer.flush(300)
        producer.close()
    source = KafkaProducer(bootstrap_servers=source_bootstrap, acks=1, linger_ms=20)
    target = KafkaProducer(bootstrap_servers=target_bootstrap, acks=1, linger_ms=20)
    for name, partitions in topics.items():
        for partition in range(partitions):
            sync = OffsetSync(name, partition, RECORDS - 1, RECORDS - 1)
            source.send(syncs_topic, key=sync.encode_key(), value=sync.encode_value(), partition=0)
            checkpoint = Checkpoint(GROUP, f"{source_alias}.{name}", partition, RECORDS // 2, RECORDS // 2, "")
            target.send(checkpoints_topic, key=checkpoint.encode_key(), value=checkpoint.encode_value(), partition=0)
    beat = Heartbeat(source_alias, target_alias, int(time.time() * 1000))
    target.send("heartbeats", key=beat.encode_key(), value=beat.encode_value(), partition=0)
    for producer in (source, target):
        producer.flush(300)
        producer.close()
    flow = {"source": {"bootstrap_servers": source_bootstrap}, "target": {"bootstrap_servers": target_bootstrap},
            "source_alias": source_alias, "target_alias": target_alias, "topics": [f"bench-{size}-.*"], "groups": [GROUP],
            "mirrormaker_version": "3.2.0"}
    return flow


def one_run(runner, config_path, textfile):
    """(process wall s, process CPU s, the run's own wall s, the run's own CPU s, partitions read) of one `--once` run of the
    entry point `runner` (beside its module_utils.zip)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, str(runner), "--config", str(config_path), "--once"], capture_output=True, text=True, env=env,
                          timeout=900, check=False)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"the exporter failed: {proc.stderr[-3000:]}")
    samples = prometheus_text.parse(textfile.read_text())
    if prometheus_text.values(samples, "kafka_mirror_flow_up") != [1.0]:
        raise SystemExit(f"the exporter could not read the flow: {proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return (wall, cpu, prometheus_text.values(samples, "kafka_mirror_exporter_run_seconds")[0],
            prometheus_text.values(samples, "kafka_mirror_exporter_run_cpu_seconds")[0],
            prometheus_text.values(samples, "kafka_mirror_partitions")[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions-per-topic", type=int, default=100)
    parser.add_argument("--net", type=int, default=int(os.environ.get("SANDBOX_NET", "10")))
    parser.add_argument("--dir", help="a running apache sandbox that advertises IPs (left running, with its bench-* topics)")
    parser.add_argument("--no-drift", action="store_true", help="runs without the topic-settings drift (one DescribeConfigs per cluster less)")
    args = parser.parse_args(argv)
    results = {"sizes": {}, "runs": args.runs, "topic_drift": not args.no_drift, "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="bench-exporter-") as work, \
            apache_sandbox.clusters(work, args.net, sandbox_dir=args.dir, up_timeout=900) as (state, _pids):
        # The archive the role ships, packed by the entry point itself.
        # As the role installs it: the entry point beside the archive it packs of the collection's module_utils.
        work = Path(work)
        subprocess.run([sys.executable, str(ENTRY), "--pack", str(REPO / "plugins" / "module_utils"), str(work / "module_utils.zip")], check=True)
        runner = work / ENTRY.name
        shutil.copy(ENTRY, runner)
        configs = {}
        for size in args.sizes:
            started = time.monotonic()
            flow = fabricate(state, size, args.partitions_per_topic)
            print(f"{size} partitions: MirrorMaker 2's state written in {time.monotonic() - started:.1f} s", flush=True)
            configs[size] = (work / f"exporter-{size}.json", work / f"exporter-{size}.prom")
            configs[size][0].write_text(json.dumps({"flows": [flow], "textfile": str(configs[size][1]), "topic_drift": not args.no_drift,
                                                    "validation_report": None}))
        measured = {size: [] for size in args.sizes}
        for _round in range(args.runs):
            for size in args.sizes:
                measured[size].append(one_run(runner, *configs[size]))
        for size in args.sizes:
            rows = measured[size]
            entry = {"partitions_read": rows[0][4], "process_wall_s": statistics.median(r[0] for r in rows),
                     "process_cpu_s": statistics.median(r[1] for r in rows), "run_wall_s": statistics.median(r[2] for r in rows),
                     "run_cpu_s": statistics.median(r[3] for r in rows), "all": rows}
            results["sizes"][str(size)] = entry
            print(f"{size:>6} partitions: per run (new process, as the systemd timer starts it) {entry['process_wall_s']:.2f} s wall, "
                  f"{entry['process_cpu_s']:.2f} CPU-s; the run itself (the supervisor's loop) {entry['run_wall_s']:.2f} s wall, "
                  f"{entry['run_cpu_s']:.2f} CPU-s", flush=True)
    results["load_after"] = os.getloadavg()
    out_dir = REPO / "bench" / "results"
    out_dir.mkdir(exist_ok=True)
    path = out_dir / time.strftime("exporter_cost-%Y%m%dT%H%M%S.json", time.gmtime())
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"load average {results['load_before'][0]:.1f} before, {results['load_after'][0]:.1f} after; written to {path}")


if __name__ == "__main__":
    main()
