# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the unit and integration tests of the validation job: where the job's files live, and a local
SparkSession configured for this machine.

The tests import the job as a Spark cluster's Python does, as the top-level package `mirror_validation`: pytest.ini's
`pythonpath` lists JOB_FILES (the job cannot import the collection, so it is not reached through ansible_collections).
"""
from __future__ import annotations

import os
import sys

from tests.support.checkout import REPO

JOB_FILES = REPO / "roles" / "mirror_validation" / "files"


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
