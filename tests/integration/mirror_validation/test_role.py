# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirror_validation role on the sandbox: spark-submit on a Spark standalone cluster and in local mode,
reports fetched to the controller, a summary, a real failure on defects, validation before any change."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from mirror_validation.archive import write_archive

from sandbox.jvm import SHORT_LIVED_JVM_OPTIONS
from tests.support.ansible_play import run_playbook
from tests.support.job_env import JOB_FILES
from tests.support.spark_standalone import standalone_cluster
from tests.support.validation_runs import COMBINED_ARGUMENTS, comparable, scenario_regex

pytestmark = [pytest.mark.integration, pytest.mark.spark]
ROLE = "kafkaops.mirror.mirror_validation : "
SUMMARY = ROLE + "Show the validation summary"
VERDICT = ROLE + "Fail when the mirror has defects or could not be validated"
SHIP = ROLE + "Copy the job's entry script and package archive"


def run_role(sandbox, tmp_path, check=False, **variables):
    role_vars = {
        "mirror_validation_python": sys.executable,  # the test venv: pyspark plus both Kafka clients
        "mirror_validation_spark_master": "local[2]",
        "mirror_validation_spark_conf": {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2", "spark.driver.memory": "512m"},
        # docs/reference/toolchain.md #7; the lab's JVM options (sandbox/jvm.py)
        "mirror_validation_environment": {"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_SUBMIT_OPTS": SHORT_LIVED_JVM_OPTIONS},
        "mirror_validation_receive_max_bytes": 200 * 1024 * 1024,  # Quirk (noida-db 0.2.3): unbounded fetch replies
        "mirror_validation_catch_up_timeout": 2,
        "mirror_validation_catch_up_interval": 1,
        "mirror_validation_work_dir": str(tmp_path / "host-work"),
        "mirror_validation_report_dir": str(tmp_path / "controller-reports"),
    }
    role_vars.update(variables)
    playbook = tmp_path / "validate.yml"
    playbook.write_text(yaml.safe_dump([{"name": "validate", "hosts": "mirrormaker", "gather_facts": False,
                                         "roles": [{"role": "kafkaops.mirror.mirror_validation", "vars": role_vars}]}]))
    return run_playbook(playbook, inventory=local_mirrormaker_inventory(sandbox, tmp_path), check=check, timeout=600)


def local_mirrormaker_inventory(sandbox, tmp_path):
    """The sandbox's inventory with its MirrorMaker host reached as a local connection of this test's Python.

    These tests are about Spark (a standalone cluster on this machine, the test venv's pyspark, work dirs under
    tmp_path), not the host: the SSH node's unprivileged user can reach none of those, and preparing the node's
    virtualenv is what mirror.yml and molecule test end to end on the strict node.
    """
    inventory = yaml.safe_load((Path(sandbox["dir"]) / "inventory.yml").read_text())
    for group in inventory["all"]["children"].values():
        host_vars = (group.get("hosts") or {}).get(sandbox["mirrormaker_node"])
        if host_vars is not None:  # the host is listed in its cluster's group too, and host vars of both entries merge
            for key in [key for key in host_vars if key.startswith(("ansible_ssh", "ansible_user", "ansible_control_path"))]:
                del host_vars[key]
            host_vars.update({"ansible_connection": "local", "ansible_python_interpreter": sys.executable})
    mirrormaker_vars = inventory["all"]["children"]["mirrormaker"].setdefault("vars", {})
    if not Path(mirrormaker_vars.get("mirrormaker2_kafka_home", "")).is_dir() and sandbox.get("kafka_version"):
        # The node's Kafka home is not on this machine: the release its jars claim, which the role would detect on the node.
        mirrormaker_vars["mirrormaker2_kafka_version"] = sandbox["kafka_version"]
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(inventory))
    return path


def without_release(report):
    """The report without the MirrorMaker release it was given and the naming rules it says it used."""
    checks = {name: value for name, value in report["checks"].items() if name != "naming"}
    return dict({key: value for key, value in report.items() if key != "mirrormaker_version"}, checks=checks)


def fetched_report(sandbox, tmp_path):
    host = sandbox["mirrormaker_node"]
    return json.loads((tmp_path / "controller-reports" / host / "report.json").read_text())


