"""Sandbox fixtures for integration tests (docs/development.md, "pytest fixtures").

`sandbox` (noida) and `sandbox_tansu` are session-scoped: each starts both clusters once on its own
address block (127.<net>.x.y and 127.<net + 1>.x.y), yields the state dict, and is stopped at the
end of the session even when tests fail.

Under pytest-xdist (`-n N --dist loadfile`, as `make test` runs them) every worker is a session of its
own: worker K uses net SANDBOX_NET + 2*K, so the workers' sandboxes never share an address. The
scheduler below keeps each test file on one worker (module fixtures are built once), keeps the
mirror_validation directory on one worker (its session fixtures start a Spark JVM and build the
scenario topics), and hands out the longest units first so that no long file starts last.
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


@pytest.fixture(scope="session")
def mirror_host_ready(tmp_path_factory):
    """`mirror_host_ready(state)`: the sandbox's MirrorMaker host gets the mirror_host role's virtualenv once per sandbox,
    as a first real run of playbooks/mirror.yml leaves it. The host is a node with only its system Python (ssh node mode),
    so a play that runs the collection's modules there starts with kafkaops.mirror.mirror_host (which switches the
    interpreter); prepared beforehand, that play counts only its own changes and can run in check mode."""
    from ansible_runner import run_playbook

    playbook = tmp_path_factory.mktemp("mirror-host") / "mirror_host.yml"
    playbook.write_text("- {name: MirrorMaker host, hosts: mirrormaker, gather_facts: false, roles: [kafkaops.mirror.mirror_host]}\n")
    prepared = set()

    def prepare(state: dict) -> None:
        if state["dir"] not in prepared:
            play = run_playbook(playbook, inventory=Path(state["dir"]) / "inventory.yml", timeout=900)
            assert not play.failed, play.stdout[-3000:]
            prepared.add(state["dir"])

    return prepare


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


# ---- xdist scheduling ------------------------------------------------------------------------------------------
# Rough seconds per unit on the 2-core CI machine (tests/integration, serial run with --durations); only the order
# in which units are handed out depends on them, so a stale figure costs time, never a test.
UNIT_WEIGHTS = {
    "tests/integration/mirror_validation": 330,
    "tests/integration/mirrormaker2/test_mirrormaker2_role.py": 230,
    "tests/integration/mirror/test_mirror_playbook_faults.py": 80,
    "tests/integration/sandbox/test_sandbox_lifecycle.py": 60,
    "tests/integration/kafka/test_kafka_topic_module.py": 80,
    "tests/integration/mirrormaker2/test_kafka_mirror_status.py": 50,
    "tests/integration/ambari/test_ambari_modules.py": 70,
    "tests/integration/preflight/test_preflight.py": 45,
    "tests/integration/hosts_sync/test_hosts_sync_role.py": 45,
    "tests/integration/failover/test_failover.py": 30,
    "tests/integration/failover/test_failover_mm2.py": 30,
    "tests/integration/connection/test_tls_connection.py": 60,
    "tests/integration/connection/test_connection_reaches_every_role.py": 30,
    "tests/integration/mirrormaker2/test_mirrormaker2_absent.py": 200,
    "tests/integration/mirror_host/test_mirror_host_role.py": 120,
    "tests/integration/mirrormaker2/test_mirrormaker2_accounts.py": 60,
    # each runs the whole mirror.yml on a sandbox of its own
    "tests/integration/molecule_docker/test_docker_scenario.py": 300,
    "tests/integration/mirrormaker2/test_kafka_versions.py": 250,
}
# Directories whose tests share session fixtures that are expensive to build twice.
SHARED_SESSION_DIRS = ("tests/integration/mirror_validation",)


def _unit_of(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    for directory in SHARED_SESSION_DIRS:
        if path.startswith(directory + "/"):
            return directory
    return path


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` for this suite: one file per unit, mirror_validation/ as one unit, longest units first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SuiteScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return _unit_of(nodeid)

        def schedule(self):
            # LoadScopeScheduling.schedule, with the work queue ordered by UNIT_WEIGHTS (longest first).
            assert self.collection_is_completed
            if self.collection is not None:
                for node in self.nodes:
                    self._reschedule(node)
                return
            if not self._check_nodes_have_same_collection():
                self.log("**Different tests collected, aborting run**")
                return
            self.collection = list(next(iter(self.registered_collections.values())))
            if not self.collection:
                return
            units = {}
            for nodeid in self.collection:
                units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            for unit in sorted(units, key=lambda unit: -UNIT_WEIGHTS.get(unit, 3 * len(units[unit]))):
                self.workqueue[unit] = units[unit]
            while len(self.nodes) > len(self.workqueue):  # more workers than units: the spare ones stop
                self.assigned_work.popitem()[0].shutdown()
            for node in self.nodes:
                self._assign_work_unit(node)

    return SuiteScheduling(config, log)
