# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirrormaker2 model -> MirrorMaker properties: rendering, validation, version gates."""
import re

import pytest

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_config import (
    MM1_CONSUMER_FILE,
    MM1_PRODUCER_FILE,
    MM2_PROPERTIES_FILE,
    MirrorConfigError,
    build_config,
)
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_properties import parse, render


def model(**overrides):
    base = {
        "kafka_version": "3.9",
        "clusters": [
            {"alias": "primary", "bootstrap_servers": "127.0.1.10:9092", "broker_count": 1},
            {"alias": "secondary", "bootstrap_servers": ["127.0.2.10:9092", "127.0.2.11:9092"], "broker_count": 5, "min_insync_replicas": 2},
        ],
        "flows": [{"source": "primary", "target": "secondary", "topics": ["orders.*", "payments"], "topics_exclude": ["tmp.*"]}],
    }
    base.update(overrides)
    return base


def props(**overrides):
    return build_config(model(**overrides)).files[MM2_PROPERTIES_FILE]


def errors_of(**overrides):
    with pytest.raises(MirrorConfigError) as info:
        build_config(model(**overrides))
    assert "nothing was changed" in str(info.value)
    return "\n".join(info.value.errors)


def test_basic_flow_renders_mm2_keys():
    p = props()
    assert p["clusters"] == "primary,secondary"
    assert p["secondary.bootstrap.servers"] == "127.0.2.10:9092,127.0.2.11:9092"
    assert p["primary->secondary.enabled"] is True
    assert p["primary->secondary.topics"] == "orders.*,payments"
    assert p["primary->secondary.topics.exclude"] == "tmp.*"
    assert p["replication.policy.class"].endswith("DefaultReplicationPolicy")
    assert p["replication.policy.separator"] == "."
    assert "primary->secondary.sync.group.offsets.enabled" not in p


def test_auto_replication_factor_is_min_three_and_brokers_per_cluster():
    p = props()
    assert p["primary->secondary.replication.factor"] == 3  # secondary has 5 brokers
    assert p["primary->secondary.checkpoints.topic.replication.factor"] == 3
    assert p["primary->secondary.offset-syncs.topic.replication.factor"] == 1  # offset-syncs live on the 1-broker source
    assert p["secondary.offset.storage.replication.factor"] == 3
    # The herder secondary->primary runs for heartbeats although no flow goes that way: sized for primary too.
    assert p["primary.offset.storage.replication.factor"] == 1
    assert p["secondary->primary.heartbeats.topic.replication.factor"] == 1


def test_replication_factor_below_min_insync_fails_like_preflight():
    """One severity (_mm2.findings): acks=all writes to a topic with fewer replicas than min.insync.replicas all fail."""
    assert ("cluster secondary: internal_replication_factor is 1, below min.insync.replicas 2: MirrorMaker writes with acks=all and "
            "they fail (NotEnoughReplicas). Fix: raise internal_replication_factor to at least 2") in errors_of(internal_replication_factor=1)


def test_replication_factor_equal_to_min_insync_warns_once():
    config = build_config(model(replication_factor=2))
    assert [w for w in config.warnings if "equals min.insync.replicas 2" in w] == [
        "cluster secondary: replication_factor (remote topics) equals min.insync.replicas 2: with one replica down MirrorMaker's writes stop."]


def test_replication_factor_above_broker_count_fails():
    assert "more than the 1 broker(s) of cluster primary" in errors_of(internal_replication_factor=2)


def test_auto_without_broker_count_fails_with_fix():
    clusters = [{"alias": "primary", "bootstrap_servers": "a:9092"}, {"alias": "secondary", "bootstrap_servers": "b:9092"}]
    assert "set broker_count on the cluster" in errors_of(clusters=clusters)


