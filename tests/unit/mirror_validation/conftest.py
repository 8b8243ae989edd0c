# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the validation job: the Spark tests share one local[2] SparkContext for the whole run (one JVM)."""
from __future__ import annotations

import os
import shutil

import pytest

from tests.support.job_env import local_spark


@pytest.fixture(scope="session")
def spark():
    # `make check` needs only Python: without a Java the Spark tests skip; `make test` installs Java 17
    # (scripts/machine-setup.sh), so they run there. Found as Spark's launcher finds it: JAVA_HOME first, then PATH.
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    if not (java and os.access(java, os.X_OK)):
        pytest.skip("needs Java 17+ for Spark's local JVM: apt-get install openjdk-17-jre-headless (make test installs it)")
    from mirror_validation.cli import ship_package  # pylint: disable=import-outside-toplevel

    context = local_spark("mirror-validation-unit")
    shipped = ship_package(context)  # the Python workers import the package from the shipped zip
    yield context
    context.stop()
    os.remove(shipped)
