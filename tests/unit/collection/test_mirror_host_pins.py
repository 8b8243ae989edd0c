# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every pin of the mirror_host role installs on the hosts its file claims, from what PyPI publishes.

The role's pin files and what each claims (the oldest Python, the manylinux tag = the oldest glibc) are read from
roles/mirror_host/vars/main.yml (`_mirror_host_requirement_sets`). For each pin and each Python the file covers (3.8 to
3.10 for requirements-py38.txt: HDInsight 5.x's Ubuntu 18.04 has glibc 2.27 and Python 3.8), pip is asked for a wheel as
the host would get one:
    pip download --platform <tag> --python-version <X.Y> --only-binary=:all: --no-deps -d <cache> <pin>
and the wheel it returns is checked against the tags that Python and glibc accept (packaging.tags, independently of pip).
pyspark is the one exception, by necessity: it is published as a source distribution only (no release has a wheel). For
it the test proves that no wheel exists, that its PKG-INFO (read from the head of the sdist) admits the Python, and that
each of its dependencies is a wheel for that host. The downloads are kept in ~/.cache/kafkaops-mirror/pins (or
$XDG_CACHE_HOME's), so a rerun finds its wheels there and asks PyPI nothing.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import urllib.request
from email.parser import Parser
from pathlib import Path

import pytest
import yaml
from packaging import tags
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename

from tests.support.checkout import REPO

ROLE = REPO / "roles" / "mirror_host"
SETS = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["_mirror_host_requirement_sets"]
# Pure-Python projects that publish no wheel at all; pip builds a py3-none-any wheel from the sdist (no glibc involved).
SDIST_ONLY = {"pyspark": "Apache Spark publishes pyspark as an sdist only"}
# The Pythons each file covers: from its oldest up to the next file's oldest (the newest file: its oldest alone).
OLDEST = sorted((tuple(int(p) for p in entry["python"].split(".")) for entry in SETS), reverse=True)
PYPI = "https://pypi.org/simple"


def covered(entry) -> list:
    oldest = tuple(int(p) for p in entry["python"].split("."))
    newer = [version for version in OLDEST if version > oldest]
    until = min(newer) if newer else (oldest[0], oldest[1] + 1)
    return [(3, minor) for minor in range(oldest[1], until[1])]


def pins(entry) -> list:
    lines = (ROLE / "files" / entry["file"]).read_text().splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]


CASES = [(entry["file"], entry["platform"], python, pin) for entry in SETS for python in covered(entry) for pin in pins(entry)]


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "kafkaops-mirror" / "pins"


def accepted_tags(python: tuple, platform: str) -> set:
    """The wheel tags a CPython `python` on glibc `platform` (manylinux2014_x86_64, manylinux_2_28_x86_64) installs."""
    legacy = {"manylinux2014": (2, 17), "manylinux2010": (2, 12), "manylinux1": (2, 5)}
    match = re.match(r"manylinux_(\d+)_(\d+)_(\w+)$", platform) or re.match(r"(manylinux\d+)_(\w+)$", platform)
    if len(match.groups()) == 3:
        glibc, arch = (int(match.group(1)), int(match.group(2))), match.group(3)
    else:
        glibc, arch = legacy[match.group(1)], match.group(2)
    platforms = [f"manylinux_2_{minor}_{arch}" for minor in range(glibc[1], 4, -1)]
    platforms += [f"{name}_{arch}" for name, version in legacy.items() if version <= glibc]
    supported = list(tags.cpython_tags(python, platforms=platforms)) + list(tags.compatible_tags(python, f"cp{python[0]}{python[1]}", platforms))
    return set(supported)


def cached_wheel(directory: Path, requirement: Requirement, accepted: set):
    for path in directory.glob("*.whl"):
        name, version, _build, wheel_tags = parse_wheel_filename(path.name)
        if name == canonicalize_name(requirement.name) and str(version) in requirement.specifier and wheel_tags & accepted:
            return path
    return None


def wheel_for(pin: str, python: tuple, platform: str) -> tuple:
    """(wheel path or None, pip's message): from the cache, else pip download."""
    requirement = Requirement(pin)
    accepted = accepted_tags(python, platform)
    directory = cache_dir() / f"py{python[0]}.{python[1]}-{platform}"
    directory.mkdir(parents=True, exist_ok=True)
    found = cached_wheel(directory, requirement, accepted)
    if found:
        return found, "cached"
    command = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--platform", platform,
               "--python-version", f"{python[0]}.{python[1]}", "--only-binary=:all:", "--no-deps", "-d", str(directory), pin]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    return cached_wheel(directory, requirement, accepted), (result.stderr.strip() or result.stdout.strip())[-800:]


