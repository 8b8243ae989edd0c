# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.hosts_entries import (
    HostsEntriesError,
    conflicts,
    entries_from_ambari,
    entries_from_hosts_file,
    marker,
    merge,
    parse_hosts,
    plan,
    render,
)

SOURCE = """127.0.0.1 localhost
::1 localhost ip6-localhost
# comment 10.0.0.9 wn9-x
10.0.0.2  hn0-kafka.abc.internal.cloudapp.net hn0-kafka headnodehost
10.0.0.10\twn0-kafka.abc.internal.cloudapp.net\twn0-kafka  # worker
10.0.0.20 zk0-kafka.abc.internal.cloudapp.net zk0-kafka
10.0.0.30 wnx-notaworker.abc
# BEGIN kafkaops.mirror hosts_sync other
10.1.0.10 wn0-other.def.internal.cloudapp.net wn0-other
# END kafkaops.mirror hosts_sync other
"""


def test_parse_skips_comments_blank_and_managed_blocks():
    parsed = parse_hosts(SOURCE)
    assert [ip for _n, ip, _names in parsed] == ["127.0.0.1", "::1", "10.0.0.2", "10.0.0.10", "10.0.0.20", "10.0.0.30"]
    assert parsed[3] == (5, "10.0.0.10", ["wn0-kafka.abc.internal.cloudapp.net", "wn0-kafka"])
    assert len(parse_hosts(SOURCE, skip_managed=False)) == 7


def test_entries_from_hosts_file_pick_workers_and_zookeepers_only():
    entries = entries_from_hosts_file(SOURCE)
    assert [e["ip"] for e in entries] == ["10.0.0.10", "10.0.0.20"]


def test_entries_from_ambari():
    hosts = [
        {"host_name": "wn0-kafka.abc.internal.cloudapp.net", "ip": "10.0.0.10"},
        {"host_name": "hn0-kafka.abc.internal.cloudapp.net", "ip": "10.0.0.2"},
        {"host_name": "zk1-kafka", "ip": "10.0.0.21"},
    ]
    assert entries_from_ambari(hosts) == [
        {"ip": "10.0.0.10", "names": ["wn0-kafka.abc.internal.cloudapp.net", "wn0-kafka"]},
        {"ip": "10.0.0.21", "names": ["zk1-kafka"]},
    ]
    with pytest.raises(HostsEntriesError, match="no IP address for host wn1"):
        entries_from_ambari([{"host_name": "wn1-kafka.x", "ip": None}])


def test_merge_dedupes_and_sorts_and_refuses_fqdn_disagreement():
    a = [{"ip": "10.0.0.20", "names": ["zk0-k"]}, {"ip": "10.0.0.10", "names": ["wn0-k.x", "wn0-k"]}]
    b = [{"ip": "10.0.0.10", "names": ["wn0-k"]}]
    assert merge([a, b]) == [{"ip": "10.0.0.10", "names": ["wn0-k.x", "wn0-k"]}, {"ip": "10.0.0.20", "names": ["zk0-k"]}]
    with pytest.raises(HostsEntriesError, match="disagrees about WN0-k.X: 10.0.0.10 and 10.0.0.11"):
        merge([a, [{"ip": "10.0.0.11", "names": ["WN0-k.X"]}]])


def test_merge_leaves_out_a_short_name_the_source_gives_two_addresses():
    a = [{"ip": "10.0.0.10", "names": ["wn0-k.x", "wn0-k"]}]
    b = [{"ip": "10.0.0.11", "names": ["wn0-k.y", "WN0-k"]}]
    left_out = []
    assert merge([a, b], left_out) == [{"ip": "10.0.0.10", "names": ["wn0-k.x"]}, {"ip": "10.0.0.11", "names": ["wn0-k.y"]}]
    assert left_out == [{"name": "wn0-k", "ips": ["10.0.0.10", "10.0.0.11"], "reason": "the source maps it to 10.0.0.10 and 10.0.0.11"}]
    # An entry with nothing left is not rendered.
    assert merge([[{"ip": "10.0.0.1", "names": ["s"]}], [{"ip": "10.0.0.2", "names": ["s"]}]]) == []


# kafka-prod-50 (source) and kafka-prod-51 (target): HDInsight's short names take the cluster name's first six characters.
PROD50 = """127.0.0.1 localhost
10.0.0.10 wn0-kafkap.p50.internal.cloudapp.net wn0-kafkap
10.0.0.11 wn1-kafkap.p50.internal.cloudapp.net wn1-kafkap
10.0.0.20 zk0-kafkap.p50.internal.cloudapp.net zk0-kafkap
10.0.0.21 zk5-kafkap.p50.internal.cloudapp.net zk5-kafkap
"""
PROD51_NODE = """127.0.0.1 localhost
10.1.0.10 wn0-kafkap.p51.internal.cloudapp.net wn0-kafkap
10.1.0.11 wn1-kafkap.p51.internal.cloudapp.net
10.1.0.20 zk0-kafkap
"""


