# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make test`: every check, one summary, one closing line CI can read.

Stages: ansible-test sanity, unit tests, ansible-lint (production profile), integration tests against
the sandbox, molecule `default`. A failing stage does not stop the others, so one run shows
everything that is wrong; the exit code is non-zero when anything failed.

Most of the integration and molecule time is spent waiting on brokers, MirrorMaker and Spark, so
LANES stages run at the same time: each lane takes the next stage of QUEUE when its stage ends. The two
long stages start at once: the integration tests, with pytest-xdist workers that each start their own
sandbox on their own nets (tests/integration/conftest.py), and molecule (sandbox net 5); the lane that
ends first runs the short ones. Each stage writes its output to `<out>/<stage>.log`; a stage's whole
log is printed when it finishes, so outputs never interleave. `--serial` runs the stages one after
another with live output, as before.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from tests.support.checkout import COLLECTION_PARTS, REPO, is_collection_tree

BIN = Path(sys.executable).parent


@dataclass
class Outcome:
    stage: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0


def collection_tree() -> Path:
    """ansible-test needs the real path to end in ansible_collections/kafkaops/mirror (no symlink)."""
    if is_collection_tree(REPO):
        return REPO
    # Outside the checkout: inside it, ansible-test would list files through the checkout's git. A directory of this
    # run's own: a fixed one would be emptied under a running ansible-test by another checkout's `make sanity`.
    root = Path(tempfile.mkdtemp(prefix=f"kafkaops-mirror-sanity-{os.getuid()}-"))
    tree = root.joinpath(*COLLECTION_PARTS)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            target = tree / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return tree


# LANES stages run at the same time, taken in QUEUE order: the two long ones first, then the short ones on whichever
# lane is free. Two lanes on the 2-core CI machine: a third would only make the CPU-bound stages wait for a core.
LANES = int(os.environ.get("SUITE_LANES", "2"))
QUEUE = ("integration", "molecule", "units", "sanity", "lint")
# pytest-xdist workers for the integration tests: each waits on its own sandbox most of the time (health waits, refresh
# intervals, Spark start), so more workers than the machine's 2 cores pay off, the more so once the other lane has
# finished its stages. Worker K uses nets SANDBOX_NET + 2K and + 2K + 1.
INTEGRATION_WORKERS = int(os.environ.get("INTEGRATION_WORKERS", "4"))
# The integration files that take longest (each whole mirror.yml runs or Spark cluster), longest first: handed out first,
# so that none of them starts last and holds the stage up alone. The other files follow in path order. Only the order
# depends on this list: a missing or stale entry costs time, never a test.
LONGEST_FIRST = (
    # The real-Kafka unit (tests/integration/conftest.py REAL_KAFKA_FILES: this file and the kafka/ files, on one lab) first:
    # it is the longest unit. Then the files with a real-Kafka lab of their own.
    "tests/integration/real_kafka/test_real_kafka.py",
    "tests/integration/differential/test_mm2_differential.py",
    "tests/integration/real_kafka/test_newest_release.py",
    "tests/integration/mirror/test_quick_start_hn0.py",
    "tests/integration/mirror_validation/test_oldest_runtime.py",
    # Per-file totals of a clean-clone `.ci/run` (2026-11-26, loaded machine), longest first; test_stale_state.py and the
    # failover files grew since (a rebuilt target, a crash and re-copy).
    "tests/integration/day_two/test_day_two.py",
    "tests/integration/mirrormaker2/test_mirrormaker2_role.py",
    "tests/integration/kafka/test_kafka_topics_role.py",
    "tests/integration/kafka/test_kafka_topic_module.py",
    "tests/integration/mirrormaker2/test_kafka_versions.py",
    "tests/integration/mirror_validation/test_role.py",
    "tests/integration/mirrormaker2/test_mirrormaker2_absent.py",
    "tests/integration/failover/test_failover_mm2.py",
    "tests/integration/preflight/test_preflight.py",
    "tests/integration/molecule_docker/test_docker_scenario.py",
    "tests/integration/mirror/test_mirror_playbook_faults.py",
    "tests/integration/ambari/test_ambari_modules.py",
    "tests/integration/kafka/test_kafka_info_modules.py",
    "tests/integration/mirror_host/test_mirror_host_role.py",
    "tests/integration/preflight/test_stale_state.py",
    "tests/integration/hosts_sync/test_hosts_sync_role.py",
    "tests/integration/failover/test_failover.py",
    "tests/integration/mirror_validation/test_with_mm2_stand_in.py",
    "tests/integration/connection/test_tls_connection.py",
    "tests/integration/ambari/test_role_ambari_kafka.py",
    "tests/integration/connection/test_connection_reaches_every_role.py",
    "tests/integration/ambari/test_ambari_emulator_strictness.py",
    "tests/integration/mirrormaker2/test_mirrormaker2_accounts.py",
    "tests/integration/kafka/test_topic_drift.py",
    "tests/integration/mirror_validation/test_validation_job.py",
)

