"""`make test`: every check in order, one summary, one closing line CI can read.

Stages: ansible-test sanity, unit tests, ansible-lint (production profile), integration tests against
the sandbox, molecule `default`. A failing stage does not stop the later ones, so one run shows
everything that is wrong; the exit code is non-zero when anything failed.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
COLLECTION_PARTS = ("ansible_collections", "kafkaops", "mirror")


@dataclass
class Outcome:
    stage: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0


def collection_tree() -> Path:
    """ansible-test needs the real path to end in ansible_collections/kafkaops/mirror (no symlink)."""
    if REPO.parts[-3:] == COLLECTION_PARTS:
        return REPO
    # Outside the checkout: inside it, ansible-test would list files through the checkout's git.
    root = Path(tempfile.gettempdir()) / f"kafkaops-mirror-sanity-{os.getuid()}"
    tree = root.joinpath(*COLLECTION_PARTS)
    shutil.rmtree(root, ignore_errors=True)
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


def run(cmd: list[str], cwd: Path, log: Path) -> int:
    print(f"\n=== {' '.join(cmd)}  (cwd {cwd})", flush=True)
    with log.open("w") as handle:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            sys.stdout.write(line)
            handle.write(line)
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


def stage_sanity(out: Path) -> Outcome:
    tree = collection_tree()
    log = out / "sanity.log"
    code = run([str(BIN / "ansible-test"), "sanity", "--venv", "--python", "3.11", "--color", "no"], tree, log)
    text = log.read_text()
    ran = len(re.findall(r'^Running sanity test "', text, re.M))
    failed = re.search(r"The (\d+) sanity test\(s\) listed below \(out of (\d+)\) failed", text)
    if failed:
        failed_n, ran = int(failed.group(1)), int(failed.group(2))
    else:
        failed_n = 0 if code == 0 else 1
    return Outcome("sanity", passed=max(ran - failed_n, 0), failed=failed_n)


def stage_pytest(name: str, path: str, out: Path, extra: list[str]) -> Outcome:
    junit = out / f"{name}.xml"
    run([str(BIN / "pytest"), path, "-p", "no:cacheprovider", f"--junitxml={junit}", "-q", *extra], REPO, out / f"{name}.log")
    passed, failed, skipped = junit_counts(junit)
    return Outcome(name, passed, failed, skipped)


def stage_command(name: str, cmd: list[str], cwd: Path, out: Path) -> Outcome:
    code = run(cmd, cwd, out / f"{name}.log")
    return Outcome(name, passed=int(code == 0), failed=int(code != 0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", help="stages to run (sanity units lint integration molecule)")
    parser.add_argument("--out", default=str(REPO / "tests" / "output" / "suite"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    stages = {
        "sanity": lambda: stage_sanity(out),
        "units": lambda: stage_pytest("units", "tests/unit", out, []),
        "lint": lambda: stage_command("lint", [str(BIN / "ansible-lint"), "--profile", "production"], REPO, out),
        "integration": lambda: stage_pytest("integration", "tests/integration", out, ["-m", "integration"]),
        "molecule": lambda: stage_command("molecule", [str(BIN / "molecule"), "test", "-s", "default"], REPO, out),
    }
    outcomes = []
    for name in args.only or stages:
        started = time.monotonic()
        outcome = stages[name]()
        outcome.seconds = time.monotonic() - started
        outcomes.append(outcome)

    print("\nstage         passed  failed  skipped  seconds")
    for o in outcomes:
        print(f"{o.stage:<12} {o.passed:>7} {o.failed:>7} {o.skipped:>8} {o.seconds:>8.0f}")
    passed, failed, skipped = (sum(getattr(o, k) for o in outcomes) for k in ("passed", "failed", "skipped"))
    print(f"\nsummary: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
