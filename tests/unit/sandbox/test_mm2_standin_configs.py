# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Remote topic configs as the stand-in's MirrorSourceConnector sets them, version by version (recorded describe
results in a fake admin; expected operations worked out from MirrorSourceConnector's source)."""
from pathlib import Path

from sandbox.mm2.settings import load
from sandbox.mm2.topic_configs import TopicConfigSync

PROPERTIES = """
clusters = primary, secondary
primary.bootstrap.servers = 127.0.1.10:9092
secondary.bootstrap.servers = 127.0.2.10:9092
primary->secondary.enabled = true
"""
SOURCE_ORDERS = {
    "retention.ms": {"value": "3600000", "config_source": "DYNAMIC_TOPIC_CONFIG", "read_only": False, "is_sensitive": False},
    "min.insync.replicas": {"value": "2", "config_source": "DYNAMIC_TOPIC_CONFIG", "read_only": False, "is_sensitive": False},
    "cleanup.policy": {"value": "delete", "config_source": "DEFAULT_CONFIG", "read_only": False, "is_sensitive": False},
}
REMOTE_ORDERS = {
    "retention.ms": {"value": "60000", "config_source": "DYNAMIC_TOPIC_CONFIG", "read_only": False, "is_sensitive": False},
    "max.message.bytes": {"value": "2000000", "config_source": "DYNAMIC_TOPIC_CONFIG", "read_only": False, "is_sensitive": False},
    "min.insync.replicas": {"value": "1", "config_source": "DYNAMIC_TOPIC_CONFIG", "read_only": False, "is_sensitive": False},
}


class FakeAdmin:
    def __init__(self, described):
        self.described, self.altered = described, []

    def describe_configs(self, resources, config_filter):
        assert config_filter == "all"
        return {"topic": {r.name: self.described[r.name] for r in resources}}

    def alter_configs(self, resources, raise_on_unknown, incremental):
        assert incremental
        self.altered.extend((r.name, dict(r.configs)) for r in resources)
        return {"topic": {r.name: "OK" for r in resources}}


class FakeCluster:
    def __init__(self, described):
        self._admin = FakeAdmin(described)

    def admin(self):
        return self._admin


def configs(tmp_path: Path, release, extra=""):
    path = tmp_path / "mm2.properties"
    path.write_text(PROPERTIES + extra)
    flow = next(f for f in load(str(path), None, release).flows if f.enabled)
    source, target = FakeCluster({"orders": SOURCE_ORDERS}), FakeCluster({"primary.orders": REMOTE_ORDERS})
    return TopicConfigSync(flow, source, target), target.admin()


def test_configs_at_creation_by_release(tmp_path):
    """createTopicPartitions (< 2.8): NewTopic without configs; createNewTopics 2.8 - 3.1: configToMap of the whole
    description; 3.1.1+: configToMap(targetConfig(...)), i.e. non-default and not in config.properties.exclude
    (min.insync.replicas is in DefaultConfigPropertyFilter's default exclude list)."""
    assert configs(tmp_path, (2, 7, 0))[0].for_new_topic("orders") == {}
    assert configs(tmp_path, (3, 1, 0))[0].for_new_topic("orders") == {"retention.ms": "3600000", "min.insync.replicas": "2",
                                                                       "cleanup.policy": "delete"}
    assert configs(tmp_path, (3, 1, 1))[0].for_new_topic("orders") == {"retention.ms": "3600000"}


def test_periodic_sync_replaces_the_remote_set_before_3_5(tmp_path):
    """updateTopicConfigs (< 3.5, deprecated AlterConfigs; 3.5+ with use.incremental.alter.configs=never): the remote keeps
    only the synced set, so its own overrides go, min.insync.replicas included although it is never copied."""
    for release, extra in (((3, 4, 1), ""), ((3, 9, 0), "use.incremental.alter.configs = never\n")):
        sync, target = configs(tmp_path, release, extra)
        sync.sync({"orders"})
        assert target.altered == [("primary.orders", {"retention.ms": ("SET", "3600000"), "max.message.bytes": ("DELETE", None),
                                                      "min.insync.replicas": ("DELETE", None)})], release


def test_periodic_sync_is_incremental_from_3_5(tmp_path):
    """incrementalAlterConfigs (3.5+): SET what the source sets, DELETE what is a default there; other remote overrides stay."""
    sync, target = configs(tmp_path, (3, 9, 0))
    sync.sync({"orders"})
    assert target.altered == [("primary.orders", {"retention.ms": ("SET", "3600000"), "cleanup.policy": ("DELETE", None)})]
