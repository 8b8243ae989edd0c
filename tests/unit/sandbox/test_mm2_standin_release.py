# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MirrorMaker 2 stand-in plays the Kafka release of its home: keys that release does not read change nothing."""
from pathlib import Path

import pytest

from sandbox.mm2 import release
from sandbox.mm2.settings import SettingsError, load

PROPERTIES = """
clusters = primary, secondary
primary.bootstrap.servers = 127.0.1.10:9092
secondary.bootstrap.servers = 127.0.2.10:9092
primary->secondary.enabled = true
primary->secondary.topics = orders.*, tmp.*
"""
V2_4_1, V2_7, V3_0, V3_9, V4_0 = (2, 4, 1), (2, 7, 0), (3, 0, 0), (3, 9, 0), (4, 0, 0)


def forward(tmp_path: Path, extra: str, kafka_release):
    path = tmp_path / "mm2.properties"
    path.write_text(PROPERTIES + extra)
    return next(flow for flow in load(str(path), None, kafka_release).flows if flow.enabled)


@pytest.mark.parametrize("kind", ["topics", "groups"])
def test_2_4_1_reads_only_the_blacklist_spelling(tmp_path, kind):
    """DefaultTopicFilter / DefaultGroupFilter at 2.4.1 define only TOPICS_BLACKLIST_CONFIG / GROUPS_BLACKLIST_CONFIG."""
    def replicates(flow, name):
        return flow.topics.replicates(name) if kind == "topics" else flow.groups.replicates(name)

    exclude = "primary->secondary.%s.exclude = tmp.*\n" % kind
    blacklist = "primary->secondary.%s.blacklist = tmp.*\n" % kind
    names = "primary->secondary.groups = orders.*, tmp.*\n"
    assert replicates(forward(tmp_path, names + exclude, V2_4_1), "tmp.x"), "2.4.1 honoured %s.exclude" % kind
    assert not replicates(forward(tmp_path, names + blacklist, V2_4_1), "tmp.x")
    assert not replicates(forward(tmp_path, names + exclude, V2_7), "tmp.x")
    assert not replicates(forward(tmp_path, names + blacklist, V3_9), "tmp.x")  # deprecated alias until 4.0
    assert replicates(forward(tmp_path, names + blacklist, V4_0), "tmp.x"), "4.0 honoured the removed %s.blacklist" % kind


def test_sync_group_offsets_needs_2_7(tmp_path):
    """MirrorConnectorConfig.SYNC_GROUP_OFFSETS_ENABLED arrived in 2.7.0 (KIP-545)."""
    extra = "primary->secondary.sync.group.offsets.enabled = true\n"
    assert not forward(tmp_path, extra, V2_4_1).flag("sync.group.offsets.enabled")
    assert forward(tmp_path, extra, V2_7).flag("sync.group.offsets.enabled")


def test_offset_syncs_location_needs_3_0(tmp_path):
    """MirrorConnectorConfig.OFFSET_SYNCS_TOPIC_LOCATION arrived in 3.0.0 (KIP-716): 2.x keeps offset syncs on the source."""
    extra = "offset-syncs.topic.location = target\n"
    assert forward(tmp_path, extra, (2, 8, 2)).offset_syncs_cluster == "primary"
    assert forward(tmp_path, extra, V3_0).offset_syncs_cluster == "secondary"


def test_identity_policy_class_is_missing_before_3_0(tmp_path):
    extra = "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n"
    with pytest.raises(SettingsError, match="ClassNotFoundException"):
        forward(tmp_path, extra, V2_4_1)
    assert forward(tmp_path, extra, V3_0).policy.format_remote_topic("primary", "orders") == "orders"


def test_release_read_from_the_kafka_home_around_the_stand_in(tmp_path):
    home = tmp_path / "kafka-broker"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "connect-mirror-maker.sh").write_text("#!/bin/sh\n")
    module = home / "sandbox-stand-in" / "sandbox" / "mm2" / "release.py"
    module.parent.mkdir(parents=True)
    module.write_text("")
    assert release.kafka_home(module) == home
    assert release.detect(home) == release.DEFAULT_RELEASE  # no jar yet
    (home / "libs").mkdir()
    (home / "libs" / "kafka-clients-2.4.1.jar").touch()
    assert release.detect(home) == V2_4_1
    assert release.kafka_home(tmp_path / "elsewhere" / "release.py") is None
