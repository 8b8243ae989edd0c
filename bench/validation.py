# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the mirror validation job: throughput against the raw consume rate of the same client on the
same data in the same run, peak memory of the JVM, the Python driver and the largest Python executor worker at two
sizes, and a kcat dump + sort + diff pipeline for reference.

    .venv/bin/python -m bench.validation [--sizes 200000 1000000] [--partitions 8] [--net 50] [--subnet 5]
        [--provider noida|tansu|apache ...] [--release ALIAS=VERSION ...] [--dir SANDBOX_DIR] [--baseline-rev GIT_REV]

For noida and tansu it starts two single-broker clusters of the provider on 127.<net>.<subnet>.1 / 127.<net>.<subnet + 1>.1;
for apache a sandbox of real Kafka (bench/apache_sandbox.py: three brokers per cluster on 127.<net>.<subnet>.10-12 and
127.<net>.<subnet + 1>.10-12, HDInsight's replication factor 3 and min.insync.replicas 2, the sandbox's releases unless
--release says otherwise, IP advertising applied through Ambari), or uses the running apache sandbox in --dir. Several
providers run one after the other in one invocation, each on its own brokers, and print one table. Per provider and size
it writes N keyed records with headers to the primary (replication factor 3 on apache, acks=all), mirrors them to
`primary.<topic>` on the secondary partition by partition, then measures, with the machine's highest 1-minute load
average during the job. The brokers are stopped at the end (a --dir sandbox is left running, its bench-* topics too).
Executor memory depends on the broker: noida-db answers a fetch with the whole rest of the partition whatever its size
limits, tansu and Apache Kafka keep to them (docs/reference/test-brokers.md). Figures are printed and written as JSON to
bench/results/validation-<provider>[-<provider>...].json.
With --baseline-rev, the job as it was at that git revision validates the same data in the same run, so the speed-up
is a side-by-side ratio. The machine is shared: compare ratios of one run, not absolute times of different runs.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from bench import apache_sandbox
from sandbox.broker_config import BrokerConfig
from sandbox.probes import kafka_metadata, wait_for
from sandbox.providers import BrokerSpec, get_provider
from tests.support.checkout import REPO

JOB = REPO / "roles" / "mirror_validation" / "files" / "validate_mirror.py"
# Quirk (noida-db 0.2.3): fetch replies ignore size limits and carry everything to the log end (~110 MB at 1M x 100 B).
RECEIVE_MAX_BYTES = 512 * 1024 * 1024
CLIENT = {"receive.message.max.bytes": RECEIVE_MAX_BYTES, "fetch.max.bytes": RECEIVE_MAX_BYTES - 512}
# Quirk (tansu 0.6.0): ListOffsets answers "last batch base offset + 1" for multi-record batches, and the job snapshots
# end offsets with ListOffsets; one record per batch keeps tansu's end offsets right.
PRODUCER_BATCH = {"noida": {"linger.ms": 50, "batch.num.messages": 10000}, "tansu": {"linger.ms": 5, "batch.num.messages": 1},
                  "apache": {"linger.ms": 50, "batch.num.messages": 10000}}
# Quirk (tansu 0.6.0): in partitions of 25k-50k one-record batches (200k and 400k per side) a fetch went unanswered for over
# 30 s, the job's default read timeout, while other work ran on this machine; noida keeps the default.
READ_TIMEOUT_S = {"noida": 30, "tansu": 300, "apache": 30}
# HDInsight's stock settings on the apache sandbox: min.insync.replicas 2, so a topic of replication factor 1 refuses every
# acks=all write (NOT_ENOUGH_REPLICAS); the bench's topics get the clusters' three replicas, as the mirrored topics would.
REPLICATION = {"noida": 1, "tansu": 1, "apache": 3}
# How busy (cores) the broker processes may be when a measurement starts: an idle cluster of real Kafka (six broker JVMs and
# two ZooKeepers, or KRaft controllers) never drops to the 5 % one stand-in broker does.
SETTLED_BUSY = {"noida": 0.05, "tansu": 0.05, "apache": 0.3}
BROKER_PORT = 9092
# The largest size per side a test broker holds here, and why (docs/reference/test-brokers.md).
LARGEST = {"noida": "1M records per side: noida-db keeps every record in one JSON file (~800 MB at 1M x 100 B per topic pair) and"
                    " answers each fetch with everything to the log end (~110 MB replies); beyond that it runs out of memory and time",
           "tansu": "400k records per side: tansu's end offsets are wrong for multi-record batches, so this bench writes one record"
                    " per batch there; at 400k the job's one-partition-at-a-time reads slow down 10x against 100k, and at 1M a fetch"
                    " from offset 0 got no answer in 30 s. It keeps to fetch size limits: use it for executor memory, noida for ratios",
           "apache": "1M records per side measured (docs/reference/test-brokers.md, \"Real Apache Kafka\"): three replicas on one machine"
                     " triple the disk writes; the brokers keep to fetch size limits and their heap (320 MB each) does not grow with the topic"}


