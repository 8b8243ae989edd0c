# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the unit and integration tests of the validation job: where the job's files live, and a local
SparkContext configured for this machine.

The tests import the job as a Spark cluster's Python does, as the top-level package `mirror_validation`: pytest.ini's
`pythonpath` lists JOB_FILES (the job cannot import the collection, so it is not reached through ansible_collections).
"""
from __future__ import annotations

import os
import sys

from sandbox.jvm import SHORT_LIVED_JVM_OPTIONS
from tests.support.checkout import REPO

JOB_FILES = REPO / "roles" / "mirror_validation" / "files"


def local_spark(app, cores=2):
    """A small local SparkContext, as the job makes its own (cli.spark_context: no SQL session); docs/reference/toolchain.md #7:
    bind to loopback, no UI, ~0.5 GB."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("SPARK_SUBMIT_OPTS", SHORT_LIVED_JVM_OPTIONS)  # the lab's JVM options (sandbox/jvm.py)
    # Executors' Python workers must have the same interpreter (and Kafka clients) as the tests.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark import SparkConf, SparkContext  # pylint: disable=import-outside-toplevel

    return SparkContext.getOrCreate(SparkConf().setMaster("local[%d]" % cores).setAppName(app).setAll([
        ("spark.ui.enabled", "false"), ("spark.default.parallelism", str(cores)), ("spark.driver.memory", "512m")]))
