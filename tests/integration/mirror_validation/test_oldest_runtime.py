# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation job on the oldest runtime the collection claims for it (roles/mirror_host/files/requirements-py38.txt:
Python 3.8, pyspark 3.5.9, Java 8 or 11), built by tests.support.oldest_runtime, against small mirrors on the sandbox.

The job runs as the mirror_validation role runs it: spark-submit of the virtualenv's pyspark, the package as
mirror_validation.zip beside validate_mirror.py (and to the executors with --py-files), JAVA_HOME and PYSPARK_PYTHON
set, local[2]. Skipped, with the reason, only when a part of the runtime cannot be obtained here; a runtime that was
obtained but does not install the pins fails.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid

import pytest

from sandbox.jvm import SHORT_LIVED_JVM_OPTIONS
from tests.support import mirror_copy, oldest_runtime
from tests.support.checkout import REPO
from tests.support.job_env import JOB_FILES
from tests.support.mirror_copy import Scenario, drop
from tests.support.validation_runs import job_arguments, topic_of

pytestmark = [
    pytest.mark.integration,
    pytest.mark.spark,
    # kafka-python 3.0.12 reads its protocol schemas with importlib.resources.read_text (docs/reference/toolchain.md #9)
    pytest.mark.filterwarnings("ignore:open_text is deprecated:DeprecationWarning"),
]
# A small job, but spark-submit on Java 11 ran past 150 s once at load 100 (a fresh-clone run with every lab starting).
JOB_TIMEOUT_S = 420
CLAIMED_PYTHON = "3.8."  # the oldest Python requirements-py38.txt claims; another one is reported, see test_runtime_is_the_claimed_one


@pytest.fixture(scope="module")
def runtimes():
    """runtimes(java) -> the oldest runtime with Java `java` ("8" or "11"), built at its first use."""
    built = {}

    def get(java):
        if java not in built:
            try:
                built[java] = oldest_runtime.ensure(java)
            except oldest_runtime.RuntimeUnavailable as exc:
                built[java] = exc
        if isinstance(built[java], oldest_runtime.RuntimeUnavailable):
            pytest.skip("the oldest runtime with Java %s cannot be obtained here: %s" % (java, built[java]))
        return built[java]

    return get


@pytest.fixture(scope="module")
def mirrors(sandbox):
    return mirror_copy.build_on(sandbox, "mvold", [Scenario("clean"), Scenario("loss", drop(1, 37))])


@pytest.fixture(scope="module")
def job_dir(tmp_path_factory):
    """The job as the role ships it: validate_mirror.py with mirror_validation.zip beside it (archive.py's bytes)."""
    from mirror_validation.archive import write_archive

    path = tmp_path_factory.mktemp("oldest-job")
    shutil.copy(JOB_FILES / "validate_mirror.py", path / "validate_mirror.py")
    write_archive(str(JOB_FILES / "mirror_validation"), str(path / "mirror_validation.zip"))
    return path


def run_job(runtime, job_dir, sandbox, topic, *extra):
    """spark-submit of the runtime's pyspark on the job; returns (exit code, report, output)."""
    out = job_dir / ("report-%s-%s" % (os.path.basename(runtime.java_home), uuid.uuid4().hex[:6]))
    out.mkdir()
    command = [runtime.spark_submit, "--master", "local[2]", "--driver-memory", "512m", "--conf", "spark.ui.enabled=false",
               "--conf", "spark.default.parallelism=2", "--py-files", str(job_dir / "mirror_validation.zip"),
               str(job_dir / "validate_mirror.py")]
    command += job_arguments(sandbox, topic, "--report", str(out / "report.json"), "--html", str(out / "report.html"), *extra)
    environment = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_SUBMIT_OPTS=SHORT_LIVED_JVM_OPTIONS, **runtime.environment())
    # The test's own virtualenv must not leak into the job's Python (pytest.ini's pythonpath reaches os.environ only
    # through PYTHONPATH, which is dropped here for the same reason).
    for name in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "SPARK_HOME"):
        environment.pop(name, None)
    result = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=JOB_TIMEOUT_S, cwd=str(out), check=False)
    output = result.stdout + result.stderr
    assert (out / "report.json").exists(), "spark-submit exited with %d and wrote no report:\n%s" % (result.returncode, output[-4000:])
    return result.returncode, json.loads((out / "report.json").read_text()), output


@pytest.mark.parametrize("java", ["8", "11"])
def test_runtime_is_the_claimed_one(runtimes, java):
    runtime = runtimes(java)
    assert runtime.pyspark_version == "3.5.9"
    assert runtime.java_version.startswith('openjdk version "%s' % ("1.8.0" if java == "8" else "11."))
    # A machine without a Python 3.8 builds the runtime on the oldest 3.8+ a registry serves (CPython 3.9.2): the
    # other tests still run the job there, and this one says which Python they had instead of the claimed one.
    if not runtime.python_version.startswith(CLAIMED_PYTHON):
        pytest.xfail("no Python 3.8 here: ran on Python %s from %s" % (runtime.python_version, runtime.python_source))


