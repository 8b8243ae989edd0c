# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Command line of the validation job: parse, run in Spark, write the reports, exit 0/1/2."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor

from . import html_report, job, topic_drift
from .archive import write_archive
from .connection import SIDES, add_connection_arguments, connection_from_arguments, key_password_env_var, password_env_var
from .kafka_reader import CLIENTS
from .naming import POLICIES
from .report import UNAVAILABLE

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def build_parser():
    parser = argparse.ArgumentParser(
        prog="validate_mirror.py",
        description="Prove that MirrorMaker 2 mirrored every record of the selected topics. Exit code 0 = passed,"
                    " 1 = mirror defects found, 2 = could not validate. SASL passwords are read from %s and %s,"
                    " TLS client key passwords from %s and %s: environment variables, or keys of the --passwords-file."
                    % (password_env_var("source"), password_env_var("target"), key_password_env_var("source"), key_password_env_var("target")),
    )
    for side in SIDES:
        add_connection_arguments(parser, side)
    parser.add_argument("--passwords-file", help="JSON object of password variables (see above), read instead of the environment's")
    parser.add_argument("--topics", required=True, help="regular expression (full match) of source topics to validate")
    parser.add_argument("--exclude", help="regular expression (full match) of source topics to leave out")
    parser.add_argument("--source-alias", required=True, help="MM2 alias of the source cluster (prefix of remote topics)")
    parser.add_argument("--target-alias", help="MM2 alias of the target cluster; enables the offset-sync anchor check")
    parser.add_argument("--policy", choices=POLICIES, default="default", help="MM2 replication policy")
    parser.add_argument("--separator", default=".", help="replication.policy.separator")
    parser.add_argument("--offset-syncs-location", choices=("source", "target"), default="source", help="offset-syncs.topic.location")
    parser.add_argument("--mirrormaker-version", default="",
                        help="Kafka release that runs MirrorMaker 2 (2.4.1, 3.9): names its internal topics as that release does"
                             " (replication.policy.separator in them from 3.1, KIP-690); empty: the newest release's rules")
    parser.add_argument("--no-internal-topic-separator", dest="internal_separator_enabled", action="store_false",
                        help="replication.policy.internal.topic.separator.enabled=false (3.5.2+, KAFKA-15102): '.' in internal topic names")
    parser.add_argument("--report", help="write the JSON report here")
    parser.add_argument("--html", help="write the HTML report here")
    parser.add_argument("--catch-up-timeout", type=float, default=300.0, help="seconds to wait for the target to catch up")
    parser.add_argument("--catch-up-interval", type=float, default=5.0, help="seconds between polls of the target end offsets")
    parser.add_argument("--max-duplicate-ratio", type=float, default=0.01,
                        help="duplicates per source record tolerated per topic (MM2 is at-least-once)")
    parser.add_argument("--slice-records", type=int, default=250000, help="offsets per read range of MM2's internal topics")
    parser.add_argument("--task-records", type=int, default=1000000,
                        help="offsets per Spark task: partition pairs (and ranges of MM2's internal topics) are packed together"
                             " up to this, and a larger partition is cut into ranges of about this size at MM2's offset syncs"
                             " (0: --slice-records)")
    parser.add_argument("--window-records", type=int, default=100000,
                        help="records per side that wait in a task for their counterpart on the other side; a partition with"
                             " records that waited longer is read again whole, those records waiting outside the window (0: no"
                             " limit)")
    parser.add_argument("--client", choices=CLIENTS, default="auto", help="Kafka client; auto prefers confluent-kafka")
    parser.add_argument("--receive-max-bytes", type=int, help="largest broker response the client accepts (client default when unset)")
    parser.add_argument("--read-timeout", type=float, default=30.0, help="seconds without progress before a read fails")
    parser.add_argument("--sample-limit", type=int, default=10, help="offsets kept per defect kind and partition")
    parser.add_argument("--topic-drift", help="JSON result of kafkaops.mirror.kafka_mirror_topic_drift_info to include in the report;"
                                              " its errors count as defects")
    return parser