def test_rendering_is_sorted_and_deterministic():
    first, second = render(props()), render(props())
    assert first == second
    keys = [line.split("=", 1)[0] for line in first.splitlines() if not line.startswith("#")]
    assert keys == sorted(keys)
    assert parse(first)["primary->secondary.enabled"] == "true"


def test_properties_round_trip_escapes():
    original = {"a.jaas": 'org.Module required username="u" password="p\\q";', "b": " leading", "c:d": "x=y"}
    assert parse(render(original)) == {k: str(v) for k, v in original.items()}


def test_identity_policy_both_ways_refused_with_reason():
    flows = [{"source": "primary", "target": "secondary"}, {"source": "secondary", "target": "primary"}]
    message = errors_of(replication_policy="identity", flows=flows)
    assert "replication loop" in message and "Use replication_policy 'default'" in message


def test_identity_one_way_and_default_both_ways_are_fine():
    assert props(replication_policy="identity")["replication.policy.class"].endswith("IdentityReplicationPolicy")
    both = props(flows=[{"source": "primary", "target": "secondary"}, {"source": "secondary", "target": "primary"}])
    assert both["secondary->primary.enabled"] is True


def test_identity_needs_kafka_3():
    assert "needs Kafka 3.0 or later" in errors_of(replication_policy="identity", kafka_version="2.8")


def test_unknown_flow_alias_fails():
    message = errors_of(flows=[{"source": "primary", "target": "tertiary"}])
    assert "target 'tertiary' is not a cluster alias; known aliases: primary, secondary" in message


def test_all_errors_reported_at_once():
    message = errors_of(flows=[{"source": "nope", "target": "secondary"}], properties={"task.max": 4}, kafka_version="x")
    assert "source 'nope'" in message and "task.max" in message and "kafka_version" in message


@pytest.mark.parametrize(
    "key,right",
    [
        ("task.max", "'tasks.max'"),
        ("primary->secondary.topic.blacklist", "'topics.exclude'"),
        ("sync.topics.configs.enabled", "'sync.topic.configs.enabled'"),
        ("Replication.factor", "'replication.factor'"),
        ("producer.Acks", "'producer.acks'"),
    ],
)
def test_silently_ignored_keys_rejected_with_right_spelling(key, right):
    assert right in errors_of(properties={key: "1"})


def test_topic_blacklist_suggests_old_spelling_on_2_4():
    assert "'topics.blacklist'" in errors_of(properties={"topic.blacklist": "x"}, kafka_version="2.4")


def test_blacklist_translated_on_new_versions_kept_on_2_4():
    config = build_config(model(properties={"primary->secondary.topics.blacklist": "tmp.*"}, flows=[{"source": "primary", "target": "secondary"}]))
    assert config.files[MM2_PROPERTIES_FILE]["primary->secondary.topics.exclude"] == "tmp.*"
    assert any("deprecated since Kafka 2.7" in w for w in config.warnings)
    old = build_config(model(kafka_version="2.4.1", properties={"groups.blacklist": "tmp.*"}))
    old_props = old.files[MM2_PROPERTIES_FILE]
    assert old_props["groups.blacklist"] == "tmp.*" and "groups.exclude" not in old_props
    assert old_props["primary->secondary.topics.blacklist"] == "tmp.*"  # the model's topics_exclude, 2.4 spelling
    assert not old.warnings


def test_whitelist_rendered_as_include_list():
    config = build_config(model(properties={"primary->secondary.topics.whitelist": "a|b"}))
    assert config.files[MM2_PROPERTIES_FILE]["primary->secondary.topics"] == "a|b"
    assert any("the include list" in w for w in config.warnings)


def test_unknown_key_warned_with_suggestion_and_rendered():
    config = build_config(model(properties={"emit.checkpoints.intervall.seconds": 5}))
    assert config.files[MM2_PROPERTIES_FILE]["emit.checkpoints.intervall.seconds"] == 5
    assert any("did you mean 'emit.checkpoints.interval.seconds'" in w for w in config.warnings)


