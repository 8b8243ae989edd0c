# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the validation job: the Spark tests share one local[2] SparkContext for the whole run (one JVM)."""
from __future__ import annotations

import pytest

from tests.support.job_env import local_spark


@pytest.fixture(scope="session")
def spark():
    from mirror_validation.cli import ship_package  # pylint: disable=import-outside-toplevel

    context = local_spark("mirror-validation-unit")
    ship_package(context)  # the Python workers import the package from the shipped zip
    yield context
    context.stop()
