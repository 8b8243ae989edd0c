# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Version gates of the rendered MirrorMaker 2 keys, one per key, each against the release and the Kafka field it follows.

MirrorMaker 2 ignores a key newer than its release without a word, so every gate is checked on both sides: the last
release without the key refuses (or translates) it, the first release with it renders it.
"""
import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.keys import release, unread_keys
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import KafkaVersion
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_config import MM2_PROPERTIES_FILE, MirrorConfigError, build_config

ALIASES = {"primary", "secondary"}
FLOW = "primary->secondary."


def model(version, **overrides):
    base = {
        "kafka_version": version,
        "clusters": [{"alias": "primary", "bootstrap_servers": "127.0.1.10:9092", "broker_count": 1},
                     {"alias": "secondary", "bootstrap_servers": "127.0.2.10:9092", "broker_count": 1}],
        "flows": [{"source": "primary", "target": "secondary"}],
    }
    base.update(overrides)
    return base


def render(version, **overrides):
    config = build_config(model(version, **overrides))
    return config.files[MM2_PROPERTIES_FILE], config.warnings


def refused(version, **overrides):
    with pytest.raises(MirrorConfigError) as info:
        build_config(model(version, **overrides))
    return "\n".join(info.value.errors)


# (key, last release that ignores it, first release that reads it, the Kafka field that defines it)
GATES = [
    ("sync.group.offsets.enabled", "2.6.3", "2.7.0", "MirrorConnectorConfig.SYNC_GROUP_OFFSETS_ENABLED (KIP-545)"),
    ("sync.group.offsets.interval.seconds", "2.6.3", "2.7.0", "MirrorConnectorConfig.SYNC_GROUP_OFFSETS_INTERVAL_SECONDS (KIP-545)"),
    ("offset-syncs.topic.location", "2.8.2", "3.0.0", "MirrorConnectorConfig.OFFSET_SYNCS_TOPIC_LOCATION (KIP-716)"),
    ("exactly.once.support", "3.2.3", "3.3.0", "SourceConnectorConfig.EXACTLY_ONCE_SUPPORT_CONFIG (KIP-618)"),
    ("transaction.boundary", "3.2.3", "3.3.0", "SourceConnectorConfig.TRANSACTION_BOUNDARY_CONFIG (KIP-618)"),
    ("forwarding.admin.class", "3.3.2", "3.4.0", "MirrorClientConfig.FORWARDING_ADMIN_CLASS (KIP-787)"),
    ("dedicated.mode.enable.internal.rest", "3.4.1", "3.5.0", "MirrorMakerConfig.ENABLE_INTERNAL_REST_CONFIG (KIP-710)"),
    ("listeners", "3.4.1", "3.5.0", "MirrorMaker.java starts a REST server from 3.5 on (KIP-710)"),
    ("rest.advertised.host.name", "3.4.1", "3.5.0", "MirrorMaker.java starts a REST server from 3.5 on (KIP-710)"),
    ("exactly.once.source.support", "3.4.1", "3.5.0", "DistributedConfig.EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG in MirrorMaker (KIP-618, KIP-710)"),
    ("use.incremental.alter.configs", "3.4.1", "3.5.0", "MirrorSourceConfig.USE_INCREMENTAL_ALTER_CONFIGS (KIP-894)"),
    ("add.source.alias.to.metrics", "3.4.1", "3.5.0", "MirrorSourceConfig.ADD_SOURCE_ALIAS_TO_METRICS"),
    ("replication.policy.internal.topic.separator.enabled", "3.5.1", "3.5.2",
     "MirrorClientConfig.INTERNAL_TOPIC_SEPARATOR_ENABLED (KAFKA-15102)"),
    ("emit.offset-syncs.enabled", "3.8.1", "3.9.0", "MirrorConnectorConfig.EMIT_OFFSET_SYNCS_ENABLED"),
]


@pytest.mark.parametrize("key,ignored_by,read_by,field", GATES, ids=[gate[0] for gate in GATES])
def test_key_newer_than_the_release_is_refused_naming_key_and_release(key, ignored_by, read_by, field):
    message = refused(ignored_by, properties={key: "x"})
    assert "MirrorMaker 2 of Kafka %s ignores %r" % (ignored_by, key) in message, field
    assert "read from Kafka %s on" % release(KafkaVersion.parse(read_by)) in message, field
    assert unread_keys({key: "x"}, ALIASES, KafkaVersion.parse(ignored_by)) == [key], field
    props, _warnings = render(read_by, properties={key: "x"})
    assert props[key] == "x", field
    assert unread_keys(props, ALIASES, KafkaVersion.parse(read_by)) == [], field


@pytest.mark.parametrize("kind", ["topics", "groups", "config.properties"])
def test_exclude_keys_written_by_hand_become_blacklist_before_2_7(kind):
    """DefaultTopicFilter / DefaultGroupFilter / DefaultConfigPropertyFilter read only *.blacklist in 2.4-2.6; *.exclude from 2.7 (KIP-629)."""
    props, warnings = render("2.4.1", properties={FLOW + kind + ".exclude": "tmp.*"})
    assert props[FLOW + kind + ".blacklist"] == "tmp.*" and FLOW + kind + ".exclude" not in props
    assert any("%r is read from Kafka 2.7 on" % (kind + ".exclude") in w and "Kafka 2.4.1 reads %r" % (kind + ".blacklist") in w
               for w in warnings), warnings
    props, warnings = render("2.7.0", properties={FLOW + kind + ".exclude": "tmp.*"})
    assert props[FLOW + kind + ".exclude"] == "tmp.*" and not warnings


def test_model_excludes_use_the_2_4_keys_on_hdinsight_5():
    """HDInsight 5.0: MirrorMaker 2 of Kafka 2.4.1. The model's excludes must reach DefaultTopicFilter.TOPICS_BLACKLIST_CONFIG."""
    flows = [{"source": "primary", "target": "secondary", "topics_exclude": ["tmp.*"], "groups_exclude": ["test-.*"]}]
    props, warnings = render("2.4.1", flows=flows)
    assert props[FLOW + "topics.blacklist"] == "tmp.*" and props[FLOW + "groups.blacklist"] == "test-.*"
    assert not [key for key in props if key.endswith(".exclude")]
    assert unread_keys(props, ALIASES, KafkaVersion.parse("2.4.1")) == []
    assert not warnings
    newer, _warnings = render("2.7.0", flows=flows)
    assert newer[FLOW + "topics.exclude"] == "tmp.*" and FLOW + "topics.blacklist" not in newer


