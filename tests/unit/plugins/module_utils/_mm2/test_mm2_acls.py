# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The least-privilege ACLs of a MirrorMaker 2 principal per side of a flow (_mm2/acls.py), as read from Kafka 3.2.0's
connect/mirror sources (each case names the class that needs it)."""
from __future__ import annotations

import pytest

from mirror_validation import kafka_reader

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.acls import (
    SOURCE,
    TARGET,
    VALIDATION_GROUP,
    acl_names,
    for_cluster,
    mirrormaker_acls,
)


def held(cluster, **flow):
    options = dict(source_alias="primary", target_alias="secondary", topics=["orders-.*", "payments"], groups=["orders-.*"])
    options.update(flow)
    return {(acl["resource_type"], acl["pattern_type"], acl["resource_name"], acl["operation"])
            for acl in for_cluster(mirrormaker_acls(**options), cluster)}


@pytest.mark.parametrize("patterns, expected", [
    (["orders-.*"], [("prefixed", "orders-")]),
    (["payments"], [("literal", "payments")]),
    ([r"orders\.eu\..*"], [("prefixed", "orders.eu.")]),
    ([r"a\.b"], [("literal", "a.b")]),
])
def test_acl_names(patterns, expected):
    assert acl_names(patterns) == expected


@pytest.mark.parametrize("pattern", [".*", "orders-[0-9]+", "(a|b)", "orders.*x", ""])
def test_a_pattern_no_acl_can_express_is_refused_by_name(pattern):
    with pytest.raises(ValueError, match="cannot be written as an ACL"):
        acl_names([pattern])


def test_source_side():
    source = held(SOURCE)
    # MirrorSourceConnector (listTopics, describeTopics, describeConfigs) and MirrorSourceTask's consumer.
    assert {("topic", "prefixed", "orders-", op) for op in ("DESCRIBE", "READ", "DESCRIBE_CONFIGS")} <= source
    assert ("topic", "literal", "payments", "READ") in source
    # MirrorUtils.createSinglePartitionCompactedTopic, MirrorSourceTask's offset producer, OffsetSyncStore.
    assert {("topic", "literal", "mm2-offset-syncs.secondary.internal", op) for op in ("CREATE", "DESCRIBE", "WRITE", "READ")} <= source
    # MirrorCheckpointConnector.listConsumerGroups, MirrorCheckpointTask.listConsumerGroupOffsets.
    assert ("group", "prefixed", "orders-", "DESCRIBE") in source
    # Found by the lab (2.4.1 source, MirrorMaker 3.2.0): MirrorMakerConfig.clusterPairs() runs the reverse herder secondary->primary
    # for the flow's heartbeats, and 3.x producers are idempotent (KIP-679), which brokers before 2.8 authorize on the cluster.
    assert {("topic", "literal", "heartbeats", op) for op in ("CREATE", "DESCRIBE", "WRITE", "READ")} <= source
    assert ("topic", "literal", "mm2-offsets.secondary.internal", "WRITE") in source
    assert ("group", "literal", "secondary-mm2", "READ") in source
    # ACL sync (describeAcls on the source, createAcls on the target) is not asked for: IdempotentWrite is the one cluster ACL.
    assert {op for resource, _pattern, _name, op in source if resource == "cluster"} == {"IDEMPOTENT_WRITE"}
    assert not any(name.startswith("primary.") for _type, _pattern, name, _op in source)


def test_target_side():
    target = held(TARGET)
    remote = {("topic", "prefixed", "primary.orders-", op) for op in ("CREATE", "DESCRIBE", "WRITE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "ALTER")}
    assert remote <= target
    assert ("topic", "literal", "primary.payments", "CREATE") in target
    # MirrorMakerConfig.workerConfig: the herder's internal topics and group.
    for kind in ("configs", "offsets", "status"):
        assert ("topic", "literal", f"mm2-{kind}.primary.internal", "WRITE") in target
    assert {("group", "literal", "primary-mm2", "READ"), ("group", "literal", "primary-mm2", "DESCRIBE")} <= target
    assert ("topic", "literal", "heartbeats", "WRITE") in target
    assert ("topic", "literal", "primary.checkpoints.internal", "WRITE") in target
    assert ("topic", "literal", "primary.heartbeats", "CREATE") in target  # the source's heartbeats, replicated
    assert {op for resource, _pattern, _name, op in target if resource == "cluster"} == {"IDEMPOTENT_WRITE"}
    assert not any(name == "mm2-offset-syncs.secondary.internal" for _type, _pattern, name, _op in target)


def test_offset_syncs_on_the_target_move_their_acls_there():
    assert ("topic", "literal", "mm2-offset-syncs.primary.internal", "WRITE") in held(TARGET, offset_syncs_location="target")
    assert not any("offset-syncs" in name for _type, _pattern, name, _op in held(SOURCE, offset_syncs_location="target"))


def test_identity_policy_names_remote_topics_as_the_source_does():
    assert ("topic", "prefixed", "orders-", "WRITE") in held(TARGET, policy="identity")


def test_no_duplicates_per_cluster():
    acls = for_cluster(mirrormaker_acls("primary", "secondary", ["a-.*", "a-.*"], ["a-.*"]), TARGET)
    keys = [(acl["resource_type"], acl["pattern_type"], acl["resource_name"], acl["operation"]) for acl in acls]
    assert len(keys) == len(set(keys))


def test_the_validation_jobs_group_is_the_one_granted_on_both_clusters():
    """Found by the lab: librdkafka looks the coordinator of the job's group up (FindCoordinator, Describe on the group)."""
    assert VALIDATION_GROUP == kafka_reader._GROUP_ID  # pylint: disable=protected-access
    for cluster in (SOURCE, TARGET):
        assert ("group", "literal", VALIDATION_GROUP, "DESCRIBE") in held(cluster)
