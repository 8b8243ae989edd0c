# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real Apache Kafka for the benchmarks: the sandbox's apache provider (three brokers per cluster, HDInsight's stock
settings: replication factor 3, min.insync.replicas 2), advertising IP addresses.

`clusters(...)` is a context manager that either starts a sandbox the bench owns (in a folder of the bench's work
directory, local node mode: the bench needs no SSH nodes) and brings it down at the end, or uses a running one given with
its directory. The sandbox's brokers advertise their FQDNs as HDInsight's do, which only the sandbox's nodes resolve
(docs/development.md: never resolve them from this machine), so an owned sandbox gets the runbook's IP-advertising
snippet through its Ambari emulators, with the rolling restart that applies it, as a mirrored HDInsight pair has it. A
given sandbox must advertise IPs already (the ambari_kafka role, or an earlier bench run's owned sandbox).
"""
from __future__ import annotations

import base64
import contextlib
import json
import time
import urllib.request
from pathlib import Path

from sandbox import api, probes

# The runbook's IP-advertising snippet (docs/reference/ambari-api.md), appended to kafka-env's content.
IP_ADVERTISING = """
# Configure Kafka to advertise IP addresses instead of FQDN
IP_ADDRESS=$(hostname -i)
echo advertised.listeners=$IP_ADDRESS
sed -i.bak -e '/advertised/{/advertised@/!d;}' /usr/hdp/current/kafka-broker/conf/server.properties
echo "advertised.listeners=PLAINTEXT://$IP_ADDRESS:9092" >> /usr/hdp/current/kafka-broker/conf/server.properties
"""
RESTART_TIMEOUT_S = 600


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


class Ambari:
    """The few calls of Ambari's REST API that switching a cluster to IP advertising needs."""

    def __init__(self, ambari):
        self.api = "%s/api/v1/clusters/%s" % (ambari["url"].rstrip("/"), ambari["cluster_name"])
        self.auth = "Basic " + base64.b64encode(("%s:%s" % (ambari["username"], ambari["password"])).encode()).decode()

    def call(self, method, path, body=None):
        request = urllib.request.Request(self.api + path, data=json.dumps(body).encode() if body is not None else None, method=method)
        request.add_header("Authorization", self.auth)
        request.add_header("X-Requested-By", "kafkaops-bench")
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def kafka_env(self):
        tag = self.call("GET", "?fields=Clusters/desired_configs")["Clusters"]["desired_configs"]["kafka-env"]["tag"]
        return self.call("GET", "/configurations?type=kafka-env&tag=%s" % tag)["items"][0]["properties"]

    def advertise_ips(self, hosts):
        """Append the snippet to kafka-env, restart the brokers through Ambari and wait for the request to finish."""
        properties = dict(self.kafka_env())
        properties["content"] = properties.get("content", "") + IP_ADVERTISING
        tag = "bench-ip-advertising-%d" % int(time.time() * 1000)
        self.call("PUT", "", {"Clusters": {"desired_config": [{"type": "kafka-env", "tag": tag, "properties": properties,
                                                               "service_config_version_note": "bench: advertise IPs"}]}})
        request = self.call("POST", "/requests", {
            "RequestInfo": {"command": "RESTART", "context": "bench: advertise IPs",
                            "operation_level": {"level": "HOST_COMPONENT", "cluster_name": self.api.rsplit("/", 1)[1]}},
            "Requests/resource_filters": [{"service_name": "KAFKA", "component_name": "KAFKA_BROKER", "hosts": ",".join(hosts)}]})
        deadline = time.monotonic() + RESTART_TIMEOUT_S
        while time.monotonic() < deadline:
            status = self.call("GET", "/requests/%d?fields=Requests/request_status" % request["Requests"]["id"])["Requests"]["request_status"]
            if status == "COMPLETED":
                return
            if status in ("FAILED", "TIMEDOUT", "ABORTED"):
                raise RuntimeError("the restart that applies IP advertising ended %s" % status)
            time.sleep(1)
        raise RuntimeError("the restart that applies IP advertising did not finish in %d s" % RESTART_TIMEOUT_S)


def broker_pids(sandbox_dir):
    """PIDs of the sandbox's broker and ZooKeeper processes now (a restart through Ambari gives new ones)."""
    processes = api.status(sandbox_dir)["processes"]
    return [entry["pid"] for name, entry in processes.items() if ("-broker" in name or "-zookeeper" in name) and entry["pid"]]


@contextlib.contextmanager
def clusters(work, net, subnet=1, releases=None, sandbox_dir=None, up_timeout=300.0):
    """(state, broker PIDs) of an apache sandbox whose brokers advertise IPs: the one in `sandbox_dir` (left running), or
    one started in `work`/apache-sandbox and brought down at the end. Prints what it does and how long it took."""
    owned = sandbox_dir is None
    directory = Path(work) / "apache-sandbox" if owned else Path(sandbox_dir)
    try:
        if owned:
            started = time.monotonic()
            state = api.up(directory, provider="apache", net=net, subnet=subnet, node_mode="local", releases=releases or None, timeout=up_timeout)
            print("apache sandbox up in %.1f s (%s), net %d" % (time.monotonic() - started, releases_text(state), net), flush=True)
        else:
            state = api.read_state(directory)
            if not state or not api.status(directory).get("running"):
                raise SystemExit("no running sandbox in %s" % directory)
            if state["provider"] != "apache":
                raise SystemExit("the sandbox in %s runs %s, not apache" % (directory, state["provider"]))
        for alias, cluster in state["clusters"].items():
            if not advertises_ips(cluster):
                advertise_ips(alias, cluster, directory, owned)
        yield state, broker_pids(directory)
    finally:
        if owned and api.read_state(directory):
            api.down(directory)


def advertise_ips(alias, cluster, directory, owned):
    if not owned:
        raise SystemExit("the %s brokers of the sandbox in %s advertise FQDNs, which this machine does not resolve: apply the"
                         " IP-advertising snippet first (the ambari_kafka role), or let the bench start its own sandbox" % (alias, directory))
    started = time.monotonic()
    Ambari(cluster["ambari"]).advertise_ips([entry["node"] for entry in cluster["brokers"]])
    deadline = time.monotonic() + RESTART_TIMEOUT_S
    first = cluster["brokers"][0]
    probes.wait_for(lambda: advertises_ips(cluster) or _raise("still FQDNs"), "%s brokers advertising IPs" % alias, deadline, interval=1)
    probes.wait_for(lambda: probes.broker_count_at_least(first["host"], first["port"], len(cluster["brokers"])),
                    "%s's brokers in its metadata" % alias, deadline, interval=1)
    print("%s: IP advertising through Ambari, rolling restart of %d brokers: %.1f s" % (alias, len(cluster["brokers"]), time.monotonic() - started),
          flush=True)


def _raise(message):
    raise probes.ProbeError(message)


def releases_text(state):
    return ", ".join("%s %s" % (alias, cluster.get("release")) for alias, cluster in state["clusters"].items())