def test_cluster_properties_are_scoped_and_checked():
    clusters = model()["clusters"]
    clusters[0] = dict(clusters[0], properties={"request.timeout.ms": 5000, "Security.protocol": "SSL"})
    message = errors_of(clusters=clusters)
    assert "'security.protocol'" in message


def test_sync_group_offsets_needs_2_7():
    flows = [{"source": "primary", "target": "secondary", "sync_group_offsets": True}]
    assert "needs Kafka 2.7" in errors_of(flows=flows, kafka_version="2.4")
    assert props(flows=flows)["primary->secondary.sync.group.offsets.enabled"] is True


def test_exactly_once_and_rest_gated_on_3_5():
    p = props(exactly_once=True)
    assert p["secondary.exactly.once.source.support"] == "enabled"
    assert p["dedicated.mode.enable.internal.rest"] is True
    assert "needs Kafka 3.5" in errors_of(exactly_once=True, kafka_version="3.4")
    assert "needs Kafka 3.5" in errors_of(dedicated_rest=True, kafka_version="3.0")
    assert "dedicated.mode.enable.internal.rest" not in props()


def test_secrets_marked():
    clusters = model()["clusters"]
    clusters[0] = dict(clusters[0], security_protocol="SASL_SSL", sasl_mechanism="PLAIN",
                       sasl_jaas_config='org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3cret";',
                       ssl_truststore_password="trust")
    config = build_config(model(clusters=clusters))
    assert config.secret_keys == {"primary.sasl.jaas.config", "primary.ssl.truststore.password"}
    assert config.files[MM2_PROPERTIES_FILE]["primary.security.protocol"] == "SASL_SSL"
    assert not build_config(model()).has_secrets


def test_disabled_flow_keeps_heartbeats_only():
    p = props(flows=[{"source": "primary", "target": "secondary"}, {"source": "secondary", "target": "primary", "enabled": False}])
    assert p["secondary->primary.enabled"] is False
    assert "secondary->primary.topics" not in p
    assert p["secondary->primary.heartbeats.topic.replication.factor"] == 1
    silent = props(flows=[{"source": "primary", "target": "secondary"},
                          {"source": "secondary", "target": "primary", "enabled": False, "emit_heartbeats": False}])
    assert "secondary->primary.heartbeats.topic.replication.factor" not in silent


def test_mm1_engine_for_old_clusters():
    config = build_config(model(engine="mm1", kafka_version="2.3", mm1_num_streams=4))
    assert config.files[MM1_CONSUMER_FILE]["bootstrap.servers"] == "127.0.1.10:9092"
    assert config.files[MM1_CONSUMER_FILE]["group.id"] == "mirrormaker1"
    # New source topics are subscribed at the flow's topic refresh (60 s by default), not the consumer's default 5 minutes.
    assert config.files[MM1_CONSUMER_FILE]["metadata.max.age.ms"] == 60000
    assert config.files[MM1_PRODUCER_FILE]["bootstrap.servers"] == "127.0.2.10:9092,127.0.2.11:9092"
    assert config.command_args[2:] == ["--num.streams", "4", "--offset.commit.interval.ms", "10000"]


def mm1_included(config, topics):
    """The topics MirrorMaker 1 mirrors under the rendered --whitelist (Pattern.matches: the whole name; Python's re has the
    same lookahead and group syntax)."""
    assert config.command_args[0] == "--whitelist"
    return [topic for topic in topics if re.fullmatch(config.command_args[1], topic)]


TOPICS = ["orders", "orders-eu", "payments", "payments-eu", "ops.internal", "orders-eu.replica", "__consumer_offsets", ".hidden"]


