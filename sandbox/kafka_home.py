# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MirrorMaker node's Kafka home: where the mirrormaker2 role finds bin/connect-mirror-maker.sh.

ssh node mode: inside the node, at HDInsight's path /usr/hdp/current/kafka-broker (written into the
node's upper dir). With the noida and tansu providers it holds the MirrorMaker 2 stand-in
(sandbox/mm2) and `libs/kafka-clients-<version>.jar`, an empty marker whose name says which Kafka this
home claims to be (`up --kafka-version`; "2.4.1" is HDInsight 5.0). The stand-in runs as the service
user, who cannot read this checkout or the project's virtualenv (under 0700 directories in CI), so it
runs on the node's system Python with a copy of what it imports in `sandbox-stand-in/`. With the
apache provider the node's init bind-mounts the Kafka home of the MirrorMaker release (sandbox/kafka_dist.py) there
instead and real MirrorMaker runs.

local node mode: DIR/kafka_home, whose script runs the stand-in as the mirrormaker node through the
node's python wrapper (or a link to the release's Kafka home with the apache provider).
"""
from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import kafka

from sandbox.providers import Provider

KAFKA_HOME_ON_NODE = "/usr/hdp/current/kafka-broker"
DEFAULT_KAFKA_VERSION = "3.9"
NODE_PYTHON = "/usr/bin/python3"
STAND_IN_DIR = "sandbox-stand-in"

LOCAL_SCRIPT = """#!/bin/sh
# MirrorMaker 2 stand-in for the sandbox (sandbox/mm2), run as node {node}.
PYTHONPATH={repo}${{PYTHONPATH:+:$PYTHONPATH}}
export PYTHONPATH
exec {python} -m sandbox.mm2 "$@"
"""

NODE_SCRIPT = """#!/bin/sh
# MirrorMaker 2 stand-in for the sandbox (sandbox/mm2) in place of Kafka {version}'s connect-mirror-maker.sh
# ({home}/libs/kafka-clients-{version}.jar says which version this home is). The node's system Python,
# with the copy of what the stand-in imports in {vendor}; nothing from the caller's environment.
PYTHONPATH={vendor}
ANSIBLE_COLLECTIONS_PATH={vendor}
export PYTHONPATH ANSIBLE_COLLECTIONS_PATH
exec {python} -m sandbox.mm2 "$@"
"""


# Quirk of the lab: the stand-in has no MirrorMaker 1 (kafka.tools.MirrorMaker), which a real home of 2.4 to 3.9 launches
# with this script. The mirrormaker2 role checks that the engine's launcher exists before anything changes, so the stand-in's
# home has one that says where MirrorMaker 1 runs for real (tests/integration/real_kafka/test_mirrormaker1.py).
NO_MIRRORMAKER1_SCRIPT = """#!/bin/sh
echo "the sandbox's MirrorMaker 2 stand-in has no MirrorMaker 1: run it on the apache provider's lab" >&2
exit 1
"""


def _write_mirrormaker1_launcher(home: Path, version: str) -> None:
    """The stand-in home's bin/kafka-mirror-maker.sh, up to 3.9 as Kafka's (4.0 removed MirrorMaker 1)."""
    if int(version.split(".")[0]) < 4:
        script = home / "bin" / "kafka-mirror-maker.sh"
        script.write_text(NO_MIRRORMAKER1_SCRIPT)
        script.chmod(0o755)


def write_kafka_home(sandbox_dir: Path, provider: Provider, repo: Path, mirrormaker_node: dict, version: str) -> Path:
    """local node mode: DIR/kafka_home."""
    link = sandbox_dir / "kafka_home"
    real_home = provider.kafka_home(sandbox_dir, version)
    if real_home != link:
        if link.is_symlink() or link.exists():
            if not link.is_symlink():
                raise FileExistsError(f"{link} exists and is not a link: remove it to use the {provider.name} provider's Kafka home {real_home}")
            link.unlink()
        link.symlink_to(real_home.resolve(), target_is_directory=True)
        return link
    if link.is_symlink():  # left by an earlier apache sandbox in the same dir
        link.unlink()
    script = link / "bin" / "connect-mirror-maker.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(LOCAL_SCRIPT.format(node=mirrormaker_node["name"], repo=shlex.quote(str(repo)), python=shlex.quote(mirrormaker_node["python"])))
    script.chmod(0o755)
    _write_mirrormaker1_launcher(link, version)
    return link


def _mkdirs(upper: Path, node_path: str) -> Path:
    """Create node_path's directories in the node's upper dir, each 0755 like the machine's own (a new upper dir
    entry's mode is what the node sees)."""
    upper.mkdir(parents=True, exist_ok=True)
    current = upper
    for part in Path(node_path).relative_to("/").parts:
        current = current / part
        current.mkdir(exist_ok=True)
        current.chmod(0o755)
    return current


def _copy_readable(source: Path, target: Path) -> None:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), dirs_exist_ok=True)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def write_node_kafka_home(upper: Path, provider: Provider, sandbox_dir: Path, repo: Path, version: str) -> dict | None:
    """ssh node mode: fill the node's Kafka home in its upper dir (the node is down); return the bind mount for a
    real distribution ({"source", "target"}) or None."""
    home = _mkdirs(upper, KAFKA_HOME_ON_NODE)
    real_home = provider.kafka_home(sandbox_dir, version)
    if real_home != sandbox_dir / "kafka_home":  # apache: the init mounts it over this (empty) directory
        for child in home.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
        return {"source": str(real_home.resolve()), "target": KAFKA_HOME_ON_NODE}
    vendor = home / STAND_IN_DIR
    if vendor.exists():
        shutil.rmtree(vendor)  # a fresh copy at every `up`: the checkout may have changed since
    _copy_readable(repo / "sandbox", vendor / "sandbox")
    _copy_readable(repo / "plugins", vendor / "ansible_collections" / "kafkaops" / "mirror" / "plugins")
    _copy_readable(Path(kafka.__file__).parent, vendor / "kafka")  # the kafka-python this sandbox runs with
    libs = home / "libs"
    libs.mkdir(exist_ok=True)
    libs.chmod(0o755)
    for old in libs.glob("kafka-clients-*.jar"):
        old.unlink()
    marker = libs / f"kafka-clients-{version}.jar"
    marker.touch()
    marker.chmod(0o644)
    script = home / "bin" / "connect-mirror-maker.sh"
    script.parent.mkdir(exist_ok=True)
    script.parent.chmod(0o755)
    script.write_text(NODE_SCRIPT.format(version=version, home=KAFKA_HOME_ON_NODE, vendor=shlex.quote(f"{KAFKA_HOME_ON_NODE}/{STAND_IN_DIR}"),
                                         python=NODE_PYTHON))
    script.chmod(0o755)
    _write_mirrormaker1_launcher(home, version)
    return None