@pytest.mark.parametrize("option,value,feature", [
    ("flows", [{"source": "primary", "target": "secondary", "sync_group_offsets": True}], "sync_group_offsets"),
    ("offset_syncs_topic_location", "target", "offset_syncs_topic_location 'target'"),
    ("replication_policy", "identity", "replication_policy 'identity'"),
    ("dedicated_rest", True, "dedicated_rest"),
    ("exactly_once", True, "exactly_once"),
])
def test_model_feature_asked_for_on_2_4_1_fails_naming_feature_and_version(option, value, feature):
    message = refused("2.4.1", **{option: value})
    assert feature in message and "MirrorMaker runs Kafka 2.4.1" in message
    # One error per feature: the key it would need is not rendered, so it is not reported a second time.
    assert "would be rendered" not in message


def test_blacklist_keys_are_unread_from_4_0():
    """Kafka 4.0 removed the *.blacklist names (no 'blacklist' left in connect/mirror at 4.0.0-SNAPSHOT)."""
    assert unread_keys({FLOW + "topics.blacklist": "x", FLOW + "topics.exclude": "y"}, ALIASES, KafkaVersion.parse("4.0")) == [
        FLOW + "topics.blacklist"]
    assert unread_keys({FLOW + "topics.blacklist": "x"}, ALIASES, KafkaVersion.parse("3.9")) == []


def test_cluster_scoped_rest_keys_are_gated_like_top_level_ones():
    message = refused("3.4.1", clusters=[{"alias": "primary", "bootstrap_servers": "a:9092", "broker_count": 1,
                                          "properties": {"rest.advertised.port": 8083}},
                                         {"alias": "secondary", "bootstrap_servers": "b:9092", "broker_count": 1}])
    assert "ignores 'rest.advertised.port'" in message


@pytest.mark.parametrize("mirrormaker,broker,fails", [("4.0", "2.0", True), ("4.0", "2.1", False), ("3.9", "0.11", False),
                                                      ("2.4.1", "2.4", False)])
def test_cluster_version_from_apiversions_against_the_clients_of_mirrormaker(mirrormaker, broker, fails):
    """KIP-896: Kafka 4.0 clients dropped the protocol versions brokers before 2.1 speak; older clients talk to any 0.10+ broker."""
    facts = {"primary": {"kafka_version": broker}, "secondary": {"kafka_version": "3.9"}}
    if fails:
        message = refused(mirrormaker, cluster_facts=facts)
        assert "cluster primary: Kafka 4.0 clients" in message and "KIP-896" in message and "the cluster runs %s" % broker in message
    else:
        render(mirrormaker, cluster_facts=facts)


def test_unparsable_cluster_version_is_an_error():
    assert "cluster primary: kafka_version" in refused("3.9", cluster_facts={"primary": {"kafka_version": "unknown"}})


def test_kip_894_is_one_release_fact():
    """use.incremental.alter.configs (mm2_keys) and the config sync rule of copy_from (kafka_topic_copy) read the same fact."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka import topic_copy as kafka_topic_copy
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2 import keys as mm2_keys
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import INCREMENTAL_ALTER_CONFIGS_SINCE

    assert INCREMENTAL_ALTER_CONFIGS_SINCE == KafkaVersion(3, 5, 0)
    assert mm2_keys.KEYS_SINCE["use.incremental.alter.configs"][0] is INCREMENTAL_ALTER_CONFIGS_SINCE
    assert kafka_topic_copy.INCREMENTAL_ALTER_CONFIGS_SINCE is INCREMENTAL_ALTER_CONFIGS_SINCE
