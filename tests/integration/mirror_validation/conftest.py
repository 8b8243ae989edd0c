# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for the validation job on the sandbox (SANDBOX_NET, e.g. 50): small broken-on-purpose mirrors
built by mirror_copy, and one in-process local SparkContext shared by the session's job runs."""
from __future__ import annotations

import json
import os

import pytest

from tests.support import mirror_copy
from tests.support.job_env import local_spark
from tests.support.mirror_copy import Scenario, corrupt, drop, duplicate, move, stop_after, swap
from tests.support.validation_runs import COMBINED_ARGUMENTS, job_arguments, scenario_regex

SCENARIOS = [
    Scenario("clean"),
    Scenario("loss", drop(1, 37)),
    Scenario("duplicates", duplicate(2, [50, 60, 70])),  # 3 of 300 = 1 %: beyond a 0.5 % threshold
    Scenario("at-least-once", duplicate(0, [99])),  # 1 of 300: within a 0.5 % threshold
    Scenario("reorder", swap(0, 10)),
    Scenario("corrupt", corrupt(1, 20)),
    Scenario("wrong-partition", move(0, 5, 2)),
    Scenario("missing-target", create_target=False),
    Scenario("lagging", stop_after(0, 80)),  # its offset sync (0 -> 0) says the target should reach 100 on partition 0
    Scenario("expired", expire_before=20),
    Scenario("bad-sync", bad_syncs=[(0, 10, 11)]),
    Scenario("checkpoints", checkpoints=[("mv-app", 0, 40, 40), ("mv-app", 1, 40, 45), ("mv-app", 2, 100, 101)]),
]


@pytest.fixture(scope="session")
def mirrors(sandbox):
    """{scenario name: {"source_topic", "target_topic"}}: every scenario as its own topic, built once per session."""
    return mirror_copy.build_on(sandbox, "mv", SCENARIOS)


@pytest.fixture(scope="session")
def spark():
    from mirror_validation.cli import ship_package

    context = local_spark("mirror-validation-integration")
    shipped = ship_package(context)  # the executors' Python workers import the package from the shipped zip
    yield context
    context.stop()
    os.remove(shipped)


@pytest.fixture(scope="session")
def run_job(sandbox, spark, tmp_path_factory):
    """run_job(topics_regex, *extra_args) -> (exit code, report dict), in the session's local Spark."""
    from mirror_validation.cli import main

    def run(topics_regex, *extra):
        out = tmp_path_factory.mktemp("report")
        code = main(job_arguments(sandbox, topics_regex, "--report", str(out / "report.json"), "--html", str(out / "report.html"), *extra),
                    context=spark)
        return code, json.loads((out / "report.json").read_text())

    return run


@pytest.fixture(scope="session")
def combined(mirrors, run_job):
    return run_job(scenario_regex(mirrors), *COMBINED_ARGUMENTS, "--client", "confluent-kafka")