@contextlib.contextmanager
def brokers(provider, net, subnet, work):
    """(primary, secondary) bootstrap servers of two single-broker clusters of `provider`, each advertising its address.

    Not the sandbox: the bench needs no Ambari, hosts or MirrorMaker node, and the sandbox's tansu advertises node host
    names that only the sandbox's nodes resolve."""
    chosen = get_provider(provider)
    chosen.check()
    started = []
    try:
        for offset, alias in enumerate(("primary", "secondary")):
            address = "127.%d.%d.1" % (net, subnet + offset)
            started.append(start_broker(chosen, alias, address, work / alias))
        yield tuple("127.%d.%d.1:%d" % (net, subnet + offset, BROKER_PORT) for offset in range(2)), [process.pid for process in started]
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def start_broker(provider, alias, address, folder):
    """The broker process of one cluster, once it answers a Metadata request."""
    (folder / "data").mkdir(parents=True)
    spec = BrokerSpec(provider.name, alias, "bench-" + alias, address, address, BROKER_PORT, str(folder / "data"), str(folder))
    argv, environment = provider.broker_command(spec, BrokerConfig())
    log = folder / "broker.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(argv, env=dict(os.environ, **environment), stdout=output, stderr=subprocess.STDOUT)  # pylint: disable=consider-using-with
    try:
        wait_for(lambda: kafka_metadata(address, BROKER_PORT), "%s broker on %s" % (provider.name, address), time.monotonic() + 60,
                 alive=lambda: process.poll() is not None and "exited %s, see %s" % (process.returncode, log))
    except Exception:
        process.kill()
        process.wait()
        raise
    return process


def cpu_seconds(pids):
    """CPU time used so far by `pids` and everything below them."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in set(pids).union(*(descendants(pid) for pid in pids)):
        try:
            fields = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def settle(broker_pids, span=2.0, busy=0.05, timeout=600):
    """Wait until the brokers use less than `busy` of a core over `span` seconds. noida-db rewrites its JSON store for
    minutes after a large write (70% of a core at 1M records), so a measurement taken meanwhile would share the
    machine's cores with it. (The job's run-to-run spread at 1M stayed with settled brokers: that has another cause.)"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = cpu_seconds(broker_pids)
        time.sleep(span)
        if cpu_seconds(broker_pids) - before < busy * span:
            return
    raise RuntimeError("the brokers stayed busy for %d s; nothing measured" % timeout)


def create_topic(bootstrap, topic, partitions, replication=1):
    admin = AdminClient({"bootstrap.servers": bootstrap})  # keep it alive until the futures resolve
    for future in admin.create_topics([NewTopic(topic, partitions, replication)], operation_timeout=30).values():
        future.result()


def produce(bootstrap, topic, partitions, count, batching, first=0):
    """`count` records numbered from `first` (values differ by number, keys repeat every 100000)."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": False, **batching})
    for number in range(first, first + count):
        while True:
            try:
                producer.produce(topic, key=b"key-%06d" % (number % 100000), value=b"value %09d " % number + b"x" * 70,
                                 headers=[("n", b"%d" % number)], partition=number % partitions)
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(300):
        raise RuntimeError("producing %s did not finish" % topic)


def consume(bootstrap, topic, partitions, on_message=None, starts=None):
    """Read `topic` to its end with confluent-kafka, from its start or the offsets `starts` ({partition: offset}); returns
    the record count (the raw consume rate's work)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-raw", "enable.auto.commit": False,
                         "enable.partition.eof": True, "auto.offset.reset": "earliest", **CLIENT})
    consumer.assign([TopicPartition(topic, p, (starts or {}).get(p, 0)) for p in range(partitions)])
    done, count = set(), 0
    try:
        while len(done) < partitions:
            for message in consumer.consume(num_messages=10000, timeout=1.0):
                if message.error():
                    if message.error().code() == KafkaError._PARTITION_EOF:  # pylint: disable=protected-access
                        done.add(message.partition())
                        continue
                    raise RuntimeError(str(message.error()))
                count += 1
                if on_message:
                    on_message(message)
    finally:
        consumer.close()
    return count


