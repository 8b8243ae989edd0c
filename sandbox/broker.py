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
import socket
import subprocess
import sys
import time
from pathlib import Path

from sandbox import broker_config, zk_registration
from sandbox.probes import ProbeError
from sandbox.providers import BrokerSpec, ProviderUnavailable, get_provider

SPEC_FILE = "broker.json"


def spec_file(broker_id: int) -> str:
    """broker.json for the first broker (the only one with the noida and tansu providers), broker-<id>.json after it."""
    return SPEC_FILE if broker_id == 0 else f"broker-{broker_id}.json"


def program_name(alias: str, broker_id: int) -> str:
    """supervisord's name for a broker: <alias>-broker for the first, <alias>-broker-<id> for the others."""
    return f"{alias}-broker" if broker_id == 0 else f"{alias}-broker-{broker_id}"


def data_dir(cluster_dir: Path, broker_id: int) -> Path:
    return cluster_dir / ("data" if broker_id == 0 else f"data-{broker_id}")


def write_spec(cluster_dir: Path, spec: BrokerSpec) -> None:
    (cluster_dir / spec_file(spec.broker_id)).write_text(json.dumps(spec.to_dict(), indent=2) + "\n")


def read_spec(cluster_dir: Path, broker_id: int = 0) -> BrokerSpec:
    path = cluster_dir / spec_file(broker_id)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `python -m sandbox up` to create the sandbox")
    return BrokerSpec(**json.loads(path.read_text()))


ZOOKEEPER_WAIT_S = 180


def wait_for_zookeeper(address: str, timeout: float = ZOOKEEPER_WAIT_S) -> None:
    """Ambari starts ZooKeeper before the brokers; supervisord starts every program at once, and a broker that finds no
    ZooKeeper within zookeeper.connection.timeout.ms exits (seen at load 20 on 2 cores: ZooKeeper's JVM took longer)."""
    host, _sep, port = address.rpartition(":")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=2):
                return
        except OSError as exc:
            if time.monotonic() > deadline:
                raise FileNotFoundError(f"ZooKeeper at {address} did not accept connections within {timeout:.0f} s ({exc})") from None
            time.sleep(0.5)


def command_for(cluster_dir: Path, broker_id: int = 0) -> tuple:
    spec = read_spec(cluster_dir, broker_id)
    if spec.zookeeper:
        wait_for_zookeeper(spec.zookeeper)
        waited = zk_registration.wait_until_unregistered(spec.zookeeper, spec.broker_id)
        if waited >= 1:
            print(f"sandbox.broker: waited {waited:.0f} s until ZooKeeper dropped broker {spec.broker_id}'s registration of a previous run "
                  "(sandbox/zk_registration.py)", flush=True)
    config = broker_config.load(cluster_dir)
    provider = get_provider(spec.provider)
    argv, env = provider.broker_command(spec, config)
    advertised = spec.advertised_host(config) if provider.advertises_hostname else spec.ip
    print(f"sandbox.broker: {spec.provider} broker {spec.broker_id} of {spec.alias} on {spec.ip}:{spec.port}, advertising {advertised}, "
          f"auto.create.topics.enable={str(config.auto_create_topics).lower()}", flush=True)
    return argv, env


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.broker", description=__doc__.splitlines()[0])
    parser.add_argument("--cluster-dir", required=True, type=Path, help="clusters/<alias> under the sandbox dir")
    parser.add_argument("--broker-id", type=int, default=0, help="which of the cluster's brokers (default: the first, 0)")
    args = parser.parse_args(argv)
    try:
        command, extra_env = command_for(args.cluster_dir.resolve(), args.broker_id)
    except (FileNotFoundError, ValueError, ProviderUnavailable, ProbeError, subprocess.CalledProcessError) as exc:
        print(f"sandbox.broker: cannot start the broker for {args.cluster_dir}: {exc}", file=sys.stderr)
        return 2
    os.execve(command[0], command, {**os.environ, **extra_env})
    return 0  # not reached: execve replaces this process


if __name__ == "__main__":
    sys.exit(main())