def sdist_metadata(requirement: Requirement) -> tuple:
    """(file names PyPI publishes for the pinned version, the sdist's PKG-INFO), the latter cached."""
    version = next(iter(requirement.specifier)).version
    name = canonicalize_name(requirement.name)
    cached = cache_dir() / "sdist-metadata" / f"{name}-{version}.json"
    if cached.exists():
        return tuple(json.loads(cached.read_text()))
    request = urllib.request.Request(f"{PYPI}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        files = [entry for entry in json.load(answer)["files"] if f"-{version}" in entry["filename"]]
    names = sorted(entry["filename"] for entry in files)
    sdist = next(entry for entry in files if entry["filename"].endswith(".tar.gz"))
    pkg_info = None
    with urllib.request.urlopen(sdist["url"], timeout=120) as answer, tarfile.open(fileobj=answer, mode="r|gz") as archive:
        for member in archive:  # PKG-INFO is among the first members: only the head of the archive is read
            if member.name.count("/") == 1 and member.name.endswith("/PKG-INFO"):
                pkg_info = archive.extractfile(member).read().decode("utf-8")
                break
    assert pkg_info, f"no PKG-INFO in {sdist['filename']}"
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps([names, pkg_info]))
    return names, pkg_info


@pytest.mark.parametrize("pin_file, platform, python, pin", CASES, ids=lambda v: ".".join(map(str, v)) if isinstance(v, tuple) else str(v))
def test_pin_installs_from_a_wheel_on_the_hosts_its_file_claims(pin_file, platform, python, pin):
    requirement = Requirement(pin)
    assert len(requirement.specifier) == 1 and next(iter(requirement.specifier)).operator == "==", f"{pin_file}: {pin} is not name==version"
    name = canonicalize_name(requirement.name)
    if name in SDIST_ONLY:
        files, pkg_info = sdist_metadata(requirement)
        assert not [f for f in files if f.endswith(".whl")], f"{pin} now publishes wheels {files}: drop it from SDIST_ONLY"
        metadata = Parser().parsestr(pkg_info)
        admits = SpecifierSet(metadata.get("Requires-Python") or "")
        assert admits.contains(f"{python[0]}.{python[1]}"), f"{pin} requires Python {admits}, {pin_file} claims {python}"
        environment = {"python_version": f"{python[0]}.{python[1]}", "extra": ""}
        dependencies = [Requirement(line) for line in metadata.get_all("Requires-Dist") or []]
        dependencies = [dep for dep in dependencies if dep.marker is None or dep.marker.evaluate(environment)]
        assert dependencies, f"{pin}: PKG-INFO lists no dependency (expected py4j)"
        for dependency in dependencies:
            wheel, said = wheel_for(str(dependency), python, platform)
            assert wheel, f"{pin}'s dependency {dependency} has no wheel for Python {python} on {platform}: {said}"
        return
    wheel, said = wheel_for(pin, python, platform)
    assert wheel, f"{pin_file}: {pin} has no wheel for Python {python[0]}.{python[1]} on {platform}: {said}"


@pytest.mark.parametrize("entry", SETS, ids=lambda entry: entry["file"])
def test_the_kerberos_pin_builds_from_source_for_every_python_of_its_set(entry):
    """mirror_host_kerberos's python-gssapi: PyPI publishes no Linux wheel (the role builds it, docs/security.md), so its source
    distribution must admit every Python the set covers; a Linux wheel appearing one day is worth knowing."""
    requirement = Requirement(entry["kerberos"])
    assert canonicalize_name(requirement.name) == "gssapi" and next(iter(requirement.specifier)).operator == "=="
    files, pkg_info = sdist_metadata(requirement)
    assert not [f for f in files if f.endswith(".whl") and "linux" in f], f"{entry['kerberos']} now has Linux wheels {files}"
    admits = SpecifierSet(Parser().parsestr(pkg_info).get("Requires-Python") or "")
    for python in covered(entry):
        assert admits.contains(f"{python[0]}.{python[1]}"), f"{entry['kerberos']} requires Python {admits}, {entry['file']} covers {python}"


def test_the_files_cover_hdinsight_5():
    """Ubuntu 18.04: Python 3.8 and glibc 2.27 get a file whose every pin is a manylinux2014 (glibc 2.17) wheel or sdist."""
    chosen = next(entry for entry in SETS if tuple(int(p) for p in entry["python"].split(".")) <= (3, 8))
    assert chosen["platform"] == "manylinux2014_x86_64" and chosen["java"] <= 8
    names = {canonicalize_name(Requirement(pin).name): Requirement(pin) for pin in pins(chosen)}
    assert set(names) == {"kafka-python", "confluent-kafka", "pyspark"}
    assert next(iter(names["pyspark"].specifier)).version.startswith("3.5.")


def test_the_tag_check_refuses_a_wheel_for_a_newer_glibc():
    """The check can fail: confluent-kafka 2.16.1's manylinux_2_28 wheel is not accepted on manylinux2014."""
    accepted = accepted_tags((3, 11), "manylinux2014_x86_64")
    assert not parse_wheel_filename("confluent_kafka-2.16.1-cp311-cp311-manylinux_2_28_x86_64.whl")[3] & accepted
    cp38_wheel = parse_wheel_filename("confluent_kafka-2.4.0-cp38-cp38-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")[3]
    assert cp38_wheel & accepted_tags((3, 8), "manylinux2014_x86_64")
    assert not cp38_wheel & accepted_tags((3, 9), "manylinux2014_x86_64")
