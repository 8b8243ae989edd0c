# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Apache Maven as the lab runs it to fetch from Maven Central (the Kafka homes, sandbox/kafka_dist.py; the metrics agent,
sandbox/metrics_agent.py; the oldest runtime's Python, tests/support/oldest_runtime.py): the one release of the dependency
plugin they all use, and a run whose failure says what was being fetched and Maven's own errors."""
from __future__ import annotations

import shutil
import subprocess

DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


class MavenError(RuntimeError):
    """Maven is missing or could not fetch: the message starts with the caller's `what`."""


def fetch(args: list, what: str, fetching: str, cwd=None) -> None:
    """`mvn -q -B <args>`; MavenError "<what>: ..." when Maven is not installed or fails, with its ERROR lines (else its last
    lines)."""
    if shutil.which("mvn") is None:
        raise MavenError(f"{what}: Apache Maven (mvn) is not installed; install it (Debian: apt-get install maven) and run again")
    result = subprocess.run(["mvn", "-q", "-B", *map(str, args)], capture_output=True, text=True, check=False, cwd=cwd)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip().splitlines()
        errors = [line for line in output if "ERROR" in line][:5] or output[-5:]
        raise MavenError(f"{what}: Maven could not fetch {fetching}:\n" + "\n".join(errors))