_print_lock = threading.Lock()
_live = threading.local()  # .stream: copy the command's output to stdout as it comes (serial mode)


def say(text: str) -> None:
    with _print_lock:
        print(text, flush=True)


def run(cmd: list[str], cwd: Path, log: Path) -> int:
    with log.open("w") as handle:
        handle.write(f"=== {' '.join(cmd)}  (cwd {cwd})\n")
        handle.flush()
        if getattr(_live, "stream", False):
            print(f"\n=== {' '.join(cmd)}  (cwd {cwd})", flush=True)
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
        for line in proc.stdout:
            if getattr(_live, "stream", False):
                sys.stdout.write(line)
            handle.write(line)
            handle.flush()
        return proc.wait()


def junit_counts(path: Path) -> tuple[int, int, int]:
    if not path.exists():
        return 0, 1, 0
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    return total - failed - skipped, failed, skipped


def offline_get_pip() -> Path:
    """Put the offline get-pip stand-in where `ansible-test sanity --venv` looks for its download (docs/reference/toolchain.md #1).

    ansible-test fetches get-pip from the internet unless ~/.ansible/test/cache holds it under the pip version it
    pins; a machine that reaches only the package registries fails there. The stand-in bootstraps pip from the
    interpreter's bundled wheel and installs the rest from the package index, so it works with or without internet.
    An existing file (a real download) is kept.
    """
    from ansible_test._internal.host_configs import NativePythonConfig
    from ansible_test._internal.python_requirements import get_venv_packages

    pip_version = get_venv_packages(NativePythonConfig(version="3.11", path=None))["pip"]
    cached = Path.home() / ".ansible" / "test" / "cache" / f"get_pip_{pip_version.replace('.', '_')}.py"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "tests" / "sanity" / "get_pip_offline.py", cached)
    return cached


def stage_sanity(out: Path) -> Outcome:
    offline_get_pip()
    tree = collection_tree()
    log = out / "sanity.log"
    try:
        code = run([str(BIN / "ansible-test"), "sanity", "--venv", "--python", "3.11", "--color", "no"], tree, log)
    finally:
        if tree != REPO:
            shutil.rmtree(tree.parents[2], ignore_errors=True)
    text = log.read_text()
    ran = len(re.findall(r'^Running sanity test "', text, re.M))
    failed = re.search(r"The (\d+) sanity test\(s\) listed below \(out of (\d+)\) failed", text)
    if failed:
        failed_n, ran = int(failed.group(1)), int(failed.group(2))
    else:
        failed_n = 0 if code == 0 else 1
    return Outcome("sanity", passed=max(ran - failed_n, 0), failed=failed_n)


def stage_pytest(name: str, paths: list[str], out: Path, extra: list[str]) -> Outcome:
    junit = out / f"{name}.xml"
    run([str(BIN / "pytest"), *paths, "-p", "no:cacheprovider", f"--junitxml={junit}", "-q", *extra], REPO, out / f"{name}.log")
    passed, failed, skipped = junit_counts(junit)
    return Outcome(name, passed, failed, skipped)


def stage_command(name: str, cmd: list[str], cwd: Path, out: Path) -> Outcome:
    code = run(cmd, cwd, out / f"{name}.log")
    return Outcome(name, passed=int(code == 0), failed=int(code != 0))


