# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names and addresses of the sandbox's two HDInsight-like clusters (docs/development.md, "Addresses")."""
from __future__ import annotations

from dataclasses import dataclass, field

# The lab's DNS suffix. HDInsight gives each cluster's virtual network a suffix of its own
# (wn0-<short>.<suffix>.internal.cloudapp.net); the lab's two clusters share this one while their node names differ, and
# get a suffix each (`<cluster name's letters>.kafkaopsbx...`) when their names share the first six letters, so that only
# the short names collide, as between HDInsight's kafka-prod-50 and kafka-prod-51.
DNS_SUFFIX = "kafkaopsbx.internal.cloudapp.net"
BROKER_PORT = 9092
ZOOKEEPER_PORT = 2181
AMBARI_PORT = 8080
WORKER_COUNT = 3
ZOOKEEPER_COUNT = 3
DEFAULT_CLUSTERS = (("primary", "primary"), ("secondary", "secondary"))


@dataclass(frozen=True)
class Node:
    name: str  # FQDN
    short: str
    ip: str
    role: str  # head | worker | zookeeper
    # Names the node on this machine (its init's supervisord program, its log directory): the short name, or
    # `<short>-<alias>` when the clusters' short names collide.
    label: str = ""

    @property
    def tag(self) -> str:
        return self.label or self.short

    def hosts_line(self) -> str:
        return f"{self.ip}\t{self.name}\t{self.short}"


@dataclass(frozen=True)
class Cluster:
    alias: str
    name: str
    index: int  # third octet: 1 for the primary, 2 for the secondary (see build_topology)
    net: int
    nodes: tuple = field(default_factory=tuple)

    @property
    def head(self) -> Node:
        return self.nodes_with_role("head")[0]

    @property
    def workers(self) -> list:
        return self.nodes_with_role("worker")

    @property
    def zookeepers(self) -> list:
        return self.nodes_with_role("zookeeper")

    @property
    def broker_node(self) -> Node:
        """The first broker node (wn0): the only one with the single-broker providers, the MirrorMaker node's own."""
        return self.workers[0]

    def broker_nodes(self, count: int) -> list:
        """The workers that run a broker: the first `count` (3 with real Kafka, as HDInsight's smallest clusters)."""
        if not 1 <= count <= len(self.workers):
            raise ValueError(f"{count} brokers per cluster: the topology has {len(self.workers)} workers")
        return self.workers[:count]

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.broker_node.ip}:{BROKER_PORT}"

    @property
    def ambari_url(self) -> str:
        return f"http://{self.head.ip}:{AMBARI_PORT}"

    def nodes_with_role(self, role: str) -> list:
        return [node for node in self.nodes if node.role == role]

    def hosts_file(self) -> str:
        """An HDInsight node's /etc/hosts: localhost lines, then its own cluster's nodes only."""
        lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback", ""]
        lines += [node.hosts_line() for node in self.nodes]
        return "\n".join(lines) + "\n"


def _letters(cluster_name: str) -> str:
    return "".join(ch for ch in cluster_name.lower() if ch.isalnum())


def short_name(cluster_name: str) -> str:
    """HDInsight node names carry the first six letters of the cluster name."""
    letters = _letters(cluster_name)
    if not letters:
        raise ValueError(f"cluster name {cluster_name!r} has no letters or digits to build node names from")
    return letters[:6]


def build_cluster(alias: str, name: str, index: int, net: int, suffix: str = DNS_SUFFIX, labelled: bool = False) -> Cluster:
    """`suffix`: the cluster's DNS suffix; `labelled`: its nodes' labels carry the alias (short names shared with the other
    cluster)."""
    short = short_name(name)

    def node(prefix: str, number: int, last_octet: int, role: str) -> Node:
        host = f"{prefix}{number}-{short}"
        return Node(name=f"{host}.{suffix}", short=host, ip=f"127.{net}.{index}.{last_octet}", role=role,
                    label=f"{host}-{alias}" if labelled else "")

    nodes = [node("hn", 0, 2, "head")]
    nodes += [node("wn", k, 10 + k, "worker") for k in range(WORKER_COUNT)]
    nodes += [node("zk", k, 20 + k, "zookeeper") for k in range(ZOOKEEPER_COUNT)]
    return Cluster(alias=alias, name=name, index=index, net=net, nodes=tuple(nodes))


def build_topology(net: int, names: dict | None = None, subnet: int = 1) -> list:
    """Both clusters for sandbox network `net` (second octet); `names` maps alias -> cluster name.

    The clusters get third octets `subnet` and `subnet + 1` (1 and 2 unless a test needs another pair).
    """
    if not 0 <= net <= 255:
        raise ValueError(f"--net must be 0..255 (the second octet of 127.N.C.X), got {net}")
    if not 1 <= subnet <= 254 - len(DEFAULT_CLUSTERS):
        raise ValueError(f"subnet must be 1..{254 - len(DEFAULT_CLUSTERS)} (the third octet of the primary), got {subnet}")
    names = names or {}
    chosen = [(alias, names.get(alias, default)) for alias, default in DEFAULT_CLUSTERS]
    shorts = [short_name(name) for _alias, name in chosen]
    colliding = len(set(shorts)) != len(shorts)
    if colliding and len({_letters(name) for _alias, name in chosen}) != len(chosen):
        raise ValueError(f"cluster names {[name for _alias, name in chosen]} are one name (letters and digits compared): "
                         f"two clusters need two names, e.g. kafka-prod-50 and kafka-prod-51")
    # Names sharing their first six letters (kafka-prod-50, kafka-prod-51): HDInsight gives both clusters' nodes the same
    # short names (wn0-kafkap); their FQDNs differ by each cluster's DNS suffix.
    return [build_cluster(alias, name, index, net, suffix=f"{_letters(name)}.{DNS_SUFFIX}" if colliding else DNS_SUFFIX, labelled=colliding)
            for index, (alias, name) in enumerate(chosen, start=subnet)]
