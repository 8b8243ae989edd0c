"""Sandbox fixtures for integration tests (docs/development.md, "pytest fixtures").

`sandbox` (noida) and `sandbox_tansu` are session-scoped: each starts both clusters once on its own
address block (127.<SANDBOX_NET>.x.y and 127.<SANDBOX_NET + 1>.x.y), yields the state dict, and is
stopped at the end of the session even when tests fail.
"""
from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sandbox import api, probes  # noqa: E402


@pytest.fixture(scope="session")
def sandbox_net() -> int:
    """The second octet of this test run's address block ($SANDBOX_NET, default 10); tansu uses the next one."""
    return int(os.environ.get("SANDBOX_NET", "10"))


def _sandbox(tmp_path_factory, provider: str, net: int):
    directory = tmp_path_factory.mktemp(f"sandbox-{provider}")
    try:
        state = api.up(directory, provider=provider, net=net)
    except api.SandboxError as exc:
        pytest.fail(f"sandbox ({provider}, net {net}) did not start: {exc}")
    try:
        yield state
    finally:
        api.down(directory)


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory, sandbox_net):
    """Both clusters on noida-db, net $SANDBOX_NET (default 10)."""
    yield from _sandbox(tmp_path_factory, "noida", sandbox_net)


@pytest.fixture(scope="session")
def sandbox_tansu(tmp_path_factory, sandbox_net):
    """Both clusters on tansu (advertises wn0's FQDN, like HDInsight), net $SANDBOX_NET + 1."""
    yield from _sandbox(tmp_path_factory, "tansu", sandbox_net + 1)


def advertised_brokers(state: dict, alias: str) -> list:
    """What the cluster's broker advertises right now (host, port), read without resolving any name."""
    broker = state["clusters"][alias]["brokers"][0]
    return [(b.host, b.port) for b in probes.kafka_metadata(broker["host"], broker["port"])]


def make_kafka_admin(state: dict, alias: str, **kwargs):
    """An independent kafka-python admin client for one sandbox cluster; close it when done.

    Only for brokers that advertise an IP address: a client connects to the advertised host, and a
    sandbox FQDN looked up outside a node's namespace would go to this machine's DNS server, which
    is not on 127.0.0.0/8. For an FQDN-advertising tansu broker, run the client under a node's
    `python` (state["clusters"][alias]["nodes"][i]["python"]) instead.
    """
    from kafka import KafkaAdminClient

    cluster = state["clusters"][alias]
    for host, _port in advertised_brokers(state, alias):
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise RuntimeError(f"{alias} advertises {host!r}, which only the cluster's nodes can resolve: "
                               f"use a node's python, or turn on IP advertising") from None
    options = {"bootstrap_servers": cluster["bootstrap_servers"], "request_timeout_ms": 10000, "client_id": "sandbox-test-admin"}
    if state["provider"] == "noida":
        # Quirk (noida-db 0.2.3 + kafka-python 3.0.12): describe_cluster raises KeyError 'endpoint_type'
        # on DescribeCluster v0; with api_version pinned to (2, 7) the client uses Metadata instead.
        options["api_version"] = (2, 7)
    options.update(kwargs)
    return KafkaAdminClient(**options)


@pytest.fixture
def kafka_admin():
    """`kafka_admin(state, alias, **options)` -> KafkaAdminClient; every client made is closed after the test."""
    clients = []

    def make(state: dict, alias: str, **kwargs):
        clients.append(make_kafka_admin(state, alias, **kwargs))
        return clients[-1]

    yield make
    for client in clients:
        client.close()