@pytest.mark.parametrize("topics", [["orders.*", "payments"], ["orders.*, payments"], "orders.*,payments", ["orders.*  ,payments", " "]])
def test_mm1_whitelist_splits_patterns_with_the_one_comma_rule(topics):
    """_mm2.patterns' rule (ConfigDef LIST, blanks around commas ignored): `a, b` is two patterns, never `a` and ` b`. Internal
    topics and MirrorMaker 2's default exclusions stay out, as they do of what the health read counts."""
    flows = [{"source": "primary", "target": "secondary", "topics": topics}]
    config = build_config(model(engine="mm1", kafka_version="2.3", flows=flows))
    assert mm1_included(config, TOPICS) == ["orders", "orders-eu", "payments"]
    assert " " not in config.command_args[1] and "," not in config.command_args[1]  # TopicFilter rewrites both


def test_mm1_whitelist_leaves_out_topics_exclude():
    flows = [{"source": "primary", "target": "secondary", "topics": [".*"], "topics_exclude": ["orders-.*", "pay.*-eu"]}]
    config = build_config(model(engine="mm1", kafka_version="2.3", flows=flows))
    # topics_exclude replaces MirrorMaker 2's default list; internal topics stay out regardless.
    assert mm1_included(config, TOPICS) == ["orders", "payments"]
    assert "$" not in config.command_args[1] and "\\" not in config.command_args[1]


def test_mm1_refuses_white_space_in_a_pattern():
    flows = [{"source": "primary", "target": "secondary", "topics": ["orders [a-z]+"]}]
    assert "has white space, which MirrorMaker 1 removes from its include list" in errors_of(engine="mm1", kafka_version="2.3", flows=flows)


def test_mm1_needs_one_flow_and_pre_4():
    two = [{"source": "primary", "target": "secondary"}, {"source": "secondary", "target": "primary"}]
    assert "exactly one enabled flow" in errors_of(engine="mm1", kafka_version="2.3", flows=two)
    assert "removed in Kafka 4.0; run it from a Kafka home of 3.9 or older, or use engine mm2 with replication_policy identity" in errors_of(
        engine="mm1", kafka_version="4.0")


def test_mm2_needs_2_4():
    assert "needs Kafka 2.4 or later" in errors_of(kafka_version="2.3")


def test_discovered_facts_fill_in_and_model_wins():
    clusters = [{"alias": "primary", "bootstrap_servers": "a:9092"}, {"alias": "secondary", "bootstrap_servers": "b:9092", "broker_count": 2}]
    facts = {"primary": {"broker_count": 4}, "secondary": {"broker_count": 9, "min_insync_replicas": 2}}
    config = build_config(model(clusters=clusters, cluster_facts=facts))
    p = config.files[MM2_PROPERTIES_FILE]
    assert p["primary->secondary.offset-syncs.topic.replication.factor"] == 3  # primary: min(3, 4 discovered)
    assert p["primary->secondary.replication.factor"] == 2  # secondary: the model's broker_count 2 beats the discovered 9
    assert any("equals min.insync.replicas 2" in w for w in config.warnings)  # the discovered min.insync.replicas is used
    facts["secondary"]["min_insync_replicas"] = 3
    assert "below min.insync.replicas 3" in errors_of(clusters=clusters, cluster_facts=facts)


def test_redacted_config_hides_secret_values_only():
    clusters = model()["clusters"]
    clusters[0] = dict(clusters[0], sasl_jaas_config="secret-jaas")
    config = build_config(model(clusters=clusters, properties={"primary.ssl.key.password": "secret-key"}))
    shown = config.redacted().files[MM2_PROPERTIES_FILE]
    assert shown["primary.sasl.jaas.config"] == "VALUE_REDACTED" and shown["primary.ssl.key.password"] == "VALUE_REDACTED"
    assert "secret" not in render(shown)
    assert config.files[MM2_PROPERTIES_FILE]["primary.sasl.jaas.config"] == "secret-jaas"


def test_override_warning_never_shows_values():
    config = build_config(model(properties={"primary->secondary.replication.factor": 2}))
    assert any("overrides the value the model derived" in w for w in config.warnings)
    assert not any("2" == w[-1] for w in config.warnings)


