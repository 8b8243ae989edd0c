# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Apache Kafka homes assembled from Maven Central: `python -m sandbox.kafka_dist [RELEASE ...]`.

A home is shaped like a Kafka distribution, `libs/` (every runtime jar of the release's broker and MirrorMaker 2
artifacts, plus the logging binding the POMs leave out), `bin/` (launchers this project writes: never Apache's
scripts) and `config/` (log configurations). It is built once per release under the user's cache
($KAFKAOPS_KAFKA_CACHE, else $XDG_CACHE_HOME/kafkaops-mirror/kafka, else ~/.cache/kafkaops-mirror/kafka) and re-used;
a home whose recipe changed is rebuilt. Maven fetches the jars (one small POM per release, copy-dependencies).

The launchers read the environment variables Apache's do, so the mirrormaker2 role drives a home built here exactly as
it drives an HDInsight node's /usr/hdp/current/kafka-broker: JAVA_HOME, KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS,
KAFKA_LOG4J_OPTS, KAFKA_OPTS, LOG_DIR.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from sandbox import cached_build, maven

RECIPE_FILE = "kafkaops-home.json"


@dataclass(frozen=True)
class Release:
    """One Kafka release: what Maven fetches for it and how its processes start.

    `mirror_maker_2` is False where Maven Central does not serve connect-mirror for the release (2.4.1: the oldest served
    is 2.7.2, checked 2026-11-27), so its home runs brokers, ZooKeeper and MirrorMaker 1 only.
    """

    version: str
    scala: str
    metadata: str  # "zookeeper" (HDInsight's shape; KRaft was not production-ready before 3.3) or "kraft"
    logging: tuple  # group:artifact:version of the slf4j binding and its backend, absent from the releases' POMs
    mirror_maker_2: bool = True

    @property
    def log4j2(self) -> bool:
        return int(self.version.split(".")[0]) >= 4

    @property
    def mirror_maker_1(self) -> bool:
        return int(self.version.split(".")[0]) < 4  # kafka.tools.MirrorMaker was removed in 4.0

    def artifacts(self) -> list:
        kafka = [f"org.apache.kafka:kafka_{self.scala}:{self.version}"]
        mirror = [f"org.apache.kafka:connect-mirror:{self.version}"] if self.mirror_maker_2 else []
        return kafka + mirror + list(self.logging)


# The releases the lab runs (HDInsight 5.0 and 5.1, the last 3.x and the newest 4.x whose connect-mirror Maven Central
# served on 2026-11-27). Logging: build.gradle at each tag declares log4j compileOnly and its binding test-only, so
# a broker started from the POM's runtime jars logs nothing (2.4.1: log4j 1.2.17 + slf4j-log4j12; 3.x: reload4j;
# 4.x: log4j2, whose core and api the POM brings, without the slf4j 1.x binding).
RELEASES = {
    "2.4.1": Release("2.4.1", "2.12", "zookeeper", ("log4j:log4j:1.2.17", "org.slf4j:slf4j-log4j12:1.7.28"), mirror_maker_2=False),
    "3.2.0": Release("3.2.0", "2.12", "zookeeper", ("ch.qos.reload4j:reload4j:1.2.19", "org.slf4j:slf4j-reload4j:1.7.36")),
    "3.9.2": Release("3.9.2", "2.13", "kraft", ("ch.qos.reload4j:reload4j:1.2.25", "org.slf4j:slf4j-reload4j:1.7.36")),
    "4.3.1": Release("4.3.1", "2.13", "kraft", ("org.apache.logging.log4j:log4j-slf4j-impl:2.25.4",)),
}
DEFAULT_RELEASES = ("2.4.1", "3.2.0")  # the runbooks' migration: HDInsight 5.0 to 5.1

# bin/<name>: the main class each launcher runs. Names are the distribution's, which the roles call.
LAUNCHERS = {
    "kafka-server-start.sh": "kafka.Kafka",
    "kafka-storage.sh": "kafka.tools.StorageTool",
    "zookeeper-server-start.sh": "org.apache.zookeeper.server.quorum.QuorumPeerMain",
    "connect-mirror-maker.sh": "org.apache.kafka.connect.mirror.MirrorMaker",
    "kafka-mirror-maker.sh": "kafka.tools.MirrorMaker",
}
# Heaps as the distribution's launchers default them (a role or the sandbox sets KAFKA_HEAP_OPTS for smaller ones).
DEFAULT_HEAPS = {"kafka-server-start.sh": "-Xmx1G -Xms1G", "zookeeper-server-start.sh": "-Xmx512M -Xms512M",
                 "connect-mirror-maker.sh": "-Xms256M -Xmx2G"}

RUN_CLASS = """#!/bin/sh
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# kafkaops.mirror's launcher for this Kafka home (assembled by sandbox/kafka_dist.py): runs MAIN-CLASS [ARGS] on Java with
# every jar in libs/ on the class path. Reads JAVA_HOME, KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS, KAFKA_LOG4J_OPTS,
# KAFKA_OPTS and LOG_DIR as a Kafka distribution's launchers do.
home=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "$JAVA_HOME" ]; then java="$JAVA_HOME/bin/java"; else java=java; fi
log_dir=${{LOG_DIR:-$home/logs}}
mkdir -p "$log_dir"
: "${{KAFKA_HEAP_OPTS:=-Xmx256M}}"
: "${{KAFKA_JVM_PERFORMANCE_OPTS:=-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
-XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true}}"
: "${{KAFKA_LOG4J_OPTS:={log_opts}}}"
# Word splitting of the option variables is intended: each holds several JVM options, as in the distribution.
# shellcheck disable=SC2086
exec "$java" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS "-Dkafka.logs.dir=$log_dir" $KAFKA_LOG4J_OPTS $KAFKA_OPTS -cp "$home/libs/*" "$@"
"""

