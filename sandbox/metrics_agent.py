# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Prometheus JMX exporter's Java agent for the lab's MirrorMaker (the mirrormaker2 role's mirrormaker2_metrics_*).

`python -m sandbox.metrics_agent` fetches io.prometheus.jmx:jmx_prometheus_javaagent from Maven Central once into the
user's cache ($KAFKAOPS_METRICS_AGENT_CACHE, else ~/.cache/kafkaops-mirror/metrics-agent) and prints its path; the tests
hand that path to the role as a file on the controller, as an operator would after downloading it.

1.0.1: its classes are Java 8 (class file version 52), the runtime of HDInsight 5.x's MirrorMaker, and it is the newest
release Maven Central served this project (1.4.0 and 1.5.0 were refused, 2026-11-28). The SHA-256 is of the jar Maven
fetched (and checked against Central's SHA-1) that day: a different jar under the same coordinates fails the build.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from sandbox import cached_build, maven

VERSION = "1.0.1"
COORDINATES = f"io.prometheus.jmx:jmx_prometheus_javaagent:{VERSION}"
SHA256 = "7d61f737fd661610ccc14aea79764faa1ea94a340cbc8f0029b3d2edea3d80c1"
JAR = "jmx_prometheus_javaagent.jar"
RECIPE_FILE = ".recipe.json"


class MetricsAgentError(RuntimeError):
    """The agent could not be fetched: the message says what failed and what to do."""


def agent_dir() -> Path:
    return cached_build.cache_dir("KAFKAOPS_METRICS_AGENT_CACHE", "metrics-agent") / VERSION


def _fetch(staging: Path) -> None:
    try:
        maven.fetch([f"{maven.DEPENDENCY_PLUGIN}:copy", f"-Dartifact={COORDINATES}", f"-DoutputDirectory={staging}", "-Dmdep.stripVersion=true"],
                    "metrics agent", COORDINATES, cwd=staging)
    except maven.MavenError as exc:
        raise MetricsAgentError(str(exc)) from None
    fetched = staging / "jmx_prometheus_javaagent.jar"
    digest = hashlib.sha256(fetched.read_bytes()).hexdigest()
    if digest != SHA256:
        raise MetricsAgentError(f"{COORDINATES} from Maven has SHA-256 {digest}, not the pinned {SHA256}: not used")


def ensure_agent(log=print) -> Path:
    """The agent's jar, fetched first when missing."""
    def announce():
        log(f"metrics_agent: fetching {COORDINATES} from Maven Central")

    return cached_build.ensure(agent_dir(), RECIPE_FILE, {"coordinates": COORDINATES, "sha256": SHA256}, _fetch, announce) / JAR


if __name__ == "__main__":
    try:
        print(f"metrics_agent: {ensure_agent()}")
    except MetricsAgentError as error:
        sys.exit(f"metrics_agent: {error}")  # to standard error, exit status 1
