# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Broker launcher: `python -m sandbox.broker --cluster-dir clusters/<alias>`.

supervisord runs this for each cluster. It reads broker.json (where and how, written by `up`) and
broker-config.json (what, written by the Ambari emulator) at every start, then execs the provider's
broker, so a restart through supervisorctl applies what Ambari stored and supervisord's PID is the
broker's own.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from sandbox import broker_config
from sandbox.providers import BrokerSpec, ProviderUnavailable, get_provider

SPEC_FILE = "broker.json"


def write_spec(cluster_dir: Path, spec: BrokerSpec) -> None:
    (cluster_dir / SPEC_FILE).write_text(json.dumps(spec.to_dict(), indent=2) + "\n")


def read_spec(cluster_dir: Path) -> BrokerSpec:
    path = cluster_dir / SPEC_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `python -m sandbox up` to create the sandbox")
    return BrokerSpec(**json.loads(path.read_text()))


def command_for(cluster_dir: Path) -> tuple:
    spec = read_spec(cluster_dir)
    config = broker_config.load(cluster_dir)
    provider = get_provider(spec.provider)
    argv, env = provider.broker_command(spec, config)
    advertised = spec.advertised_host(config) if provider.advertises_hostname else spec.ip
    print(f"sandbox.broker: {spec.provider} broker of {spec.alias} on {spec.ip}:{spec.port}, advertising {advertised}, "
          f"auto.create.topics.enable={str(config.auto_create_topics).lower()}", flush=True)
    return argv, env


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.broker", description=__doc__.splitlines()[0])
    parser.add_argument("--cluster-dir", required=True, type=Path, help="clusters/<alias> under the sandbox dir")
    args = parser.parse_args(argv)
    try:
        command, extra_env = command_for(args.cluster_dir.resolve())
    except (FileNotFoundError, ValueError, ProviderUnavailable) as exc:
        print(f"sandbox.broker: cannot start the broker for {args.cluster_dir}: {exc}", file=sys.stderr)
        return 2
    os.execve(command[0], command, {**os.environ, **extra_env})
    return 0  # not reached: execve replaces this process


if __name__ == "__main__":
    sys.exit(main())