def test_standalone_cluster_gives_the_same_report_as_local_mode(sandbox, mirrors, combined, tmp_path):
    _other, local_report = combined
    with standalone_cluster(tmp_path, sandbox["net"]) as (master, master_ip):
        play = run_role(sandbox, tmp_path, mirror_validation_topics=scenario_regex(mirrors),
                        mirror_validation_max_duplicate_ratio=float(COMBINED_ARGUMENTS[1]), mirror_validation_fail_on_defects=False,
                        mirror_validation_spark_master=master,
                        mirror_validation_environment={"SPARK_LOCAL_IP": master_ip, "SPARK_SUBMIT_OPTS": SHORT_LIVED_JVM_OPTIONS},
                        # partition pairs packed into tasks of ~1000 offsets: a handful of tasks for both workers
                        mirror_validation_task_records=1000,
                        mirror_validation_spark_conf={"spark.driver.host": master_ip, "spark.executor.memory": "512m",
                                                      "spark.driver.memory": "512m", "spark.sql.shuffle.partitions": "2"})
    assert not play.failed, play.stdout[-3000:]
    report = fetched_report(sandbox, tmp_path)
    assert report["spark_master"] == master
    # The role adds the topic settings it read before the job: the missing-target scenario's remote topic is missing, the
    # others are mirrored with the source's settings (mirror_copy creates them alike).
    drift = report.pop("topic_drift")
    assert drift["summary"]["missing"] == 1 and drift["summary"]["errors"] == 0, drift["findings"]
    # And the MirrorMaker release it found (the local run of the job got none: the newest rules, the same names here).
    release = report["mirrormaker_version"]
    assert release and release in report["checks"]["naming"] and release == sandbox.get("kafka_version", release), report["checks"]
    assert without_release(comparable(report)) == without_release(comparable(local_report))
    assert (tmp_path / "controller-reports" / sandbox["mirrormaker_node"] / "report.html").read_text().startswith("<!DOCTYPE html>")
    summary = play.task(SUMMARY)["msg"]
    assert summary[0].startswith("Mirror validation FAILED (exit code 1)") and len(summary) < 40
    assert play.task(VERDICT)["msg"].startswith("Mirror validation:")  # passed the verdict: defects tolerated by the setting


def test_defects_fail_the_play_with_the_reason(sandbox, mirrors, tmp_path):
    """Also: the job ships as one archive, which replaces the package directory of earlier versions."""
    stale = tmp_path / "host-work" / "job" / "mirror_validation"
    stale.mkdir(parents=True)
    (stale / "job.py").write_text("raise SystemExit('the package directory of an earlier version was imported')\n")
    play = run_role(sandbox, tmp_path, mirror_validation_topics=scenario_regex(mirrors, "loss"))
    assert play.failed
    verdict = play.task(VERDICT)
    assert verdict.get("failed") and "found defects" in verdict["msg"] and "missing 1" in verdict["msg"]
    report = fetched_report(sandbox, tmp_path)
    assert (report["exit_code"], report["topics"][0]["totals"]["missing"]) == (1, 1)
    assert play.task(SHIP)["changed"] and not stale.exists()
    write_archive(str(JOB_FILES / "mirror_validation"), str(tmp_path / "fresh.zip"))
    assert (tmp_path / "host-work" / "job" / "mirror_validation.zip").read_bytes() == (tmp_path / "fresh.zip").read_bytes()


def test_bad_settings_fail_before_anything_runs(sandbox, tmp_path):
    play = run_role(sandbox, tmp_path, mirror_validation_target_connection={"bootstrap": "127.50.2.10:9092"})
    assert play.failed
    # The connection filter refuses the misspelt key by name (the task is no_log: its value never shows).
    assert play.task(ROLE + "Read both clusters' connections from the inventory")["failed"]
    assert "unknown connection option(s) bootstrap" in play.stdout and "127.50.2.10" not in play.stdout
    assert not (tmp_path / "host-work").exists() and not (tmp_path / "controller-reports").exists()


def test_check_mode_changes_nothing(sandbox, mirrors, tmp_path):
    """A host that has this version of the job already: its copy is not planned again; the reports directory is, and in
    incremental mode the state directory, whose state the job writes only when it runs (never in check mode)."""
    job = tmp_path / "host-work" / "job"
    job.mkdir(parents=True)
    write_archive(str(JOB_FILES / "mirror_validation"), str(job / "mirror_validation.zip"))
    (job / "validate_mirror.py").write_bytes((JOB_FILES / "validate_mirror.py").read_bytes())
    for path in job.iterdir():
        path.chmod(0o644)
    play = run_role(sandbox, tmp_path, check=True, mirror_validation_topics=scenario_regex(mirrors, "clean"), mirror_validation_mode="incremental")
    assert not play.failed, play.stdout[-3000:]
    planned = play.task(ROLE + "Create the job, report and state directories")
    assert planned["changed"] and [item["item"] for item in planned["results"]][-1] == str(tmp_path / "host-work" / "state")
    assert not play.task(SHIP)["changed"] and not play.task(ROLE + "Remove what earlier versions left in the job directory")["changed"]
    assert sorted(path.name for path in (tmp_path / "host-work").rglob("*")) == ["job", "mirror_validation.zip", "validate_mirror.py"]
    assert not (tmp_path / "controller-reports").exists()
