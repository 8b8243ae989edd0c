# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real Apache Kafka for the benchmarks: the sandbox's apache provider (three brokers per cluster, HDInsight's stock
settings: replication factor 3, min.insync.replicas 2), advertising IP addresses.

`clusters(...)` is a context manager that either starts a sandbox the bench owns (in a folder of the bench's work
directory, local node mode: the bench needs no SSH nodes) and brings it down at the end, or uses a running one given with
its directory. The sandbox's brokers advertise their FQDNs as HDInsight's do, which only the sandbox's nodes resolve
(docs/development.md: never resolve them from this machine), so an owned sandbox starts with the runbook's IP-advertising
snippet in Ambari's kafka-env (`up(advertise_ip=True)`), as a mirrored HDInsight pair has it. A given sandbox must
advertise IPs already (`python -m sandbox up --advertise-ip`, or the ambari_kafka role).
"""
from __future__ import annotations

import contextlib
import time
from pathlib import Path

from sandbox import api, probes


def parse_releases(items):
    """{alias: release} from repeated ALIAS=VERSION options."""
    releases = {}
    for item in items or ():
        alias, sep, version = item.partition("=")
        if not sep or not alias or not version:
            raise SystemExit("--release wants ALIAS=VERSION (e.g. primary=3.2.0), got %r" % item)
        releases[alias] = version
    return releases


def advertises_ips(cluster):
    """True when every broker of the cluster advertises an IP address (what this machine can connect to)."""
    hosts = [broker.host for entry in cluster["brokers"] for broker in probes.kafka_metadata(entry["host"], entry["port"])]
    return bool(hosts) and all(host.replace(".", "").isdigit() for host in hosts)


def broker_pids(sandbox_dir):
    """PIDs of the sandbox's broker and ZooKeeper processes now (a restart through Ambari gives new ones)."""
    processes = api.status(sandbox_dir)["processes"]
    return [entry["pid"] for name, entry in processes.items() if ("-broker" in name or "-zookeeper" in name) and entry["pid"]]


@contextlib.contextmanager
def clusters(work, net, subnet=1, releases=None, sandbox_dir=None, up_timeout=None):
    """(state, broker PIDs) of an apache sandbox whose brokers advertise IPs: the one in `sandbox_dir` (left running), or
    one started in `work`/apache-sandbox and brought down at the end. Prints what it does and how long it took."""
    owned = sandbox_dir is None
    directory = Path(work) / "apache-sandbox" if owned else Path(sandbox_dir)
    try:
        if owned:
            started = time.monotonic()
            state = api.up(directory, provider="apache", net=net, subnet=subnet, node_mode="local", releases=releases or None, timeout=up_timeout,
                           advertise_ip=True)
            print("apache sandbox up in %.1f s (%s), net %d" % (time.monotonic() - started, releases_text(state), net), flush=True)
        else:
            state = api.read_state(directory)
            if not state or not api.status(directory).get("running"):
                raise SystemExit("no running sandbox in %s" % directory)
            if state["provider"] != "apache":
                raise SystemExit("the sandbox in %s runs %s, not apache" % (directory, state["provider"]))
        for alias, cluster in state["clusters"].items():
            if not advertises_ips(cluster):
                raise SystemExit("the %s brokers of the sandbox in %s advertise FQDNs, which this machine does not resolve: start it with"
                                 " --advertise-ip (or apply the ambari_kafka role's IP advertising), or let the bench start its own"
                                 % (alias, directory))
        yield state, broker_pids(directory)
    finally:
        if owned and api.read_state(directory):
            api.down(directory)


def releases_text(state):
    return ", ".join("%s %s" % (alias, cluster.get("release")) for alias, cluster in state["clusters"].items())
