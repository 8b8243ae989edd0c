# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`up(brokers=N)`: how many brokers each cluster runs (apache only, kept with the directory), and the replication settings
Ambari stores for fewer than three, which the brokers then start with."""
from __future__ import annotations

import json

import pytest

from sandbox import ambari_seed, api, broker_config
from sandbox.ambari.cluster import Cluster as AmbariCluster
from sandbox.providers import ApacheProvider, NoidaProvider


def test_unset_takes_what_the_directory_started_with_else_the_provider_s():
    assert api._brokers_per_cluster(ApacheProvider(), None, None) == 3
    assert api._brokers_per_cluster(NoidaProvider(), None, None) == 1
    assert api._brokers_per_cluster(ApacheProvider(), None, {"dir": "/x", "brokers_per_cluster": 1}) == 1
    assert api._brokers_per_cluster(ApacheProvider(), 2, None) == 2


@pytest.mark.parametrize("provider, requested, existing, message", [
    (ApacheProvider(), 0, None, "--brokers must be 1 to 3"),
    (ApacheProvider(), 4, None, "--brokers must be 1 to 3"),
    (NoidaProvider(), 3, None, "provider noida runs 1 broker(s) per cluster"),
    (ApacheProvider(), 1, {"dir": "/lab", "brokers_per_cluster": 3}, "the sandbox in /lab runs 3 broker(s) per cluster"),
])
def test_a_count_the_lab_cannot_run_is_refused_naming_why(provider, requested, existing, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        api._brokers_per_cluster(provider, requested, existing)


def cluster_dir(tmp_path):
    directory = tmp_path / "primary"
    directory.mkdir()
    workers = [f"wn{k}" for k in range(3)]
    config = {"cluster_name": "primary", "username": "admin", "password": "pw", "state_file": str(directory / ambari_seed.STATE_FILE),
              "hosts": [{"host_name": name, "ip": f"127.9.1.{10 + k}", "components": ["KAFKA_BROKER"]} for k, name in enumerate(workers)]
              + [{"host_name": "zk0", "ip": "127.9.1.20", "components": ["ZOOKEEPER_SERVER"]}],
              "restart_commands": {name: ["true"] for name in workers}}
    (directory / "ambari.json").write_text(json.dumps(config))
    return directory


@pytest.mark.parametrize("brokers, expected", [
    (1, {"default.replication.factor": "1", "min.insync.replicas": "1", "offsets.topic.replication.factor": "1",
         "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1"}),
    (2, {"default.replication.factor": "2", "min.insync.replicas": "2", "offsets.topic.replication.factor": "2",
         "transaction.state.log.replication.factor": "2", "transaction.state.log.min.isr": "2"}),
])
def test_fewer_brokers_get_replication_settings_they_can_hold_in_ambari_and_the_brokers(tmp_path, brokers, expected):
    directory = cluster_dir(tmp_path)
    assert ambari_seed.fit_replication(directory, brokers) is True
    stored = AmbariCluster(json.loads((directory / "ambari.json").read_text()))
    desired = stored.desired_properties("kafka-broker")
    assert {key: desired[key] for key in expected} == expected
    assert desired["zookeeper.connect"] and desired["auto.create.topics.enable"] == "false", "the other HDInsight settings stay"
    assert not any(stored.state["stale"].values()), "the brokers first start with it: nothing stale"
    started_with = broker_config.load(directory)
    assert {key: started_with.properties[key] for key in expected} == expected
    assert ambari_seed.fit_replication(directory, brokers) is False, "a second call stores no new version"