def mirror(source, target, topic, partitions, batching, replication=1, starts=None):
    """Copy every partition to primary.<topic> on the target, in order, keeping key, value, headers and timestamp; with
    `starts` ({partition: offset}), only the records from there on, to the remote topic a first call created."""
    remote = "primary." + topic
    if starts is None:
        create_topic(target, remote, partitions, replication)
    producer = Producer({"bootstrap.servers": target, "enable.idempotence": False, "max.in.flight.requests.per.connection": 1,
                         **batching})

    def copy(message):
        while True:
            try:
                producer.produce(remote, key=message.key(), value=message.value(), headers=message.headers(),
                                 partition=message.partition(), timestamp=message.timestamp()[1])
                return
            except BufferError:
                producer.poll(0.1)

    consume(source, topic, partitions, copy, starts)
    if producer.flush(300):
        raise RuntimeError("mirroring %s did not finish" % topic)
    return remote


def peak_rss_mb(pid):
    """Largest resident set of process `pid` so far (VmHWM), in MB; 0 once it is gone."""
    try:
        for line in Path("/proc/%d/status" % pid).read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def descendants(pid):
    """{pid: command line} of every process below `pid`."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    found, todo = {}, [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            try:
                found[child] = (Path("/proc/%d/cmdline" % child).read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                continue
            todo.append(child)
    return found


def validate(source, target, topic, work, read_timeout_s, job=JOB, label="current", job_args=()):
    """spark-submit the job in local[2] as the role would; returns (wall seconds, report, {peak RSS MB of the JVM,
    of the Python driver, of the largest Python executor worker})."""
    report_path = work / ("report-%s-%s.json" % (topic, label))
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    command = [str(Path(sys.executable).parent / "spark-submit"), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
               "--conf", "spark.driver.memory=1g", "--conf", "spark.sql.shuffle.partitions=8", str(job),
               "--source-bootstrap", source, "--target-bootstrap", target, "--topics", topic, "--source-alias", "primary",
               "--catch-up-timeout", "10", "--catch-up-interval", "2", "--receive-max-bytes", str(RECEIVE_MAX_BYTES),
               "--read-timeout", str(read_timeout_s), "--report", str(report_path), *job_args]
    started = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # pylint: disable=consider-using-with
    # The 1-minute load average too: the job runs more processes than raw consume does, so other work on the machine
    # slows it more, and a loaded run shows as such.
    peaks = {"jvm": 0.0, "python_driver": 0.0, "python_executor": 0.0, "load_1m": 0.0}

    def sample():
        while process.poll() is None:
            peaks["jvm"] = max(peaks["jvm"], peak_rss_mb(process.pid))
            for pid, command in descendants(process.pid).items():
                kind = "python_executor" if "pyspark.daemon" in command else "python_driver" if "validate_mirror.py" in command else None
                if kind:
                    peaks[kind] = max(peaks[kind], peak_rss_mb(pid))
            peaks["load_1m"] = max(peaks["load_1m"], os.getloadavg()[0])
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output = process.communicate()[0].decode(errors="replace")
    sampler.join()
    wall = time.monotonic() - started
    if process.returncode != 0:
        raise RuntimeError("validation of %s exited %d:\n%s" % (topic, process.returncode, output[-3000:]))
    return wall, json.loads(report_path.read_text()), peaks


def kcat_pipeline(source, target, topic, remote, work):
    """Dump both sides with kcat (partition, key, headers, value per line), sort, diff; returns (seconds, differing lines)."""
    kcat = shutil.which("kcat")
    if not kcat:
        return None, None
    options = ["-X", "receive.message.max.bytes=%d" % RECEIVE_MAX_BYTES, "-X", "fetch.max.bytes=%d" % (RECEIVE_MAX_BYTES - 512)]
    started = time.monotonic()
    dumps = []
    for broker, name in ((source, topic), (target, remote)):
        path = work / ("%s.sorted" % name)
        pipeline = "%s -C -q -e -b %s -t %s %s -f '%%p\\t%%k\\t%%h\\t%%s\\n' | LC_ALL=C sort -S 256M -o %s" % (
            kcat, broker, name, " ".join(options), path)
        subprocess.run(pipeline, shell=True, check=True)
        dumps.append(path)
    diff = subprocess.run(["diff", str(dumps[0]), str(dumps[1])], capture_output=True, text=True, check=False)
    return time.monotonic() - started, len([line for line in diff.stdout.splitlines() if line[:1] in "<>"])


def comparable(report):
    """What two job versions must agree on: the verdict and every topic's entry."""
    return report["exit_code"], report["topics"], report["groups"]