def passwords(path):
    """The password variables: the environment's, with those of the JSON file at `path` (when given) winning."""
    environ = dict(os.environ)
    if path:
        try:
            with open(path, encoding="utf-8") as handle:
                environ.update(json.load(handle))
        except (OSError, ValueError) as error:
            raise ValueError("--passwords-file %s cannot be read as a JSON object: %s" % (path, error)) from None
    return environ


def options_from_arguments(args, environ=None):
    problems = []
    if args.max_duplicate_ratio < 0:
        problems.append("--max-duplicate-ratio must be >= 0")
    if args.slice_records < 1 or args.task_records < 0 or args.window_records < 0:
        problems.append("--slice-records must be >= 1, --task-records and --window-records >= 0")
    if args.catch_up_timeout < 0 or args.catch_up_interval <= 0:
        problems.append("--catch-up-timeout must be >= 0 and --catch-up-interval > 0")
    if problems:
        raise ValueError("; ".join(problems))
    options = job.JobOptions(
        source=connection_from_arguments(args, "source", args.receive_max_bytes, environ),
        target=connection_from_arguments(args, "target", args.receive_max_bytes, environ),
        topics=args.topics, exclude=args.exclude, source_alias=args.source_alias, target_alias=args.target_alias,
        policy=args.policy, separator=args.separator, offset_syncs_location=args.offset_syncs_location,
        mirrormaker_version=args.mirrormaker_version.strip() or None, internal_separator_enabled=args.internal_separator_enabled,
        catch_up_timeout_s=args.catch_up_timeout, catch_up_interval_s=args.catch_up_interval,
        max_duplicate_ratio=args.max_duplicate_ratio, slice_records=args.slice_records, task_records=args.task_records,
        window_records=args.window_records,
        client=args.client,
        read_timeout_s=args.read_timeout, sample_limit=args.sample_limit,
    )
    options.flow_names()  # a release that cannot run these settings (identity before 3.0, syncs on the target before 3.0) stops here
    return options


def ship_package(context):
    """Make this package importable in the executors' Python workers.

    When it already came from a zip (spark-submit --py-files), Spark ships it; from a plain directory,
    zip it and add it to the context.
    """
    if zipfile.is_zipfile(os.path.dirname(PACKAGE_DIR)):
        return
    handle, path = tempfile.mkstemp(prefix="mirror_validation-", suffix=".zip")
    os.close(handle)
    write_archive(PACKAGE_DIR, path)
    context.addPyFile(path)


def write_reports(result, json_path, html_path):
    for path, text in ((json_path, json.dumps(result, indent=2, sort_keys=True)), (html_path, html_report.render(result) if html_path else None)):
        if path:
            directory = os.path.dirname(os.path.abspath(path))
            os.makedirs(directory, exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)


def spark_context():
    """The job's SparkContext with spark-submit's settings. No SparkSession: the job uses RDDs only, and a session's SQL
    state costs seconds at every start (measured on this machine: 9-11 s to a SparkContext, 17-18 s to a session)."""
    from pyspark import SparkConf, SparkContext  # pylint: disable=import-outside-toplevel

    return SparkContext.getOrCreate(SparkConf().setAppName("kafkaops-mirror-validation"))


def main(argv=None, context=None):
    args = build_parser().parse_args(argv)
    for stale in (args.report, args.html):
        # A run that ends early must not leave an older report looking like its own.
        if stale and os.path.exists(stale):
            os.remove(stale)
    try:
        options = options_from_arguments(args, passwords(args.passwords_file))
        drift = topic_drift.load(args.topic_drift) if args.topic_drift else None
    except ValueError as error:
        print("mirror validation: bad arguments: %s" % error, file=sys.stderr)
        return UNAVAILABLE
    if context is None:
        # The snapshot and the wait for the target need no Spark: they run while Spark starts.
        with ThreadPoolExecutor(max_workers=1) as pool:
            prepared = pool.submit(job.prepare, options)
            context = spark_context()
            ship_package(context)
            result = job.run(context, options, prepared)
    else:
        result = job.run(context, options)
    if drift is not None:
        result = topic_drift.attach(result, drift)
    write_reports(result, args.report, args.html)
    print("mirror validation %s: %s" % ("passed" if result["passed"] else "FAILED", result["message"]))
    return result["exit_code"]
