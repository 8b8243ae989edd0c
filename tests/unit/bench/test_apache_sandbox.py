# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench.apache_sandbox's option parsing and its test of what the brokers advertise (no broker: the probe is replaced)."""
from __future__ import annotations

import pytest

from bench import apache_sandbox
from sandbox.probes import AdvertisedBroker


def test_releases_from_repeated_options():
    assert apache_sandbox.parse_releases(["primary=3.2.0", "secondary=3.9.2"]) == {"primary": "3.2.0", "secondary": "3.9.2"}
    assert apache_sandbox.parse_releases([]) == {}


@pytest.mark.parametrize("item", ["primary", "=3.2.0", "primary=", "3.2.0"])
def test_a_release_without_alias_or_version_is_refused(item):
    with pytest.raises(SystemExit, match="ALIAS=VERSION"):
        apache_sandbox.parse_releases([item])


CLUSTER = {"brokers": [{"host": "127.160.2.10", "port": 9092}, {"host": "127.160.2.11", "port": 9092}]}


@pytest.mark.parametrize("advertised, expected", [
    (["127.160.2.10", "127.160.2.11"], True),
    (["127.160.2.10", "wn1-second.example.internal.cloudapp.net"], False),  # one broker still on its FQDN
    ([], False),
])
def test_ip_advertising_is_every_broker_advertising_an_ip(monkeypatch, advertised, expected):
    brokers = [AdvertisedBroker(k, host, 9092) for k, host in enumerate(advertised)]
    monkeypatch.setattr(apache_sandbox.probes, "kafka_metadata", lambda host, port: brokers)
    assert apache_sandbox.advertises_ips(CLUSTER) is expected