TOOL = """#!/bin/sh
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# kafkaops.mirror's launcher: {main} of Kafka {version}.
: "${{KAFKA_HEAP_OPTS:={heap}}}"
export KAFKA_HEAP_OPTS
exec "$(dirname "$0")/kafka-run-class.sh" {main} "$@"
"""

LOG4J = """# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Default logging of this Kafka home: INFO to standard output (a supervisor or systemd keeps it).
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.reflections=ERROR
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
"""

LOG4J2 = """# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Default logging of this Kafka home (log4j2, Kafka 4.x): INFO to standard output (a supervisor or systemd keeps it).
Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
    Logger:
      - name: org.reflections
        level: ERROR
      - name: kafka.request.logger
        level: WARN
      - name: state.change.logger
        level: WARN
"""

POM = """<?xml version="1.0" encoding="UTF-8"?>
<!-- kafkaops.mirror: the jars of Kafka {version}'s home (sandbox/kafka_dist.py) -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkaops.mirror.lab</groupId>
  <artifactId>kafka-home</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""


class KafkaHomeError(RuntimeError):
    """A home could not be assembled: the message says which release, what failed and what to do."""


def cache_root() -> Path:
    return cached_build.cache_dir("KAFKAOPS_KAFKA_CACHE", "kafka")


def release(version: str) -> Release:
    try:
        return RELEASES[version]
    except KeyError:
        raise KafkaHomeError(f"Kafka {version} is not a release the lab assembles; choose one of {', '.join(RELEASES)}") from None


def _recipe(spec: Release) -> dict:
    """What a home is built from: a home whose recorded recipe differs is rebuilt."""
    files = {"run_class": RUN_CLASS, "tool": TOOL, "log4j": LOG4J2 if spec.log4j2 else LOG4J}
    return {"artifacts": spec.artifacts(), "launchers": sorted(_launchers(spec)),
            "files": hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()}


def _launchers(spec: Release) -> dict:
    names = dict(LAUNCHERS)
    if not spec.mirror_maker_2:
        del names["connect-mirror-maker.sh"]
    if not spec.mirror_maker_1:
        del names["kafka-mirror-maker.sh"]
    return names


def home_path(version: str) -> Path:
    return cache_root() / version


def is_built(version: str) -> bool:
    return cached_build.is_built(home_path(version), RECIPE_FILE, _recipe(release(version)))


def _fetch_jars(spec: Release, libs: Path, work: Path) -> None:
    dependencies = "\n".join(
        f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version></dependency>"
        for group, artifact, version in (coordinate.split(":") for coordinate in spec.artifacts()))
    pom = work / "pom.xml"
    pom.write_text(POM.format(version=spec.version, dependencies=dependencies))
    try:
        maven.fetch(["-f", pom, f"{maven.DEPENDENCY_PLUGIN}:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={libs}"],
                    f"Kafka {spec.version}", ", ".join(spec.artifacts()))
    except maven.MavenError as exc:
        raise KafkaHomeError(str(exc)) from None


def _write_launchers(spec: Release, home: Path) -> None:
    bin_dir = home / "bin"
    bin_dir.mkdir()
    log_file = home / "config" / ("log4j2.yaml" if spec.log4j2 else "log4j.properties")
    # Relative to wherever the home is seen from: a node sees it at HDInsight's path, not in this cache.
    log_opts = (f"-Dlog4j2.configurationFile=$home/config/{log_file.name}" if spec.log4j2
                else f"-Dlog4j.configuration=file:$home/config/{log_file.name}")
    scripts = {"kafka-run-class.sh": RUN_CLASS.format(log_opts=log_opts)}
    for name, main in _launchers(spec).items():
        scripts[name] = TOOL.format(main=main, version=spec.version, heap=DEFAULT_HEAPS.get(name, "-Xmx256M"))
    for name, text in scripts.items():
        path = bin_dir / name
        path.write_text(text)
        path.chmod(0o755)
    log_file.parent.mkdir()
    log_file.write_text(LOG4J2 if spec.log4j2 else LOG4J)


def ensure_home(version: str, log=print) -> Path:
    """The home of `version`, assembled first when missing or built from another recipe."""
    spec = release(version)
    home = home_path(version)

    def assemble(staging: Path) -> None:
        (staging / "libs").mkdir()
        _fetch_jars(spec, staging / "libs", staging)
        (staging / "pom.xml").unlink()
        _write_launchers(spec, staging)

    return cached_build.ensure(home, RECIPE_FILE, _recipe(spec), assemble,
                               lambda: log(f"kafka_dist: assembling Kafka {version} in {home} from Maven Central"))


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.kafka_dist", description=__doc__.splitlines()[0])
    parser.add_argument("releases", nargs="*", default=list(DEFAULT_RELEASES), help=f"releases to assemble (default: {' '.join(DEFAULT_RELEASES)}; "
                        f"'all' for {' '.join(RELEASES)})")
    args = parser.parse_args(argv)
    versions = list(RELEASES) if args.releases == ["all"] else args.releases
    try:
        for version in versions:
            print(f"kafka_dist: Kafka {version}: {ensure_home(version)}")
    except KafkaHomeError as exc:
        print(f"kafka_dist: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