def integration_files() -> list[str]:
    """Every integration test file, LONGEST_FIRST first (pytest keeps the order of distinct file arguments)."""
    every = sorted(path.relative_to(REPO).as_posix() for path in (REPO / "tests" / "integration").rglob("test_*.py"))
    return [path for path in LONGEST_FIRST if path in every] + [path for path in every if path not in LONGEST_FIRST]


def integration_workers() -> list[str]:
    """pytest-xdist options: one test file per unit (a file's tests share module fixtures), handed out in argument order."""
    if INTEGRATION_WORKERS <= 1:
        return []
    # loadfile, with the files on the real-Kafka lab as one unit (tests/integration/conftest.py pytest_xdist_make_scheduler).
    return ["-n", str(INTEGRATION_WORKERS), "--dist", "loadfile", "--no-loadscope-reorder"]


def run_stage(name: str, stages: dict, out: Path, started_all: float) -> Outcome:
    say(f"[{time.monotonic() - started_all:6.0f} s] {name}: started (log {out / (name + '.log')})")
    started = time.monotonic()
    try:
        outcome = stages[name]()
    except Exception as exc:  # a broken stage runner is a failed stage, not a lost summary
        outcome = Outcome(name, failed=1)
        say(f"{name}: could not run: {exc!r}")
    outcome.seconds = time.monotonic() - started
    return outcome


def print_log(outcome: Outcome, out: Path, started_all: float) -> None:
    log = out / f"{outcome.stage}.log"
    text = log.read_text(errors="replace") if log.exists() else "(no log)\n"
    with _print_lock:
        print(f"\n{'=' * 30} {outcome.stage}: {outcome.passed} passed, {outcome.failed} failed, {outcome.skipped} skipped "
              f"in {outcome.seconds:.0f} s {'=' * 30}")
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        print(f"[{time.monotonic() - started_all:6.0f} s] {outcome.stage}: finished", flush=True)


def run_lanes(names: list[str], stages: dict, out: Path, started_all: float) -> list[Outcome]:
    """LANES threads take stages in QUEUE order until none is left; a stage's log is printed when it ends."""
    queue = [name for name in QUEUE if name in names] + [name for name in names if name not in QUEUE]
    outcomes: dict[str, Outcome] = {}
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                if not queue:
                    return
                name = queue.pop(0)
            outcome = run_stage(name, stages, out, started_all)
            outcomes[name] = outcome
            print_log(outcome, out, started_all)

    threads = [threading.Thread(target=work, name=f"lane-{n}") for n in range(max(LANES, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [outcomes[name] for name in names]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", help="stages to run (sanity units lint integration molecule)")
    parser.add_argument("--out", default=str(REPO / "tests" / "output" / "suite"))
    parser.add_argument("--serial", action="store_true", help="one stage after another, output as it comes (no lanes)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    stages = {
        "sanity": lambda: stage_sanity(out),
        "units": lambda: stage_pytest("units", ["tests/unit"], out, []),
        "lint": lambda: stage_command("lint", [str(BIN / "ansible-lint"), "--profile", "production"], REPO, out),
        "integration": lambda: stage_pytest("integration", integration_files(), out, ["-m", "integration", *integration_workers()]),
        "molecule": lambda: stage_command("molecule", [str(BIN / "molecule"), "test", "-s", "default"], REPO, out),
    }
    names = list(dict.fromkeys(args.only or stages))
    unknown = [name for name in names if name not in stages]
    if unknown:
        parser.error(f"unknown stage(s) {unknown}; stages: {' '.join(stages)}")
    started_all = time.monotonic()
    if args.serial or len(names) == 1:
        _live.stream = True
        outcomes = [run_stage(name, stages, out, started_all) for name in names]
    else:
        outcomes = run_lanes(names, stages, out, started_all)

    print("\nstage         passed  failed  skipped  seconds")
    for o in outcomes:
        print(f"{o.stage:<12} {o.passed:>7} {o.failed:>7} {o.skipped:>8} {o.seconds:>8.0f}")
    passed, failed, skipped = (sum(getattr(o, k) for o in outcomes) for k in ("passed", "failed", "skipped"))
    print(f"wall clock: {time.monotonic() - started_all:.0f} s")
    print(f"\nsummary: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
