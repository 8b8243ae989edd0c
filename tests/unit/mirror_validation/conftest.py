"""Make the job package importable as it is on a Spark cluster (top-level `mirror_validation`), and
give the Spark tests one local[2] session for the whole run (one JVM)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

JOB_FILES = Path(__file__).resolve().parents[3] / "roles" / "mirror_validation" / "files"
if str(JOB_FILES) not in sys.path:
    sys.path.insert(0, str(JOB_FILES))


@pytest.fixture(scope="session")
def spark():
    """A small local Spark; toolchain.md #7: bind to loopback, no UI."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]").appName("mirror-validation-unit")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "512m")
        .getOrCreate()
    )
    yield session
    session.stop()


def rows_of(frame, columns=None):
    """The rows of `frame` as sorted tuples, for exact comparison with an expected list."""
    columns = columns or frame.columns
    return sorted(tuple(row[name] for name in columns) for row in frame.select(*columns).collect())