def test_colliding_short_names_are_left_out_and_fqdns_copied():
    result = plan(PROD51_NODE, "prod50", source_files=[PROD50])
    assert result["conflicts"] == []
    assert result["block"].splitlines() == [
        "10.0.0.10\twn0-kafkap.p50.internal.cloudapp.net",
        "10.0.0.11\twn1-kafkap.p50.internal.cloudapp.net",
        "10.0.0.20\tzk0-kafkap.p50.internal.cloudapp.net",
        # zk5 has no namesake on this node: its short name means one host and is copied.
        "10.0.0.21\tzk5-kafkap.p50.internal.cloudapp.net\tzk5-kafkap",
    ]
    reasons = {item["name"]: item["reason"] for item in result["left_out"]}
    assert sorted(reasons) == ["wn0-kafkap", "wn1-kafkap", "zk0-kafkap"]
    # Same short name on the line, the FQDN's first label, or a short-only line.
    assert reasons["wn0-kafkap"].startswith("line 2 of this node's hosts file maps wn0-kafkap.p51.internal.cloudapp.net to 10.1.0.10; "
                                            "the source's wn0-kafkap is 10.0.0.10")
    assert "line 3 of this node's hosts file maps wn1-kafkap.p51.internal.cloudapp.net to 10.1.0.11" in reasons["wn1-kafkap"]
    assert "line 4 of this node's hosts file maps zk0-kafkap to 10.1.0.20" in reasons["zk0-kafkap"]
    assert all("share their first six characters" in reason for reason in reasons.values())
    assert {item["name"]: item["ips"] for item in result["left_out"]}["wn0-kafkap"] == ["10.0.0.10"]


def test_short_name_of_an_inventory_host_is_left_out_without_a_hosts_line():
    result = plan("127.0.0.1 localhost\n", "prod50", source_files=[PROD50], local_names=["wn1-kafkap.p51.internal.cloudapp.net", "hn0-kafkap"])
    assert [item["name"] for item in result["left_out"]] == ["wn1-kafkap"]
    assert "wn1-kafkap.p51.internal.cloudapp.net, a host of this node's cluster" in result["left_out"][0]["reason"]
    assert "10.0.0.11\twn1-kafkap.p50.internal.cloudapp.net\n" in result["block"]
    assert "10.0.0.10\twn0-kafkap.p50.internal.cloudapp.net\twn0-kafkap\n" in result["block"]
    # The inventory host that is the source's own host (same FQDN) is no collision.
    same = plan("", "prod50", source_files=[PROD50], local_names=["wn0-kafkap.p50.internal.cloudapp.net"])
    assert same["left_out"] == []


def test_a_short_name_the_node_maps_to_the_same_address_is_copied():
    result = plan("10.0.0.10 wn0-kafkap\n", "prod50", source_files=[PROD50])
    assert result["left_out"] == [] and result["conflicts"] == []


def test_a_contradicted_fqdn_is_still_a_conflict_beside_left_out_short_names():
    node = PROD51_NODE + "10.9.9.9 wn0-kafkap.p50.internal.cloudapp.net\n"
    result = plan(node, "prod50", source_files=[PROD50])
    assert result["conflicts"] == ["line 5 maps wn0-kafkap.p50.internal.cloudapp.net to 10.9.9.9, but the source cluster says 10.0.0.10"]


def test_render():
    assert render([{"ip": "10.0.0.10", "names": ["a.x", "a"]}]) == "10.0.0.10\ta.x\ta\n"


@pytest.mark.parametrize(
    "current, expected",
    [
        ("10.0.0.10 wn0-k\n", []),
        ("10.9.9.9 wn0-k\n", ["line 1 maps wn0-k to 10.9.9.9, but the source cluster says 10.0.0.10"]),
        ("# 10.9.9.9 wn0-k\n", []),
        ("x\n# BEGIN kafkaops.mirror hosts_sync p\n10.9.9.9 wn0-k\n# END kafkaops.mirror hosts_sync p\n", []),
        ("# BEGIN kafkaops.mirror hosts_sync q\n10.9.9.9 WN0-K\n# END kafkaops.mirror hosts_sync q\n",
         ["line 2 maps WN0-K to 10.9.9.9, but the source cluster says 10.0.0.10"]),
    ],
)
def test_conflicts_only_outside_our_block(current, expected):
    assert conflicts(current, [{"ip": "10.0.0.10", "names": ["wn0-k"]}], marker("p")) == expected


def test_plan_and_marker():
    result = plan("127.0.0.1 localhost\n", "primary", source_files=[SOURCE, SOURCE])
    assert result["marker"] == "# {mark} kafkaops.mirror hosts_sync primary"
    assert result["block"].splitlines() == [
        "10.0.0.10\twn0-kafka.abc.internal.cloudapp.net\twn0-kafka",
        "10.0.0.20\tzk0-kafka.abc.internal.cloudapp.net\tzk0-kafka",
    ]
    assert result["conflicts"] == [] and result["left_out"] == []
    with pytest.raises(HostsEntriesError, match="source alias"):
        marker("bad alias")
