# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The spark-submit command line the mirror_validation role builds for YARN, the Spark settings it refuses, and the
job's configuration it writes: the MirrorMaker release, the naming settings, only the job's options the user set.

The role runs on local hosts against a recording spark-submit stand-in (mirror_validation_spark_submit): it writes
the argv, the job's configuration (--config) and the environment it was started with, and a passing report so that
the role runs to its end. One
ansible-playbook run covers every host; each host is one case. Every host's mirrormaker2_kafka_home is a Kafka home
whose libs hold the 2.4.1 jars (HDInsight 5.0), which the mirrormaker2 role's detection reads unless a host sets a release.
"""
from __future__ import annotations

import json
import stat
import sys
import zipfile

import pytest
import yaml

from mirror_validation.options import job_options
from tests.support.ansible_play import run_playbook

ROLE = "kafkaops.mirror.mirror_validation : "
SPARK_CHECK = ROLE + "Check the Spark settings before anything runs"
EXECUTOR_PYTHON = "/usr/bin/anaconda/bin/python3"
# A --conf value with what a shell would split or strip: the role hands spark-submit an argv, never a shell line.
TAGS = "nightly check, 'quoted' \"twice\" = $HOME"

RECORDING_SPARK_SUBMIT = '''#!%s
import json, os, sys
argv = sys.argv[1:]
with open(argv[argv.index("--config") + 1]) as handle:
    config = json.load(handle)
with open(os.path.join(os.path.dirname(config["report"]), "spark-submit.json"), "w") as handle:
    json.dump({"argv": argv, "config": config, "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON")}, handle)
result = {"passed": True, "exit_code": 0, "message": "recorded", "topics": [], "groups": [], "records_read": 0, "duration_s": 0,
          "records_per_s": 0, "spark_master": argv[argv.index("--master") + 1], "client": "none", "checks": {}}
with open(config["report"], "w") as handle:
    json.dump(result, handle)
with open(config["html"], "w") as handle:
    handle.write("<html></html>")
'''

YARN = {"mirror_validation_spark_master": "yarn", "mirror_validation_spark_queue": "mirror-checks",
        "mirror_validation_spark_principal": "mirror@EXAMPLE.COM", "mirror_validation_spark_keytab": "/etc/security/keytabs/mirror.keytab",
        "mirror_validation_executor_python": EXECUTOR_PYTHON,
        "mirror_validation_spark_conf": {"spark.executor.instances": 4, "spark.yarn.tags": TAGS}}
# host: its settings; the UI of a local job is off unless the settings turn it on
# Each host runs the whole role (a few seconds of CPU each), so one host carries cases that do not collide: "tuned" sets two
# of the job's options as well as the web UI.
LOCAL = {"local": {"mirror_validation_spark_master": "local[*]"},
         "tuned": {"mirror_validation_spark_master": "local[2]", "mirror_validation_spark_conf": {"spark.ui.enabled": "true"},
                   "mirror_validation_catch_up_timeout": 60, "mirror_validation_client": "kafka-python"}}
# host: (its settings, the release the job must get, the internal_topic_separator it gets)
RELEASES = {
    "local": (LOCAL["local"], "2.4.1", True),  # no release set: detected
    "release-set": ({"mirror_validation_mirrormaker_version": "3.9"}, "3.9", True),
    # also a MirrorMaker 1 deployment: the job's engine follows mirrormaker2_engine
    "mirrormaker2-settings": ({"mirrormaker2_kafka_version": "3.5.2", "mirrormaker2_engine": "mm1",
                               "mirrormaker2_properties": {"replication.policy.internal.topic.separator.enabled": "false"}}, "3.5.2", False),
}
DETECTED_KAFKA = "2.4.1"
# host: its naming settings, under the names every role uses (renamed in 0.2.0)
NAMING = {"naming-set": {"mirror_validation_replication_policy_separator": "_", "mirror_validation_offset_syncs_topic_location": "target",
                         "mirror_validation_mirrormaker_version": "3.9", "mirror_validation_mode": "incremental"}}
# host: (its settings, what the failure message must name): refused before anything runs, by the argument specs or the rename
REFUSED_NAMING = {
    "old-separator-name": ({"mirror_validation_separator": "_"}, "mirror_validation_replication_policy_separator"),
    "old-location-name": ({"mirror_validation_offset_syncs_location": "target"}, "mirror_validation_offset_syncs_topic_location"),
    "location-not-a-choice": ({"mirror_validation_offset_syncs_topic_location": "both"}, "mirror_validation_offset_syncs_topic_location"),
    "policy-not-a-choice": ({"mirror_validation_replication_policy": "custom"}, "mirror_validation_replication_policy"),
}
# host: (its settings, what the failure message must say): values the job would refuse, refused by the job's own rules on the
# controller before anything is written on the host
REFUSED_VALUES = {
    "negative-wait": ({"mirror_validation_catch_up_timeout": -5}, "catch_up_timeout must be >= 0"),
    "negative-duplicates": ({"mirror_validation_max_duplicate_ratio": -0.5}, "max_duplicate_ratio must be >= 0"),
    "identity-on-2-4-1": ({"mirror_validation_replication_policy": "identity"}, "replication policy identity needs MirrorMaker 2 of Kafka 3.0"),
    "bounded-without-sample": ({"mirror_validation_mode": "bounded"}, "sample_partitions must be >= 1 with mode bounded"),
    "incremental-mirrormaker-1": ({"mirrormaker2_engine": "mm1", "mirror_validation_mode": "incremental"},
                                  "mode incremental is not implemented for engine mm1 (MirrorMaker 1)"),
}
VALUES_CHECK = ROLE + "Fail on a value the job would refuse"
# host: (its settings, what the failure message must name)
REFUSED = {
    "queue-without-yarn": ({"mirror_validation_spark_master": "spark://master:7077", "mirror_validation_spark_queue": "mirror-checks"},
                           'queue "mirror-checks"'),
    "principal-without-keytab": (dict(YARN, mirror_validation_spark_keytab=""), 'keytab ""'),
    "cluster-deploy-mode": (dict(YARN, mirror_validation_spark_conf={"spark.submit.deployMode": "cluster"}), 'deploy mode "cluster"'),
}


@pytest.fixture(scope="module")
def role_run(tmp_path_factory):
    """(play result, {host: its work dir}) of the role on the YARN host and on every host whose settings it refuses."""
    root = tmp_path_factory.mktemp("spark-submit")
    spark_submit = root / "spark-submit"
    spark_submit.write_text(RECORDING_SPARK_SUBMIT % sys.executable)
    spark_submit.chmod(0o755)
    kafka_home = root / "kafka"
    (kafka_home / "libs").mkdir(parents=True)
    for jar in ("kafka-clients-%s.jar" % DETECTED_KAFKA, "kafka_2.12-%s.jar" % DETECTED_KAFKA):
        (kafka_home / "libs" / jar).write_bytes(b"")
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    hosts = {"yarn": YARN, **LOCAL, **{host: settings for host, (settings, _named) in REFUSED.items()},
             **{host: settings for host, (settings, _release, _flag) in RELEASES.items()},
             **NAMING, **{host: settings for host, (settings, _named) in REFUSED_NAMING.items()},
             **{host: settings for host, (settings, _said) in REFUSED_VALUES.items()}}
    work = {host: root / host for host in hosts}
    inventory = {"all": {"children": {
        "primary_kafka": {"hosts": {"source": dict(local, kafka_bootstrap_servers="127.0.0.1:9", kafka_cluster_alias="primary")}},
        "secondary_kafka": {"hosts": {"target": dict(local, kafka_bootstrap_servers="127.0.0.1:9", kafka_cluster_alias="secondary")}},
        "validators": {"vars": {"mirrormaker2_kafka_home": str(kafka_home)},
                       "hosts": {host: dict(local, **settings, mirror_validation_work_dir=str(work[host]))
                                 for host, settings in hosts.items()}}}}}
    (root / "inventory.yml").write_text(yaml.safe_dump(inventory))
    role_vars = {"mirror_validation_spark_submit": str(spark_submit), "mirror_validation_python": sys.executable,
                 "mirror_validation_topic_drift": False,  # would read the (absent) clusters; not what this test is about
                 "mirror_validation_report_dir": str(root / "controller-reports")}
    (root / "validate.yml").write_text(yaml.safe_dump([{"name": "validate", "hosts": "validators", "gather_facts": False,
                                                        "roles": [{"role": "kafkaops.mirror.mirror_validation", "vars": role_vars}]}]))
    return run_playbook(root / "validate.yml", inventory=root / "inventory.yml", timeout=600), work


def test_yarn_gets_client_mode_queue_kerberos_executor_python_and_the_job_zip(role_run):
    play, work = role_run
    assert play.stats["yarn"]["failures"] == 0, play.stdout[-3000:]
    recorded = json.loads((work["yarn"] / "reports" / "spark-submit.json").read_text())
    argv = recorded["argv"]
    job_dir = work["yarn"] / "job"
    assert argv[:argv.index(str(job_dir / "validate_mirror.py")) + 1] == [
        "--master", "yarn", "--deploy-mode", "client", "--queue", "mirror-checks",
        "--principal", "mirror@EXAMPLE.COM", "--keytab", "/etc/security/keytabs/mirror.keytab",
        "--conf", "spark.pyspark.python=" + EXECUTOR_PYTHON, "--conf", "spark.pyspark.driver.python=" + sys.executable,
        "--conf", "spark.executor.instances=4", "--conf", "spark.yarn.tags=" + TAGS,
        "--py-files", str(job_dir / "mirror_validation.zip"), str(job_dir / "validate_mirror.py")]
    assert recorded["PYSPARK_PYTHON"] == sys.executable  # the driver's; executors take spark.pyspark.python
    with zipfile.ZipFile(job_dir / "mirror_validation.zip") as archive:
        assert "mirror_validation/job.py" in archive.namelist()


@pytest.mark.parametrize("host", sorted(REFUSED_VALUES))
def test_values_the_job_would_refuse_fail_before_anything_is_written(role_run, host):
    play, work = role_run
    result = play.task(VALUES_CHECK, host)
    assert result["failed"] and REFUSED_VALUES[host][1] in result["msg"] and "nothing was written" in result["msg"], result
    assert play.stats[host]["failures"] == 1 and not work[host].exists()


@pytest.mark.parametrize("host", sorted(REFUSED))
def test_refused_spark_settings_fail_before_anything_is_copied_or_run(role_run, host):
    play, work = role_run
    result = play.task(SPARK_CHECK, host)
    assert result["failed"] and "nothing ran" in result["msg"] and REFUSED[host][1] in result["msg"]
    assert not work[host].exists()


@pytest.mark.parametrize("host, conf", [("local", ["spark.ui.enabled=false"]), ("tuned", ["spark.ui.enabled=true"])])
def test_a_local_job_starts_without_its_web_ui_unless_asked(role_run, host, conf):
    play, work = role_run
    assert play.stats[host]["failures"] == 0, play.stdout[-3000:]
    argv = json.loads((work[host] / "reports" / "spark-submit.json").read_text())["argv"]
    assert argv[:4] == ["--master", LOCAL[host]["mirror_validation_spark_master"], "--deploy-mode", "client"]
    assert [argv[index + 1] for index, item in enumerate(argv) if item == "--conf"] == conf


def _config(work, host):
    return json.loads((work[host] / "reports" / "spark-submit.json").read_text())["config"]


@pytest.mark.parametrize("host", sorted(RELEASES))
def test_the_job_gets_the_release_that_runs_mirrormaker(role_run, host):
    """mirrormaker_version: set on the role, else the mirrormaker2 role's setting, else its detection in the Kafka home's
    libs (HDInsight 5.0's 2.4.1 here); the internal-separator switch from mirrormaker2_properties."""
    play, work = role_run
    _settings, release, separator = RELEASES[host]
    assert play.stats[host]["failures"] == 0, play.stdout[-3000:]
    config = _config(work, host)
    assert (config["mirrormaker_version"], config["internal_topic_separator"]) == (release, separator)
    assert config["replication_policy_separator"] == "."


def test_the_engine_follows_mirrormaker2_engine(role_run):
    play, work = role_run
    assert play.stats["mirrormaker2-settings"]["failures"] == 0, play.stdout[-3000:]
    assert (_config(work, "mirrormaker2-settings")["engine"], _config(work, "local")["engine"]) == ("mm1", "mm2")


def test_the_naming_settings_reach_the_job_under_the_names_every_role_uses(role_run):
    play, work = role_run
    assert play.stats["naming-set"]["failures"] == 0, play.stdout[-3000:]
    config = _config(work, "naming-set")
    assert (config["replication_policy_separator"], config["offset_syncs_topic_location"]) == ("_", "target")
    # Its incremental mode: the state file of the flow in the state directory, which the role created.
    state = work["naming-set"] / "state"
    assert (config["mode"], config["state_file"]) == ("incremental", str(state / "primary-to-secondary.json")) and state.is_dir()
    assert ("mode" not in _config(work, "local"), _config(work, "local")["state_file"], (work["local"] / "state").exists()) == (True, None, False)
    # A passed incremental run replaced the state (the job's exit code 0): a change; a full run's reports are output only.
    job = "kafkaops.mirror.mirror_validation : Validate the mirror with Spark on "
    ran = {entry["host"]: entry["result"]["changed"] for entry in play.tasks if entry["task"].startswith(job)}
    assert (ran["naming-set"], ran["local"]) == (True, False), ran


def test_the_job_gets_only_the_settings_the_user_set_and_reads_them_all(role_run):
    """The job owns its defaults: what the user left unset is not in the configuration, which the job reads whole."""
    play, work = role_run
    assert play.stats["tuned"]["failures"] == 0, play.stdout[-3000:]
    config = _config(work, "tuned")
    assert (config["catch_up_timeout"], config["client"]) == (60, "kafka-python") and "read_timeout" not in config
    assert "catch_up_timeout" not in _config(work, "local")
    assert stat.S_IMODE((work["tuned"] / "job" / "job.json").stat().st_mode) == 0o600
    options = job_options(config, {})
    assert (options.catch_up_timeout, options.client, options.read_timeout) == (60, "kafka-python", 30)


@pytest.mark.parametrize("host", sorted(REFUSED_NAMING))
def test_old_names_and_values_outside_the_choices_fail_before_anything_runs(role_run, host):
    """The argument specs' choices are the only check of the policy and the location (the role asserts them no more)."""
    play, work = role_run
    failed = [entry["result"].get("msg", "") for entry in play.tasks if entry["host"] == host and entry["result"].get("failed")]
    assert len(failed) == 1 and REFUSED_NAMING[host][1] in failed[0], failed
    assert play.stats[host]["failures"] == 1 and not work[host].exists()