def baseline_job(revision, work):
    """The job's files as they were at `revision`, exported next to the bench's work files."""
    folder = work / ("baseline-" + revision.replace("/", "_"))
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "roles/mirror_validation/files"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder / "roles" / "mirror_validation" / "files" / "validate_mirror.py"


def measure(source, target, size, partitions, work, provider, baseline, broker_pids, job_args=(), releases=None):
    topic = "bench-%d" % size
    create_topic(source, topic, partitions, REPLICATION[provider])
    started = time.monotonic()
    produce(source, topic, partitions, size, PRODUCER_BATCH[provider])
    produce_s = time.monotonic() - started
    remote = mirror(source, target, topic, partitions, PRODUCER_BATCH[provider], REPLICATION[provider])
    mirror_s = time.monotonic() - started - produce_s
    busy = SETTLED_BUSY[provider]

    settle(broker_pids, busy=busy)
    load_raw = os.getloadavg()[0]
    started = time.monotonic()
    raw = consume(source, topic, partitions) + consume(target, remote, partitions)
    raw_rate = raw / (time.monotonic() - started)

    settle(broker_pids, busy=busy)
    wall, report, peaks = validate(source, target, topic, work, READ_TIMEOUT_S[provider], job_args=job_args)
    settle(broker_pids, busy=busy)
    kcat_s, kcat_diff = kcat_pipeline(source, target, topic, remote, work)
    records = report["records_read"]
    compared = {}
    if baseline:
        revision, job = baseline
        settle(broker_pids, busy=busy)
        base_wall, base_report, base_peaks = validate(source, target, topic, work, READ_TIMEOUT_S[provider], job, "baseline")
        compared = {"baseline_rev": revision, "baseline_passed": base_report["passed"], "baseline_job_rec_s": base_report["records_per_s"],
                    "baseline_ratio_job_vs_raw": round(base_report["records_per_s"] / raw_rate, 3),
                    "baseline_wall_s_with_jvm_start": round(base_wall, 1),
                    "baseline_ratio_wall_vs_kcat": round(base_wall / kcat_s, 2) if kcat_s else None,
                    "baseline_executor_python_peak_rss_mb": round(base_peaks["python_executor"], 1),
                    "baseline_same_report": comparable(base_report) == comparable(report),
                    "speedup_job_vs_baseline": round(report["records_per_s"] / max(base_report["records_per_s"], 1), 2)}
    return {
        "provider": provider,
        "releases": releases,
        "records_per_side": size,
        "partitions": partitions,
        "replication_factor": REPLICATION[provider],
        "produce_rec_s": int(size / produce_s),
        "mirror_copy_rec_s": int(size / mirror_s),
        "load_1m_at_raw_read": round(load_raw, 2),
        "passed": report["passed"],
        "records_compared": records,
        "raw_consume_rec_s": int(raw_rate),
        "validator_job_rec_s": report["records_per_s"],
        "validator_job_s": report["duration_s"],
        "validator_wall_s_with_jvm_start": round(wall, 1),
        "validator_wall_rec_s": int(records / wall),
        "ratio_job_vs_raw": round(report["records_per_s"] / raw_rate, 3),
        "ratio_wall_vs_raw": round(records / wall / raw_rate, 3),
        "driver_python_peak_rss_mb": report["driver_peak_rss_mb"],
        "driver_python_peak_rss_mb_sampled": round(peaks["python_driver"], 1),
        "executor_python_peak_rss_mb": round(peaks["python_executor"], 1),
        "local_jvm_peak_rss_mb_driver_plus_executors": round(peaks["jvm"], 1),
        "broker_processes_peak_rss_mb": round(sum(peak_rss_mb(pid) for pid in set(broker_pids).union(*map(descendants, broker_pids))), 1),
        "load_1m_max_during_job": round(peaks["load_1m"], 2),
        "kcat_dump_sort_diff_s": round(kcat_s, 1) if kcat_s else None,
        "ratio_wall_vs_kcat": round(wall / kcat_s, 2) if kcat_s else None,
        "kcat_rec_s": int(2 * size / kcat_s) if kcat_s else None,
        "kcat_differing_lines": kcat_diff,
        "client": report["client"],
        "job_timings": report.get("timings", {}),
        **compared,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200000, 1000000])
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--net", type=int, default=int(os.environ.get("SANDBOX_NET", "50")))
    parser.add_argument("--subnet", type=int, default=5, help="third octet of the primary (secondary: +1)")
    parser.add_argument("--provider", choices=sorted(PRODUCER_BATCH), nargs="+", default=["noida"],
                        help="one or more; each runs on brokers of its own, one after the other, into one table")
    parser.add_argument("--release", action="append", default=[], metavar="ALIAS=VERSION",
                        help="apache: a cluster's Kafka release (primary, secondary), repeatable; default: the sandbox's")
    parser.add_argument("--dir", help="apache: use the running apache sandbox in this directory instead of starting one (left running)")
    parser.add_argument("--baseline-rev", help="also run the job as it was at this git revision, on the same data")
    parser.add_argument("--window-records", type=int,
                        help="the job's window (default: the job's own); a small one shows executor memory once partitions outgrow it")
    args = parser.parse_args()
    releases = apache_sandbox.parse_releases(args.release)
    job_args = ("--window-records", str(args.window_records)) if args.window_records is not None else ()
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-validation-") as tmp:
        work = Path(tmp)
        baseline = (args.baseline_rev, baseline_job(args.baseline_rev, work)) if args.baseline_rev else None
        for provider in args.provider:
            with provider_clusters(provider, args, releases, work) as ((source, target), broker_pids, running):
                for size in args.sizes:
                    results.append(measure(source, target, size, args.partitions, work, provider, baseline, broker_pids, job_args, running))
                    print(json.dumps(results[-1]), flush=True)
    out = REPO / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / ("validation-%s.json" % "-".join(args.provider))).write_text(json.dumps(results, indent=2))
    print_table(results, args.provider)


