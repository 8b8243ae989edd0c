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
import json
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


# ansible-test bootstraps pip in each sanity virtualenv with a get-pip script it downloads from the internet, and a
# machine that reaches only the package registries fails there (docs/reference/toolchain.md #1). Its failure names the
# file it would use instead (pip's version in the name), so the stage puts the offline stand-in there and runs again:
# this keeps to ansible-test's command line and messages, not its internals. An existing file (a real download) is kept.
GET_PIP_MISSING = re.compile(r"The bootstrap script can be manually downloaded and saved to: (\S+)")
GET_PIP_OFFLINE = REPO / "tests" / "sanity" / "get_pip_offline.py"


def stage_sanity(out: Path) -> Outcome:
    tree = collection_tree()
    log = out / "sanity.log"
    cmd = [str(BIN / "ansible-test"), "sanity", "--venv", "--python", "3.11", "--color", "no"]
    try:
        code = run(cmd, tree, log)
        missing = GET_PIP_MISSING.search(log.read_text())
        if code and missing and not Path(missing.group(1)).exists():
            Path(missing.group(1)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(GET_PIP_OFFLINE, missing.group(1))
            code = run(cmd, tree, log)
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


# What the integration tests need beyond `make venv machine-test` (the Makefile's targets): the Kafka homes and the metrics
# agent from Maven Central, the oldest runtime. `make test` builds only venv and machine-test before the suite; the integration
# stage makes these first. On a fresh machine they wait on the registries at about one core for a minute or more, while the
# other lane's stages (molecule, units, sanity, lint), which need none of them, use the other core.
INTEGRATION_PREREQUISITES = ("maven-artifacts", "oldest-runtime")


def stage_integration(out: Path) -> Outcome:
    prepared = run(["make", "--no-print-directory", "-j2", "--output-sync=target", *INTEGRATION_PREREQUISITES], REPO,
                   out / "integration-prerequisites.log")
    if prepared:
        say(f"integration: `make {' '.join(INTEGRATION_PREREQUISITES)}` failed (exit {prepared}); no integration test ran. Its output:\n"
            + (out / "integration-prerequisites.log").read_text(errors="replace")[-6000:])
        return Outcome("integration", failed=1)
    return stage_pytest("integration", integration_files(out / "integration.xml"), out, ["-m", "integration", *integration_workers()])


def stage_command(name: str, cmd: list[str], cwd: Path, out: Path) -> Outcome:
    code = run(cmd, cwd, out / f"{name}.log")
    return Outcome(name, passed=int(code == 0), failed=int(code != 0))


def file_seconds(junit: Path) -> dict[str, float]:
    """Seconds per test file in a pytest JUnit XML report (a test case's time includes its fixtures' set-up and
    tear-down, so a file's module fixtures count); an absent or unreadable report gives nothing."""
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return {}
    seconds: dict[str, float] = {}
    for case in root.iter("testcase"):
        # classname is the dotted module path, a test class's name appended: tests.integration.x.test_y[.TestZ]
        parts = case.get("classname", "").split(".")
        while parts and not parts[-1].startswith("test_"):
            parts.pop()
        path = "/".join(parts) + ".py"
        seconds[path] = seconds.get(path, 0.0) + float(case.get("time", 0) or 0)
    return seconds


# Seconds per integration file of a whole suite run, for the order of a run with no report of its own (a fresh clone,
# which is what CI runs): without it the longest files (the real-Kafka labs) would start last. Written by
# `python -m tests.run_suite --write-durations` from the last run's report; a stale entry costs time, never a test.
DURATIONS = REPO / "tests" / "integration" / "durations.json"


def integration_files(previous: Path) -> list[str]:
    """Every integration test file, the longest first by the previous run's report (else DURATIONS), so that none of them
    starts last and holds the stage up alone (pytest keeps the order of distinct file arguments). Files neither knows
    (new ones) come first in path order: only the order depends on the times, never a test."""
    every = sorted(path.relative_to(REPO).as_posix() for path in (REPO / "tests" / "integration").rglob("test_*.py"))
    seconds = file_seconds(previous) or json.loads(DURATIONS.read_text())
    return sorted(every, key=lambda path: (path in seconds, -seconds.get(path, 0.0)))


def write_durations(report: Path) -> None:
    seconds = file_seconds(report)
    if not seconds:
        raise SystemExit(f"no test times in {report}: run the integration stage first")
    DURATIONS.write_text(json.dumps({path: round(value) for path, value in sorted(seconds.items())}, indent=1) + "\n")
    print(f"wrote {len(seconds)} files' seconds to {DURATIONS.relative_to(REPO)}")


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
    parser.add_argument("--write-durations", action="store_true",
                        help="write the last integration run's seconds per file (<out>/integration.xml) to tests/integration/durations.json and exit")
    args = parser.parse_args()
    out = Path(args.out)
    if args.write_durations:
        write_durations(out / "integration.xml")
        return 0
    out.mkdir(parents=True, exist_ok=True)

    stages = {
        "sanity": lambda: stage_sanity(out),
        "units": lambda: stage_pytest("units", ["tests/unit"], out, []),
        "lint": lambda: stage_command("lint", [str(BIN / "ansible-lint"), "--profile", "production"], REPO, out),
        "integration": lambda: stage_integration(out),
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
