# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Incremental validation against the full job on the same mirror, after records were appended (issue 31 item 5).

    .venv/bin/python -m bench.incremental_validation [--records 1000000] [--appended 10000] [--partitions 8] [--rounds 2]
        [--provider noida|tansu] [--net 50] [--subnet 5]

Two single-broker clusters of the provider (bench/validation.py's), a topic of --records records mirrored to
primary.<topic>, one incremental run that has no state yet (a full run that writes the state), then --appended records
("a day's worth") produced and copied. Then, --rounds times and alternating, the full job and the incremental job (from a
copy of that state each time, so every incremental run checks the same appended records) validate the same mirror. Printed:
per run the wall time with Spark's start, the job's own time (report duration_s, from the moment Spark is up) and the
records read; then the ratios of the medians, full over incremental, measured side by side in this one run. The machine is
shared: compare the ratios of one run, not absolute times of different runs.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition

from bench.validation import (CLIENT, PRODUCER_BATCH, READ_TIMEOUT_S, brokers, create_topic, mirror, produce, settle,
                              validate)


def end_offsets(bootstrap, topic, partitions):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-offsets", **CLIENT})
    try:
        return {partition: consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)[1] for partition in range(partitions)}
    finally:
        consumer.close()


def run_job(source, target, topic, work, provider, label, mode_args):
    wall, report, _peaks = validate(source, target, topic, work, READ_TIMEOUT_S[provider], label=label, job_args=mode_args)
    if not report["passed"]:
        raise RuntimeError("the %s run did not pass: %s" % (label, report["message"]))
    return {"run": label, "wall_s": round(wall, 1), "job_s": report["duration_s"], "records_read": report["records_read"],
            "message": report["message"], "timings": report["timings"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000000, help="records mirrored before the day's appends")
    parser.add_argument("--appended", type=int, default=10000, help="records appended (and copied) since the last validation")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2, help="full and incremental runs, alternating, each this many times")
    parser.add_argument("--provider", choices=("noida", "tansu"), default="noida")
    parser.add_argument("--net", type=int, default=int(os.environ.get("SANDBOX_NET", "50")))
    parser.add_argument("--subnet", type=int, default=5, help="third octet of the primary (secondary: +1)")
    args = parser.parse_args()
    batching = PRODUCER_BATCH[args.provider]
    topic = "bench-incremental-%d" % args.records
    with tempfile.TemporaryDirectory(prefix="bench-incremental-") as tmp:
        work = Path(tmp)
        with brokers(args.provider, args.net, args.subnet, work / args.provider) as ((source, target), broker_pids):
            create_topic(source, topic, args.partitions)
            produce(source, topic, args.partitions, args.records, batching)
            mirror(source, target, topic, args.partitions, batching)
            settle(broker_pids)
            validated_state = work / "state-after-first-run.json"
            first = run_job(source, target, topic, work, args.provider, "first-incremental",
                            ("--mode", "incremental", "--state-file", str(validated_state)))
            print("first incremental run (no state: full): %s" % first, flush=True)
            starts = end_offsets(source, topic, args.partitions)
            produce(source, topic, args.partitions, args.appended, batching, first=args.records)
            mirror(source, target, topic, args.partitions, batching, starts=starts)
            runs = []
            for round_number in range(args.rounds):
                for mode in ("full", "incremental"):
                    settle(broker_pids)
                    mode_args = ()
                    if mode == "incremental":
                        state = work / ("state-%d.json" % round_number)
                        shutil.copyfile(validated_state, state)  # every incremental run checks the same appended records
                        mode_args = ("--mode", "incremental", "--state-file", str(state))
                    runs.append(dict(run_job(source, target, topic, work, args.provider, "%s-%d" % (mode, round_number), mode_args),
                                     mode=mode))
                    print(runs[-1], flush=True)
    print()
    print("%-16s %10s %10s %14s" % ("run", "wall s", "job s", "records read"))
    for run in runs:
        print("%-16s %10.1f %10.1f %14d" % (run["run"], run["wall_s"], run["job_s"], run["records_read"]))
    medians = {mode: {name: statistics.median(run[name] for run in runs if run["mode"] == mode) for name in ("wall_s", "job_s", "records_read")}
               for mode in ("full", "incremental")}
    print()
    print("mirror: %d records + %d appended on %d partitions (%s), %s"
          % (args.records, args.appended, args.partitions, args.provider, time.strftime("%Y-%m-%d %H:%M:%S")))
    for name, title in (("wall_s", "wall time with Spark's start"), ("job_s", "job time (Spark up)"), ("records_read", "records read")):
        print("full / incremental, %s: %.1f / %.1f = %.1fx" % (title, medians["full"][name], medians["incremental"][name],
                                                               medians["full"][name] / max(medians["incremental"][name], 1e-9)))


if __name__ == "__main__":
    main()
