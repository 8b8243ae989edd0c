# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sandbox fixtures for integration tests (docs/development.md, "pytest fixtures").

`sandbox` (noida) and `sandbox_tansu` are session-scoped: each starts both clusters once on its own
address block (127.<net>.x.y and 127.<net + 1>.x.y), yields the state dict, and is stopped at the
end of the session even when tests fail.

Under pytest-xdist (`-n N --dist loadfile`, as `make test` runs them) every worker is a session of its
own: worker K uses net SANDBOX_NET + 2*K, so the workers' sandboxes never share an address. Each test
file stays on one worker (module fixtures are built once); tests/run_suite.py hands the files out longest
first (as its previous run timed them) so that none of them starts last.
"""
from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import pytest

from sandbox import api, probes
from tests.support.real_lab import node_java8
from tests.support.sandbox_fixture import running_sandbox

NETS_PER_WORKER = 2  # noida on net, tansu on net + 1
# Molecule's sandbox (molecule/default/molecule.yml) and `make demo` (net 0) must never be reached by a worker's block.
RESERVED_NETS = {0, 5}


def worker_index() -> int:
    """0 without xdist; K for xdist worker gwK."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") else 0


@pytest.fixture(scope="session")
def sandbox_net() -> int:
    """The second octet of this worker's address block: $SANDBOX_NET (default 10) + 2 * xdist worker index; tansu uses the next one."""
    net = int(os.environ.get("SANDBOX_NET", "10")) + NETS_PER_WORKER * worker_index()
    if not 1 <= net <= 254 - NETS_PER_WORKER or RESERVED_NETS & {net, net + 1}:
        pytest.fail(f"SANDBOX_NET={os.environ.get('SANDBOX_NET', '10')} with worker {worker_index()} gives net {net}: "
                    f"outside 127.1-253.0.0 or on a reserved net {sorted(RESERVED_NETS)}")
    return net


def _sandbox(tmp_path_factory, provider: str, net: int):
    with running_sandbox(tmp_path_factory.mktemp(f"sandbox-{provider}"), f"sandbox ({provider}, net {net})", provider=provider, net=net) as state:
        yield state


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory, sandbox_net):
    """Both clusters on noida-db, net $SANDBOX_NET (default 10)."""
    yield from _sandbox(tmp_path_factory, "noida", sandbox_net)


@pytest.fixture(scope="session")
def sandbox_tansu(tmp_path_factory, sandbox_net):
    """Both clusters on tansu (advertises wn0's FQDN, like HDInsight), net $SANDBOX_NET + 1."""
    yield from _sandbox(tmp_path_factory, "tansu", sandbox_net + 1)


# The real-Kafka labs of a worker: on the worker's noida net, in third octets of their own.
APACHE_SUBNET = 40
SINGLE_BROKER_SUBNET = 50
APACHE_DOWN_TIMEOUT = 90


@pytest.fixture(scope="session")
def sandbox_apache(tmp_path_factory, sandbox_net):
    """Both clusters on real Apache Kafka (sandbox/kafka_dist.py): three brokers each, primary 2.4.1 with ZooKeeper
    (HDInsight 5.0), secondary 3.2.0 (HDInsight 5.1), MirrorMaker's home of 3.2.0, and Java 8 on MirrorMaker's node, which
    RealLab has MirrorMaker run on. One per worker, and every file that
    uses it runs on one worker (SHARED_LABS), so a test run starts it once; it stops after the last of them
    (pytest_runtest_teardown), not with the session."""
    with running_sandbox(tmp_path_factory.mktemp("sandbox-apache"), f"sandbox (apache, net {sandbox_net}, subnet {APACHE_SUBNET})",
                         down_timeout=APACHE_DOWN_TIMEOUT, provider="apache", net=sandbox_net, subnet=APACHE_SUBNET, timeout=600,
                         mirrormaker_java8=node_java8()) as state:
        _LABS["sandbox_apache"]["dir"] = state["dir"]
        yield state


@pytest.fixture(scope="session")
def sandbox_apache_single(tmp_path_factory, sandbox_net):
    """sandbox_apache's releases and MirrorMaker node with one broker per cluster, for the files that need real MirrorMaker 2
    (or 1) and no replication. A lab of its own: on sandbox_apache they made the worker that runs every file there the run's longest
    (2026-11-29: 2,321 s of a 2,545 s integration stage before this lab, more with the alerts test), while five JVMs cost
    little beside it. Secure (sandbox/lab_security.py): SCRAM, mTLS and SASL_SSL listeners and an ACL authorizer next to the
    PLAINTEXT listener the other files use unchanged (its ANONYMOUS principal is a super user), for test_secure_mirror.py."""
    with running_sandbox(tmp_path_factory.mktemp("sandbox-apache-single"),
                         f"sandbox (apache, one broker per cluster, net {sandbox_net}, subnet {SINGLE_BROKER_SUBNET})",
                         down_timeout=APACHE_DOWN_TIMEOUT, provider="apache", net=sandbox_net, subnet=SINGLE_BROKER_SUBNET, brokers=1,
                         timeout=600, mirrormaker_java8=node_java8(), secure=True) as state:
        _LABS["sandbox_apache_single"]["dir"] = state["dir"]
        yield state


