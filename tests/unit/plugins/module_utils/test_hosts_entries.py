# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils.hosts_entries import (
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


def test_merge_dedupes_and_sorts_and_refuses_disagreement():
    a = [{"ip": "10.0.0.20", "names": ["zk0-k"]}, {"ip": "10.0.0.10", "names": ["wn0-k.x", "wn0-k"]}]
    b = [{"ip": "10.0.0.10", "names": ["wn0-k"]}]
    assert merge([a, b]) == [{"ip": "10.0.0.10", "names": ["wn0-k.x", "wn0-k"]}, {"ip": "10.0.0.20", "names": ["zk0-k"]}]
    with pytest.raises(HostsEntriesError, match="disagrees about WN0-k: 10.0.0.10 and 10.0.0.11"):
        merge([a, [{"ip": "10.0.0.11", "names": ["WN0-k"]}]])


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
    assert result["conflicts"] == []
    with pytest.raises(HostsEntriesError, match="source alias"):
        marker("bad alias")