def test_unknown_model_keys_are_errors_not_ignored():
    message = errors_of(flows=[{"source": "primary", "target": "secondary", "topic": ["x"]}],
                        clusters=[{"alias": "primary", "bootstrap_servers": "a:1", "broker_count": 1, "sasl_jaas": "x"},
                                  {"alias": "secondary", "bootstrap_servers": "b:1", "broker_count": 1}])
    assert "unknown key(s) topic" in message and "unknown key(s) sasl_jaas" in message


def test_replication_factor_must_be_auto_or_a_number():
    assert "must be 'auto' or a number, got 'three'" in errors_of(replication_factor="three")


def test_identity_policy_renders_the_separator_it_reads():
    """IdentityReplicationPolicy.configure calls DefaultReplicationPolicy.configure (replication.policy.separator)."""
    p = props(replication_policy="identity", replication_policy_separator="_")
    assert p["replication.policy.class"].endswith("IdentityReplicationPolicy") and p["replication.policy.separator"] == "_"


def test_policy_classes_are_the_vocabularys_policies():
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import POLICIES
    from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_config import POLICY_CLASSES

    assert sorted(POLICY_CLASSES) == sorted(POLICIES)


FEATURE_SETTINGS = {
    "sync_group_offsets": {"flows": [{"source": "primary", "target": "secondary", "sync_group_offsets": True}]},
    "identity_policy": {"replication_policy": "identity"},
    "offset_syncs_location": {"offset_syncs_topic_location": "target"},
    "dedicated_rest": {"dedicated_rest": True},
    "exactly_once": {"exactly_once": True},
}


@pytest.mark.parametrize("feature", sorted(FEATURE_SETTINGS))
def test_required_features_are_the_ones_build_config_gates(feature):
    """required_features (what preflight checks on the target) names exactly what build_config refuses on an older release."""
    from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_config import required_features
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import FEATURES

    settings = FEATURE_SETTINGS[feature]
    assert feature in required_features(model(**settings))
    assert feature not in required_features(model())
    since, kip = FEATURES[feature]
    older = "%d.%d" % (since.major, since.minor - 1) if since.minor else "%d.9" % (since.major - 1)
    assert kip in errors_of(kafka_version=older, **settings)


def test_required_features_of_the_default_model_and_of_mm1():
    from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_config import required_features

    assert required_features(model()) == ["mm2"]
    assert required_features(model(engine="mm1", replication_policy="identity")) == []
    assert required_features(model(exactly_once=True)) == ["mm2", "dedicated_rest", "exactly_once"]


@pytest.mark.parametrize("kafka_version", ["2.4.1", "3.2.0", "3.9.2", "4.3.1"])
def test_the_rendered_producers_keep_acks_all(kafka_version):
    """Connect's default for MirrorMaker 2's producers is acks=all, so the properties leave it alone; MirrorMaker 1's file
    sets it (its producer's own default is 1 before Kafka 3.0)."""
    assert not [key for key in props(kafka_version=kafka_version) if key.endswith(".acks") or key == "acks"]
    if kafka_version < "4":
        files = build_config(model(kafka_version=kafka_version, engine="mm1")).files
        assert files[MM1_PRODUCER_FILE]["acks"] == "all"


@pytest.mark.parametrize("key", ["secondary.producer.acks", "producer.acks", "secondary.producer.override.acks", "primary->secondary.producer.override.acks"])
@pytest.mark.parametrize("value", ["1", "0", 1])
def test_a_weaker_acks_is_refused(key, value):
    assert f"properties: {key!r}: acks={value} acknowledges a record before every in-sync replica has it" in errors_of(properties={key: value})


def test_acks_all_may_be_spelled_out():
    assert props(properties={"secondary.producer.acks": "all", "producer.acks": -1})["secondary.producer.acks"] == "all"
