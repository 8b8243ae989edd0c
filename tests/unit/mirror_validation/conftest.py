"""Unit tests of the validation job: the package is importable as on a Spark cluster, and the Spark
tests share one local[2] session for the whole run (one JVM)."""
from __future__ import annotations

import pytest

from job_env import import_job_package, local_spark

import_job_package()


@pytest.fixture(scope="session")
def spark():
    from mirror_validation.cli import ship_package  # pylint: disable=import-outside-toplevel

    session = local_spark("mirror-validation-unit")
    ship_package(session)  # the Python workers import the package from the shipped zip
    yield session
    session.stop()
