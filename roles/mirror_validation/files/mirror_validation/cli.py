# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Command line of the validation job: read its options (options.py), run in Spark, write the reports, exit 0/1/2."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import MISSING

from . import html_report, job, options, topic_drift
from .archive import write_archive
from .connection import Connection, secret_env_var
from .options import JOB_WIDE, SIDES, JobOptions, settings
from .report import UNAVAILABLE

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def build_parser():
    """The command line: --config and one flag per option of options.JobOptions and of each side's connection."""
    parser = argparse.ArgumentParser(
        prog="validate_mirror.py",
        description="Prove that MirrorMaker 2 (or MirrorMaker 1: --engine mm1) mirrored every record of the selected topics. Exit code 0 = passed,"
                    " 1 = mirror defects found, 2 = could not validate. Passwords are never arguments: the source and target"
                    " objects of --config hold them (sasl_plain_password, ssl_password), else %s, %s, %s and %s."
                    % tuple(secret_env_var(side, name) for name in ("sasl_plain_password", "ssl_password") for side in SIDES),
    )
    parser.add_argument("--config", help="JSON object of the options below, named with _ (the source and target clusters as"
                                         " objects); the role writes it. The options given on the command line win.")
    for side in SIDES:
        group = parser.add_argument_group("%s cluster (the %s object of --config)" % (side, side))
        for row in settings(Connection):
            if not row.secret and row.name not in JOB_WIDE:
                _add_flag(group, side + "-", row, "%s.%s" % (side, row.name))
    group = parser.add_argument_group("validation")
    for row in settings(JobOptions):
        if row.kind is not Connection:
            _add_flag(group, "", row, row.name)
    return parser


def _add_flag(group, prefix, row, dest):
    """The flag of `row`; a true-by-default switch is --no-NAME. Values stay text: options.job_options reads them as
    it reads the configuration file, and only what was given is set (default SUPPRESS), so that --config fills the rest."""
    name = row.flag
    if row.kind is bool:
        group.add_argument("--" + prefix + ("no-" + name if row.default else name), dest=dest, default=argparse.SUPPRESS,
                           action="store_false" if row.default else "store_true", help=row.help)
    else:
        note = " (required)" if row.default is MISSING else "" if row.default is None else " (default: %s)" % row.default
        group.add_argument("--" + prefix + name, dest=dest, metavar=None if row.choices else row.name.upper(), choices=row.choices, default=argparse.SUPPRESS,
                           help=(row.help + note).strip())


def given_options(args):
    """The options of the --config file with those of the command line over them, as options.job_options takes them."""
    given = options.read_json(args.config, "--config") if args.config else {}
    for key, value in vars(args).items():
        if "." in key:
            side, name = key.split(".", 1)
            given[side] = dict(given.get(side) or {}, **{name: value})
        elif key != "config":
            given[key] = value
    return given


def ship_package(context):
    """Make this package importable in the executors' Python workers.

    When it already came from a zip (spark-submit --py-files), Spark ships it and this returns None; from a plain
    directory, zip it, add it to the context and return the zip's path: the caller removes it once the context's jobs
    are done (left behind, every scheduled run on the MirrorMaker host kept a zip of the job in its temporary directory).
    """
    if zipfile.is_zipfile(os.path.dirname(PACKAGE_DIR)):
        return None
    handle, path = tempfile.mkstemp(prefix="mirror_validation-", suffix=".zip")
    os.close(handle)
    write_archive(PACKAGE_DIR, path)
    context.addPyFile(path)
    return path


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
    try:
        given = given_options(args)
    except ValueError as error:
        print("mirror validation: bad arguments: %s" % error, file=sys.stderr)
        return UNAVAILABLE
    for stale in (given.get("report"), given.get("html")):
        # A run that ends early must not leave an older report looking like its own.
        if stale and os.path.exists(stale):
            os.remove(stale)
    try:
        job_options = options.job_options(given)
        drift = topic_drift.load(job_options.topic_drift_file) if job_options.topic_drift_file else None
    except ValueError as error:
        print("mirror validation: bad arguments: %s" % error, file=sys.stderr)
        return UNAVAILABLE
    if context is None:
        # The snapshot and the wait for the target need no Spark: they run while Spark starts.
        with ThreadPoolExecutor(max_workers=1) as pool:
            prepared = pool.submit(job.prepare, job_options)
            context = spark_context()
            shipped = ship_package(context)
            try:
                result = job.run(context, job_options, prepared)
            finally:
                if shipped:
                    os.remove(shipped)
    else:
        result = job.run(context, job_options)
    if drift is not None:
        result = topic_drift.attach(result, drift)
    write_reports(result, job_options.report, job_options.html)
    print("mirror validation %s: %s" % ("passed" if result["passed"] else "FAILED", result["message"]))
    return result["exit_code"]
