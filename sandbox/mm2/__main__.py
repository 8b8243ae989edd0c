# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`python -m sandbox.mm2 <connect-mirror-maker.properties> [--clusters A,B]`: the sandbox's MirrorMaker 2 stand-in."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _collections_path():
    """The folder above ansible_collections/ to import the collection from (the stand-in shares its record codec).

    The first folder of ANSIBLE_COLLECTIONS_PATH, which make, tests.support.ansible_play and the node's wrapper script
    (sandbox/kafka_home.py) set; without it the checkout's .venv/collections, where `make venv` links the checkout in every
    layout (tests.support.checkout.collections_path()).
    """
    if os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
        return os.environ["ANSIBLE_COLLECTIONS_PATH"].split(os.pathsep)[0]
    return str(REPO / ".venv" / "collections")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="connect-mirror-maker.sh", description=__doc__)
    parser.add_argument("config", help="connect-mirror-maker.properties")
    parser.add_argument("--clusters", help="only run herders whose target is one of these aliases (comma-separated)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)")
    logging.getLogger("kafka").setLevel(logging.WARNING)
    sys.path.insert(0, _collections_path())
    from sandbox.mm2 import release
    from sandbox.mm2.runner import StandIn
    from sandbox.mm2.settings import SettingsError, load

    log = logging.getLogger("sandbox.mm2")
    for variable in ("KAFKA_HEAP_OPTS", "KAFKA_LOG4J_OPTS", "KAFKA_OPTS"):
        if os.environ.get(variable):
            log.info("%s=%s is for the JVM of real MirrorMaker 2; the stand-in ignores it", variable, os.environ[variable])
    try:
        settings = load(args.config, [c.strip() for c in args.clusters.split(",")] if args.clusters else None, release.detect())
    except (OSError, SettingsError) as exc:
        log.error("cannot start: %s", exc)
        return 1
    StandIn(settings).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
