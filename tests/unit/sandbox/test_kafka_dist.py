# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sandbox/kafka_dist.py: what each release's home is made of, and its launchers (Maven replaced by a fake `mvn`)."""
from __future__ import annotations

import os
import subprocess

import pytest

from sandbox import kafka_dist

FAKE_MVN = """#!/bin/sh
# stand-in for mvn: record the POM, then drop one empty jar per dependency into -DoutputDirectory
for a in "$@"; do case "$a" in -f) next=pom;; -DoutputDirectory=*) out=${a#-DoutputDirectory=};; *) [ "$next" = pom ] && pom=$a; next=;; esac; done
cp "$pom" "$FAKE_MVN_LOG"
for artifact in $(sed -n 's:.*<artifactId>\\([^<]*\\)</artifactId><version>\\([^<]*\\)<.*:\\1-\\2:p' "$pom"); do : > "$out/$artifact.jar"; done
exit ${FAKE_MVN_EXIT:-0}
"""


@pytest.fixture
def fake_maven(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mvn").write_text(FAKE_MVN)
    (bin_dir / "mvn").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_MVN_LOG", str(tmp_path / "pom.xml"))
    monkeypatch.setenv("KAFKAOPS_KAFKA_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_hdinsight_50_home_has_log4j_and_mirrormaker_1_but_no_mirrormaker_2(fake_maven):
    home = kafka_dist.ensure_home("2.4.1", log=lambda _line: None)
    jars = sorted(path.name for path in (home / "libs").iterdir())
    assert jars == ["kafka_2.12-2.4.1.jar", "log4j-1.2.17.jar", "slf4j-log4j12-1.7.28.jar"]
    scripts = {path.name for path in (home / "bin").iterdir()}
    assert {"kafka-server-start.sh", "zookeeper-server-start.sh", "kafka-mirror-maker.sh"} <= scripts
    assert "connect-mirror-maker.sh" not in scripts
    assert oct((home / "bin" / "kafka-run-class.sh").stat().st_mode & 0o777) == "0o755"


def test_4x_home_uses_log4j2_and_has_no_mirrormaker_1(fake_maven):
    home = kafka_dist.ensure_home("4.3.1", log=lambda _line: None)
    assert "log4j-slf4j-impl-2.25.4.jar" in {path.name for path in (home / "libs").iterdir()}
    assert (home / "config" / "log4j2.yaml").is_file()
    assert "-Dlog4j2.configurationFile=$home/config/log4j2.yaml" in (home / "bin" / "kafka-run-class.sh").read_text()
    assert not (home / "bin" / "kafka-mirror-maker.sh").exists() and (home / "bin" / "connect-mirror-maker.sh").exists()


def test_a_built_home_is_reused_and_a_changed_recipe_rebuilds_it(fake_maven, monkeypatch):
    home = kafka_dist.ensure_home("3.2.0", log=lambda _line: None)
    marker = home / "libs" / "kept"
    marker.touch()
    assert kafka_dist.ensure_home("3.2.0", log=lambda _line: None) == home and marker.exists()
    monkeypatch.setitem(kafka_dist.RELEASES, "3.2.0", kafka_dist.Release("3.2.0", "2.13", "zookeeper", ("ch.qos.reload4j:reload4j:1.2.19",)))
    kafka_dist.ensure_home("3.2.0", log=lambda _line: None)
    assert not marker.exists() and (home / "libs" / "kafka_2.13-3.2.0.jar").exists()


def test_maven_failure_names_the_release_and_leaves_no_half_home(fake_maven, monkeypatch):
    monkeypatch.setenv("FAKE_MVN_EXIT", "1")
    with pytest.raises(kafka_dist.KafkaHomeError, match="Kafka 3.9.2: Maven could not fetch org.apache.kafka:kafka_2.13:3.9.2"):
        kafka_dist.ensure_home("3.9.2", log=lambda _line: None)
    assert not kafka_dist.home_path("3.9.2").exists()
    assert [path.name for path in (fake_maven / "cache").iterdir() if not path.name.startswith(".lock")] == []


def test_unknown_release_lists_the_choices():
    with pytest.raises(kafka_dist.KafkaHomeError, match="choose one of 2.4.1, 3.2.0, 3.9.2, 4.3.1"):
        kafka_dist.release("2.5.0")


def test_launcher_passes_the_distribution_environment_to_java(fake_maven, tmp_path):
    home = kafka_dist.ensure_home("3.2.0", log=lambda _line: None)
    java_home = tmp_path / "jdk"
    (java_home / "bin").mkdir(parents=True)
    (java_home / "bin" / "java").write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    (java_home / "bin" / "java").chmod(0o755)
    env = {"PATH": os.environ["PATH"], "JAVA_HOME": str(java_home), "KAFKA_OPTS": "-Dmy.option=1", "LOG_DIR": str(tmp_path / "logs")}
    args = subprocess.run([str(home / "bin" / "connect-mirror-maker.sh"), "/etc/mm2.properties"], env=env, capture_output=True, text=True,
                          check=True).stdout.splitlines()
    assert args[args.index("-cp") + 1] == f"{home}/libs/*"
    assert args[args.index("-cp") + 2:] == ["org.apache.kafka.connect.mirror.MirrorMaker", "/etc/mm2.properties"]
    assert "-Xms256M" in args and "-Dmy.option=1" in args and f"-Dkafka.logs.dir={tmp_path / 'logs'}" in args
    assert f"-Dlog4j.configuration=file:{home}/config/log4j.properties" in args
    assert (tmp_path / "logs").is_dir()
