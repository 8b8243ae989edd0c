"""DIR/kafka_home: where the mirrormaker2 role finds bin/connect-mirror-maker.sh.

With the noida and tansu providers no Kafka distribution exists here, so the script runs the
MirrorMaker 2 stand-in (sandbox/mm2) as the mirrormaker node: in that node's mount namespace (its
/etc/hosts), with this checkout on PYTHONPATH, exec'd so that supervisord's PID is the stand-in's.
With the apache provider DIR/kafka_home links to $KAFKA_HOME and real MirrorMaker 2 runs.
"""
from __future__ import annotations

import shlex
from pathlib import Path

from sandbox.providers import Provider

SCRIPT = """#!/bin/sh
# MirrorMaker 2 stand-in for the sandbox (sandbox/mm2), run as node {node}.
PYTHONPATH={repo}${{PYTHONPATH:+:$PYTHONPATH}}
export PYTHONPATH
exec {python} -m sandbox.mm2 "$@"
"""


def write_kafka_home(sandbox_dir: Path, provider: Provider, repo: Path, mirrormaker_node: dict) -> Path:
    link = sandbox_dir / "kafka_home"
    real_home = provider.kafka_home(sandbox_dir)
    if real_home != link:
        if link.is_symlink() or link.exists():
            if not link.is_symlink():
                raise FileExistsError(f"{link} exists and is not a link: remove it to use the {provider.name} provider's KAFKA_HOME={real_home}")
            link.unlink()
        link.symlink_to(real_home.resolve(), target_is_directory=True)
        return link
    if link.is_symlink():  # left by an earlier apache sandbox in the same dir
        link.unlink()
    script = link / "bin" / "connect-mirror-maker.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(SCRIPT.format(node=mirrormaker_node["name"], repo=shlex.quote(str(repo)), python=shlex.quote(mirrormaker_node["python"])))
    script.chmod(0o755)
    return link