@contextlib.contextmanager
def provider_clusters(provider, args, releases, work):
    """((primary, secondary) bootstrap servers, PIDs of the broker processes, {alias: Kafka release} or None) of `provider`."""
    if provider != "apache":  # --release and --dir are the apache provider's
        with brokers(provider, args.net, args.subnet, work / provider) as (bootstraps, pids):
            yield bootstraps, pids, None
        return
    with apache_sandbox.clusters(work, args.net, args.subnet, releases, args.dir) as (state, pids):
        clusters = state["clusters"]
        yield ((clusters["primary"]["bootstrap_servers"], clusters["secondary"]["bootstrap_servers"]), pids,
               {alias: cluster.get("release") for alias, cluster in clusters.items()})


def print_table(results, providers):
    columns = [("provider", "provider", "%s"), ("records", "records_per_side", "%d"), ("raw rec/s", "raw_consume_rec_s", "%d"),
               ("job rec/s", "validator_job_rec_s", "%d"),
               ("ratio", "ratio_job_vs_raw", "%.3f"), ("base ratio", "baseline_ratio_job_vs_raw", "%.3f"),
               ("wall s", "validator_wall_s_with_jvm_start", "%.1f"), ("base wall s", "baseline_wall_s_with_jvm_start", "%.1f"),
               ("dump+sort+diff s", "kcat_dump_sort_diff_s", "%.1f"), ("wall/dump", "ratio_wall_vs_kcat", "%.2f"),
               ("base wall/dump", "baseline_ratio_wall_vs_kcat", "%.2f"), ("drv py MB", "driver_python_peak_rss_mb", "%.1f"),
               ("exec py MB", "executor_python_peak_rss_mb", "%.1f"), ("base exec py MB", "baseline_executor_python_peak_rss_mb", "%.1f"),
               ("JVM MB", "local_jvm_peak_rss_mb_driver_plus_executors", "%.1f"), ("same report", "baseline_same_report", "%s"),
               ("broker MB", "broker_processes_peak_rss_mb", "%.0f"), ("load raw", "load_1m_at_raw_read", "%.2f"),
               ("load", "load_1m_max_during_job", "%.2f")]
    cells = [[title for title, _key, _form in columns]]
    for row in results:
        cells.append([form % row[key] if row.get(key) is not None else "-" for _title, key, form in columns])
    widths = [max(len(line[index]) for line in cells) for index in range(len(columns))]
    print()
    for line in cells:
        print("  ".join(cell.rjust(width) for cell, width in zip(line, widths)))
    for provider in providers:
        print("largest size on %s: %s" % (provider, LARGEST[provider]))


if __name__ == "__main__":
    main()