# The test files on each shared real-Kafka lab (by its fixture): pytest-xdist hands a lab's files to one worker together (one
# lab per run, not one per worker). pytest_collection_modifyitems refuses a test on a lab in a file missing here.
SHARED_LABS = {
    "sandbox_apache": (
        "tests/integration/real_kafka/test_real_kafka.py",
        "tests/integration/kafka/test_kafka_info_modules.py",
        "tests/integration/kafka/test_kafka_topic_module.py",
        "tests/integration/kafka/test_kafka_topics_role.py",
    ),
    "sandbox_apache_single": (
        "tests/integration/real_kafka/test_kerberos_mirror.py",
        "tests/integration/real_kafka/test_large_backlog.py",
        "tests/integration/real_kafka/test_mirror_alerts.py",
        "tests/integration/real_kafka/test_mirrormaker1.py",
        "tests/integration/real_kafka/test_secure_mirror.py",
    ),
}
# Per lab of this worker: its directory once it started ("dir"), how many of the run's tests on it ended ("ended") and there
# are ("tests").
_LABS = {fixture: {"ended": 0} for fixture in SHARED_LABS}


def lab_of(item) -> str | None:
    """The shared lab a test runs on: asked for as a fixture, or (a provider parameter that picks its fixture at run time) by
    the real_kafka mark, which means sandbox_apache."""
    for fixture in SHARED_LABS:
        if fixture in item.fixturenames:
            return fixture
    return "sandbox_apache" if item.get_closest_marker("real_kafka") is not None else None


def pytest_collection_modifyitems(config, items):
    for fixture, files in SHARED_LABS.items():
        on_lab = {item.path.relative_to(config.rootpath).as_posix() for item in items if lab_of(item) == fixture}
        unlisted = sorted(on_lab - set(files))
        if unlisted:
            raise pytest.UsageError(f"{unlisted} run tests on {fixture}: list them in SHARED_LABS (tests/integration/conftest.py)")


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """A shared real-Kafka lab goes down once the run's last test on it has ended, rather than with the worker's session: the
    worker goes on with other files meanwhile (2026-11-29: for 260 s), and the lab's JVMs and its MirrorMakers used about a
    fifth of a core doing nothing. Every test on a lab runs on one worker (one scheduling unit), so the count of those that
    ended reaches the run's number of them here and only here; the fixture's own teardown then finds nothing running."""
    fixture = lab_of(item)
    if fixture is None:
        return
    lab = _LABS[fixture]
    lab["ended"] += 1
    # The run's number of them, counted once: the items are final (deselected ones gone) by the first test's end.
    total = lab.setdefault("tests", sum(lab_of(other) == fixture for other in item.session.items))
    if "dir" in lab and lab["ended"] == total:
        api.down(lab.pop("dir"), timeout=APACHE_DOWN_TIMEOUT)


def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, except that each shared lab's files (SHARED_LABS) are one unit. (xdist_group marks did not reach xdist
    3.8.0's loadgroup scheduling here: a file's tests were spread over every worker.)"""
    from xdist.scheduler import LoadFileScheduling

    unit = {path: fixture for fixture, files in SHARED_LABS.items() for path in files}

    class SharedLabsTogether(LoadFileScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return unit.get(path, path)

    return SharedLabsTogether(config, log)


@pytest.fixture(scope="session")
def mirror_host_ready(tmp_path_factory):
    """`mirror_host_ready(state)`: the sandbox's MirrorMaker host gets the mirror_host role's virtualenv once per sandbox,
    as a first real run of playbooks/mirror.yml leaves it. The host is a node with only its system Python (ssh node mode),
    so a play that runs the collection's modules there starts with kafkaops.mirror.mirror_host (which switches the
    interpreter); prepared beforehand, that play counts only its own changes and can run in check mode."""
    from tests.support.ansible_play import run_playbook

    playbook = tmp_path_factory.mktemp("mirror-host") / "mirror_host.yml"
    playbook.write_text("- {name: MirrorMaker host, hosts: mirrormaker, gather_facts: false, roles: [kafkaops.mirror.mirror_host]}\n")
    prepared = set()

    def prepare(state: dict) -> None:
        if state["dir"] not in prepared:
            play = run_playbook(playbook, inventory=Path(state["dir"]) / "inventory.yml", timeout=900)
            assert not play.failed, play.stdout[-3000:]
            prepared.add(state["dir"])

    return prepare


@pytest.fixture(scope="session")
def source_names_synced():
    """`source_names_synced(state)`: mirror.yml's hosts_sync stage, once per sandbox, so that the secondary's nodes resolve the
    primary's advertised FQDNs, as they do in a real mirror before kafka_topics copies from the source. Real brokers
    advertise FQDNs (HDInsight's stock setting)."""
    from tests.support.ansible_play import run_playbook
    from tests.support.checkout import REPO

    synced = set()

    def sync(state: dict) -> None:
        if state["dir"] not in synced:
            play = run_playbook(REPO / "playbooks" / "mirror.yml", inventory=Path(state["dir"]) / "inventory.yml", tags="hosts_sync")
            assert not play.failed, play.stdout[-3000:]
            synced.add(state["dir"])

    return sync


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
