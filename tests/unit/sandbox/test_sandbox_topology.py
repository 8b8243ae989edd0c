# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names, addresses and hosts files of the sandbox clusters (pure logic)."""
from __future__ import annotations

import pytest

from sandbox.topology import build_topology, short_name


def test_default_topology_follows_the_contract():
    primary, secondary = build_topology(7)
    assert (primary.alias, primary.name, secondary.alias, secondary.name) == ("primary", "primary", "secondary", "secondary")
    assert [(n.short, n.ip, n.role) for n in primary.nodes] == [
        ("hn0-primar", "127.7.1.2", "head"),
        ("wn0-primar", "127.7.1.10", "worker"), ("wn1-primar", "127.7.1.11", "worker"), ("wn2-primar", "127.7.1.12", "worker"),
        ("zk0-primar", "127.7.1.20", "zookeeper"), ("zk1-primar", "127.7.1.21", "zookeeper"), ("zk2-primar", "127.7.1.22", "zookeeper"),
    ]
    assert secondary.broker_node.ip == "127.7.2.10" and secondary.broker_node.name.startswith("wn0-second.")
    assert primary.bootstrap_servers == "127.7.1.10:9092" and primary.ambari_url == "http://127.7.1.2:8080"
    assert all(n.name == f"{n.short}.kafkaopsbx.internal.cloudapp.net" for n in primary.nodes)


def test_subnet_moves_both_clusters():
    primary, secondary = build_topology(10, subnet=3)
    assert primary.head.ip == "127.10.3.2" and secondary.head.ip == "127.10.4.2"


def test_hosts_file_has_localhost_then_own_cluster_only():
    primary, secondary = build_topology(0)
    lines = primary.hosts_file().splitlines()
    assert lines[0] == "127.0.0.1\tlocalhost" and lines[1].startswith("::1")
    assert lines[3:] == [f"{n.ip}\t{n.name}\t{n.short}" for n in primary.nodes]
    assert not any(n.short in primary.hosts_file() for n in secondary.nodes)


@pytest.mark.parametrize("name, short", [("primary", "primar"), ("Kafka-Prod-EU", "kafkap"), ("ab", "ab")])
def test_short_name_is_first_six_letters(name, short):
    assert short_name(name) == short


@pytest.mark.parametrize("kwargs, message", [
    ({"net": 256}, "--net must be 0..255"),
    ({"net": 1, "subnet": 0}, "subnet must be"),
    ({"net": 1, "names": {"primary": "kafka-prod-50", "secondary": "Kafka_Prod_50"}}, "are one name"),
    ({"net": 1, "names": {"primary": "---"}}, "no letters or digits"),
])
def test_bad_topology_input_fails_clearly(kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_topology(**kwargs)


def test_names_sharing_six_letters_collide_in_short_form_only():
    """HDInsight's kafka-prod-50 and kafka-prod-51: the same short names (wn0-kafkap), FQDNs told apart by each cluster's DNS
    suffix, and machine-side labels (node init programs, log directories) told apart by the alias."""
    primary, secondary = build_topology(9, {"primary": "kafka-prod-50", "secondary": "kafka-prod-51"})
    assert [n.short for n in primary.nodes] == [n.short for n in secondary.nodes]
    assert primary.broker_node.short == "wn0-kafkap"
    assert primary.broker_node.name == "wn0-kafkap.kafkaprod50.kafkaopsbx.internal.cloudapp.net"
    assert secondary.head.name == "hn0-kafkap.kafkaprod51.kafkaopsbx.internal.cloudapp.net"
    names = [n.name for c in (primary, secondary) for n in c.nodes]
    tags = [n.tag for c in (primary, secondary) for n in c.nodes]
    assert len(set(names)) == len(names) == 14 and len(set(tags)) == 14
    assert secondary.broker_node.tag == "wn0-kafkap-secondary"
    # Each cluster's hosts file has its own nodes only, short names included, as HDInsight writes it.
    assert "wn0-kafkap.kafkaprod51." not in primary.hosts_file() and "\twn0-kafkap\n" in primary.hosts_file()


def test_names_that_differ_keep_the_shared_suffix_and_short_labels():
    primary, _secondary = build_topology(9, {"primary": "kafka-prod-50", "secondary": "kafka-dr-51"})
    assert primary.broker_node.name == "wn0-kafkap.kafkaopsbx.internal.cloudapp.net" and primary.broker_node.tag == "wn0-kafkap"