def test_a_faithful_mirror_passes(runtimes, job_dir, sandbox, mirrors):
    """Java 8, HDInsight 5.x's; confluent-kafka 2.4.0, the client `auto` prefers."""
    runtime = runtimes("8")
    code, report, output = run_job(runtime, job_dir, sandbox, mirrors["clean"]["source_topic"])
    assert (code, report["passed"], report["exit_code"], report["client"]) == (0, True, 0, "confluent-kafka"), output[-3000:]
    topic = topic_of(report, mirrors["clean"]["source_topic"])
    assert topic["status"] == "passed"
    assert [(p["source_count"], p["target_count"], p["missing"], p["anchors_checked"]) for p in topic["partitions"]] == [(100, 100, 0, 1)] * 3
    # The job ran on this runtime's Spark and Java, not on others found on the machine.
    assert "Running Spark version 3.5.9" in output and "Java version 1.8.0_252" in output
    assert report["spark_master"] == "local[2]"


# Both clients: kafka-python is what a host without a fitting confluent-kafka wheel reads with; one job run each keeps
# the file near 3 minutes.
@pytest.mark.parametrize("java, client", [("8", "kafka-python"), ("11", "confluent-kafka")])
def test_a_dropped_record_is_found_missing(runtimes, job_dir, sandbox, mirrors, java, client):
    runtime = runtimes(java)
    code, report, output = run_job(runtime, job_dir, sandbox, mirrors["loss"]["source_topic"], "--client", client)
    assert (code, report["passed"], report["client"]) == (1, False, client), output[-3000:]
    assert "Running Spark version 3.5.9" in output
    topic = topic_of(report, mirrors["loss"]["source_topic"])
    assert topic["status"] == "defects"
    assert [(p["partition"], p["missing"], p["samples"].get("missing")) for p in topic["partitions"]] == [
        (0, 0, None), (1, 1, [37]), (2, 0, None)]


def test_the_mirror_exporter_runs_on_the_oldest_python(runtimes, sandbox, mirrors, tmp_path):
    """The mirror exporter (mirrormaker2_exporter) runs with the mirror_host virtualenv's Python, whose oldest is this runtime's:
    as the role ships it (the entry point beside the module_utils archive it packs), one run reads the clean mirror's flow with
    requirements-py38.txt's kafka-python and writes its lag per partition."""
    runtime = runtimes("8")
    script = REPO / "roles" / "mirrormaker2" / "files" / "kafka_mirror_exporter.py"
    shutil.copy(script, tmp_path / script.name)
    environment = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}  # nothing of the test's own virtualenv
    subprocess.run([runtime.python, str(tmp_path / script.name), "--pack", str(REPO / "plugins" / "module_utils"), str(tmp_path / "module_utils.zip")],
                   env=environment, check=True, timeout=60)
    # Quirk (noida-db 0.2.3 + kafka-python 3.0.12, tests/support/mirror_copy.py): the protocol level is pinned.
    clusters = {alias: {"bootstrap_servers": sandbox["clusters"][alias]["bootstrap_servers"], "api_version": "2.7.0"}
                for alias in (mirror_copy.SOURCE_ALIAS, mirror_copy.TARGET_ALIAS)}
    flow = {"source": clusters[mirror_copy.SOURCE_ALIAS], "target": clusters[mirror_copy.TARGET_ALIAS], "source_alias": mirror_copy.SOURCE_ALIAS,
            "target_alias": mirror_copy.TARGET_ALIAS, "topics": [mirrors["clean"]["source_topic"]], "groups_exclude": [".*"]}
    (tmp_path / "config.json").write_text(json.dumps({"flows": [flow], "textfile": str(tmp_path / "mirror.prom"), "topic_drift": False}))
    run = subprocess.run([runtime.python, str(tmp_path / script.name), "--config", str(tmp_path / "config.json"), "--once"],
                         env=environment, capture_output=True, text=True, timeout=120, cwd=str(tmp_path), check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    samples = dict(line.rsplit(" ", 1) for line in (tmp_path / "mirror.prom").read_text().splitlines() if line and not line.startswith("#"))
    flow_name = "%s->%s" % (mirror_copy.SOURCE_ALIAS, mirror_copy.TARGET_ALIAS)
    assert samples['kafka_mirror_flow_up{flow="%s"}' % flow_name] == "1", samples
    lags = {name: value for name, value in samples.items() if name.startswith("kafka_mirror_partition_lag_records{")}
    assert len(lags) == 3 and set(lags.values()) == {"0"}, lags
