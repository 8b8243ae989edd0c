# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which broker an Ambari restart of a KAFKA_BROKER host restarts: the layout's restart_commands (every worker -> the
broker it runs on, for one-broker and three-broker clusters alike) and the emulator's executor (each broker once)."""
from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest

from sandbox import api
from sandbox.ambari.cluster import Cluster as AmbariCluster
from sandbox.ambari.executor import RequestExecutor
from sandbox.providers import ApacheProvider, NoidaProvider, TansuProvider
from sandbox.topology import build_topology


class FakeSupervisor:
    def ctl_command(self) -> list:
        return ["supervisorctl", "-c", "supervisord.conf"]


def ambari_json(tmp_path, provider, releases, brokers=None) -> dict:
    primary = build_topology(9)[0]
    layout = {"node_mode": "local", "isolate": False, "provider": provider, "kafka_version": "3.9", "releases": releases,
              "mirrormaker_node": None, "brokers": brokers or provider.brokers_per_cluster, "security": {}}
    api._cluster_layout(tmp_path, primary, provider.name, layout, "pw", FakeSupervisor())
    return json.loads((tmp_path / "clusters" / "primary" / "ambari.json").read_text())


@pytest.mark.parametrize("provider", [NoidaProvider(), TansuProvider()], ids=["noida", "tansu"])
def test_every_worker_of_a_one_broker_cluster_restarts_its_one_broker(tmp_path, provider):
    config = ambari_json(tmp_path, provider, {})
    workers = [h["host_name"] for h in config["hosts"] if "KAFKA_BROKER" in h["components"]]
    assert len(workers) == 3 and set(config["restart_commands"]) == set(workers)
    assert all(argv == ["supervisorctl", "-c", "supervisord.conf", "restart", "primary-broker"] for argv in config["restart_commands"].values())


def test_every_worker_of_an_apache_cluster_restarts_its_own_broker(tmp_path, monkeypatch):
    monkeypatch.setattr(ApacheProvider, "uses_zookeeper", lambda self, release: False)
    config = ambari_json(tmp_path, ApacheProvider(), {"primary": "3.9.2"})
    programs = {host.split("-", 1)[0]: argv[-1] for host, argv in config["restart_commands"].items()}
    assert programs == {"wn0": "primary-broker", "wn1": "primary-broker-1", "wn2": "primary-broker-2"}


def test_every_worker_of_a_one_broker_apache_cluster_restarts_its_one_broker(tmp_path, monkeypatch):
    monkeypatch.setattr(ApacheProvider, "uses_zookeeper", lambda self, release: False)
    config = ambari_json(tmp_path, ApacheProvider(), {"primary": "4.3.1"}, brokers=1)
    assert {argv[-1] for argv in config["restart_commands"].values()} == {"primary-broker"} and len(config["restart_commands"]) == 3


def hosts(count: int) -> list:
    return [{"host_name": f"wn{k}", "ip": f"127.9.9.{10 + k}", "components": ["KAFKA_BROKER"]} for k in range(count)] + [
        {"host_name": "zk0", "ip": "127.9.9.20", "components": ["ZOOKEEPER_SERVER"]}]


def restart(tmp_path, restart_commands: dict, named: list) -> list:
    """Run a restart request naming `named` through the executor; the brokers restarted, in order."""
    log = tmp_path / "restarted"
    commands = {host: [sys.executable, "-c", f"open({str(log)!r}, 'a').write({broker!r} + '\\n')"] for host, broker in restart_commands.items()}
    cluster = AmbariCluster({"cluster_name": "c", "hosts": hosts(3), "restart_commands": commands})
    request = cluster.create_restart_request({"RequestInfo": {"command": "RESTART"}, "Requests/resource_filters": [
        {"service_name": "KAFKA", "component_name": "KAFKA_BROKER", "hosts": ",".join(named)}]}, fail=False, delay_s=0)
    ok, _stdout, stderr = RequestExecutor._apply_to_broker(SimpleNamespace(cluster=cluster), request)
    assert ok, stderr
    return log.read_text().split()


def test_hosts_sharing_one_broker_restart_it_once_per_request(tmp_path):
    assert restart(tmp_path, {"wn0": "b0", "wn1": "b0", "wn2": "b0"}, ["wn0", "wn1", "wn2"]) == ["b0"]


def test_each_named_host_restarts_its_own_broker_in_order(tmp_path):
    assert restart(tmp_path, {"wn0": "b0", "wn1": "b1", "wn2": "b2"}, ["wn2", "wn0"]) == ["b2", "b0"]


@pytest.mark.parametrize("commands", [{"wn0": ["true"], "wn1": ["true"]}, {"wn0": ["true"], "wn1": ["true"], "wn2": ["true"], "zk0": ["true"]}],
                         ids=["a broker host without a command", "a command for a host without a broker"])
def test_restart_commands_name_exactly_the_broker_hosts(commands):
    with pytest.raises(ValueError, match="restart_commands must name exactly the KAFKA_BROKER hosts"):
        AmbariCluster({"cluster_name": "c", "hosts": hosts(3), "restart_commands": commands})
