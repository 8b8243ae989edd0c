"""Shared by the unit and integration tests of the validation job: where the job package lives, and a
local SparkSession configured for this machine."""
from __future__ import annotations

import os
import sys
from pathlib import Path

JOB_FILES = Path(__file__).resolve().parents[3] / "roles" / "mirror_validation" / "files"


def import_job_package():
    """Put the job package on sys.path as it is on a Spark cluster: top-level `mirror_validation`."""
    if str(JOB_FILES) not in sys.path:
        sys.path.insert(0, str(JOB_FILES))


def local_spark(app, cores=2, shuffle_partitions=2):
    """A small local Spark; docs/reference/toolchain.md #7: bind to loopback, no UI, ~0.5 GB."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Executors' Python workers must have the same interpreter (and Kafka clients) as the tests.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession  # pylint: disable=import-outside-toplevel

    return (
        SparkSession.builder.master("local[%d]" % cores).appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", str(cores))
        .config("spark.driver.memory", "512m")
        .getOrCreate()
    )
