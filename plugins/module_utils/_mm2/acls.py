# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kafka ACLs a least-privilege MirrorMaker 2 principal needs on each cluster of one flow (docs/security.md).

Read from Apache Kafka 3.2.0's connect/mirror sources (the MirrorMaker the collection runs on HDInsight 5.1) and completed by
the first run against real 2.4.1 and 3.2.0 brokers with an ACL authorizer (tests/integration/real_kafka/test_secure_mirror.py),
which refused three the sources do not show at a glance (marked "found by the lab"):

Source cluster:
- the replicated topics: Describe and Read (MirrorSourceConnector lists and describes them, MirrorSourceTask's consumer
  reads them with assign(), no group), DescribeConfigs (sync.topic.configs.enabled, default true).
- the offset-syncs topic when it lives there (offset-syncs.topic.location=source, the default): Create
  (MirrorUtils.createSinglePartitionCompactedTopic), Describe, Write (MirrorSourceTask's offset producer), Read
  (MirrorCheckpointTask's OffsetSyncStore).
- the replicated groups: Describe (MirrorCheckpointConnector's listConsumerGroups, MirrorCheckpointTask's
  listConsumerGroupOffsets).
- found by the lab: the reverse herder target -> source that MirrorMakerConfig.clusterPairs() starts for every flow with
  heartbeats (emit.heartbeats.enabled, default true), whose MirrorHeartbeatConnector writes the source's `heartbeats` topic
  (which the flow replicates, so the target sees the source's heartbeats): that topic (Create, Describe, Write, Read, and
  DescribeConfigs, which MirrorSourceConnector.createNewTopics asks for every new topic at once), the
  herder's Connect topics mm2-configs/offsets/status.<target>.internal and its group `<target>-mm2`. Without them the herder's
  thread exits with TopicAuthorizationException at start.
- found by the lab: IdempotentWrite on the cluster. MirrorMaker 3.0+'s producers are idempotent by default (KIP-679), and
  brokers before 2.8 (2.4.1, HDInsight 5.0) authorize InitProducerId only with it; the offset-syncs producer went into a
  fatal ClusterAuthorizationException. Unused by brokers 2.8 and later.
Target cluster:
- the remote topics (the replicated ones and the source's heartbeats): Create, Describe, Write, DescribeConfigs, AlterConfigs
  (config sync), Alter (createPartitions when a source topic grows); Read for the collection's validation job and status checks.
- the heartbeats topic and the flow's checkpoints topic: Create, Describe, Write, Read (the collection reads both).
- the offset-syncs topic when it lives on the target (3.0+, KIP-716), as on the source above.
- Connect's internal topics of the flow's herder (MirrorMakerConfig.workerConfig): mm2-configs/offsets/status.<source>.internal:
  Create, Describe, Read, Write, DescribeConfigs (TopicAdmin checks their cleanup policy); its group `<source>-mm2`: Read,
  Describe.
- the replicated groups, for failover (kafka_mirror_offsets applies translated offsets) and sync.group.offsets.enabled:
  Describe, Read.
- IdempotentWrite on the cluster, as on the source (for targets before 2.8).
Both clusters, found by the lab: Describe on the group kafkaops-mirror-validation, whose coordinator the validation job's
librdkafka consumers look up (FindCoordinator) although they only assign and never commit; refused, the job stopped with
GROUP_AUTHORIZATION_FAILED.
ACL sync (sync.topic.acls.enabled, true by default) needs Describe on the source's cluster (describeAcls) and Alter on the
target's (createAcls, which lets a principal grant anything): not asked for. Without them MirrorMaker logs "Scheduler for
MirrorSourceConnector caught exception in scheduled task: syncing topic ACLs" every sync.topic.acls.interval.seconds and
replicates on; a Ranger-managed cluster has no Kafka ACLs to copy.

Standard library only. A flow's topic and group patterns are regular expressions; ACLs name literal names or prefixes, so
a pattern must be a literal name or a literal prefix followed by `.*` (`orders-.*`): acl_names() says which pattern cannot
be written as an ACL.
"""
from __future__ import annotations

import re

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import FlowNames

SOURCE, TARGET = "source", "target"
CLUSTER_NAME = "kafka-cluster"  # the one name of the cluster resource
# The group id of the validation job's librdkafka consumers (roles/mirror_validation/files/mirror_validation/kafka_reader.py
# _GROUP_ID, which tests/unit/plugins/module_utils/_mm2/test_mm2_acls.py keeps equal): they never commit, but librdkafka looks
# the group's coordinator up, which needs Describe on the group.
VALIDATION_GROUP = "kafkaops-mirror-validation"
LITERAL, PREFIXED = "literal", "prefixed"
# The name (or, behind a flow's topic prefix, the end of the name) the preflight's CreateTopics dry runs ask for.
PROBE_TOPIC = "kafkaops-preflight-probe"
TOPIC_CREATE_AND_USE = ("CREATE", "DESCRIBE", "WRITE", "READ")
_UNESCAPED = re.compile(r"\\(.)")
_PLAIN = re.compile(r"^(?:[A-Za-z0-9_-]|\\.)+$")


def _unescape(text):
    return _UNESCAPED.sub(r"\1", text)


def acl_names(patterns):
    """[(pattern_type, name)] for regular expressions `patterns`; ValueError naming a pattern no ACL can express."""
    names = []
    for pattern in patterns:
        if _PLAIN.match(pattern):
            names.append((LITERAL, _unescape(pattern)))
        elif pattern.endswith(".*") and _PLAIN.match(pattern[:-2]):
            names.append((PREFIXED, _unescape(pattern[:-2])))
        else:
            raise ValueError("pattern %r cannot be written as an ACL: give a literal name or a literal prefix followed by .* "
                             "(such as orders-.*)" % (pattern,))
    return names


def _entries(cluster, resource_type, names, operations, reason):
    return [{"cluster": cluster, "resource_type": resource_type, "pattern_type": pattern_type, "resource_name": name,
             "operation": operation, "reason": reason} for pattern_type, name in names for operation in operations]


def mirrormaker_acls(source_alias, target_alias, topics, groups, offset_syncs_location="source", policy="default", separator="."):
    """Every ACL (a dict: cluster, resource_type, pattern_type, resource_name, operation, reason) the MirrorMaker principal of
    the flow `source_alias -> target_alias` needs, for topic and group patterns `topics` and `groups`; ValueError when a
    pattern cannot be an ACL or a name is bad."""
    names = FlowNames(source_alias, target_alias, policy, separator, offset_syncs_location)
    topic_names = acl_names(topics)
    group_names = acl_names(groups)
    remote = [(pattern_type, names.remote_topic(name)) for pattern_type, name in topic_names]
    syncs_cluster = SOURCE if offset_syncs_location == "source" else TARGET
    connect = [(LITERAL, "mm2-%s.%s.internal" % (kind, source_alias)) for kind in ("configs", "offsets", "status")]
    reverse_connect = [(LITERAL, "mm2-%s.%s.internal" % (kind, target_alias)) for kind in ("configs", "offsets", "status")]
    remote.append((LITERAL, names.remote_heartbeats_topic))
    acls = (_entries(SOURCE, "topic", topic_names, ("DESCRIBE", "READ", "DESCRIBE_CONFIGS"), "replicated topics")
            + _entries(SOURCE, "topic", [(LITERAL, names.heartbeats_topic)], TOPIC_CREATE_AND_USE + ("DESCRIBE_CONFIGS",),
                       "heartbeats of the reverse herder, replicated by the flow")
            + _entries(SOURCE, "topic", reverse_connect, TOPIC_CREATE_AND_USE + ("DESCRIBE_CONFIGS",), "the reverse herder's Connect topics")
            + _entries(SOURCE, "group", [(LITERAL, "%s-mm2" % target_alias)], ("READ", "DESCRIBE"), "the reverse herder's Connect group")
            + _entries(SOURCE, "cluster", [(LITERAL, CLUSTER_NAME)], ("IDEMPOTENT_WRITE",), "idempotent producers on brokers before 2.8")
            + _entries(TARGET, "cluster", [(LITERAL, CLUSTER_NAME)], ("IDEMPOTENT_WRITE",), "idempotent producers on brokers before 2.8")
            + _entries(syncs_cluster, "topic", [(LITERAL, names.offset_syncs_topic)], TOPIC_CREATE_AND_USE, "offset syncs")
            + _entries(SOURCE, "group", group_names, ("DESCRIBE",), "replicated groups (checkpoints)")
            + _entries(TARGET, "topic", remote, ("CREATE", "DESCRIBE", "WRITE", "READ", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "ALTER"),
                       "remote topics")
            + _entries(TARGET, "topic", [(LITERAL, names.heartbeats_topic), (LITERAL, names.checkpoints_topic)], TOPIC_CREATE_AND_USE,
                       "heartbeats and checkpoints")
            + _entries(TARGET, "topic", connect, TOPIC_CREATE_AND_USE + ("DESCRIBE_CONFIGS",), "MirrorMaker's Connect internal topics")
            + _entries(TARGET, "group", [(LITERAL, "%s-mm2" % source_alias)], ("READ", "DESCRIBE"), "MirrorMaker's Connect group")
            + _entries(TARGET, "group", group_names, ("DESCRIBE", "READ"), "replicated groups (failover)")
            + _entries(SOURCE, "group", [(LITERAL, VALIDATION_GROUP)], ("DESCRIBE",), "the validation job's consumers (never commit)")
            + _entries(TARGET, "group", [(LITERAL, VALIDATION_GROUP)], ("DESCRIBE",), "the validation job's consumers (never commit)"))
    return acls


def for_cluster(acls, cluster):
    """The entries of `acls` for one cluster (SOURCE or TARGET), without duplicates, in order."""
    seen, chosen = set(), []
    for acl in acls:
        key = (acl["resource_type"], acl["pattern_type"], acl["resource_name"], acl["operation"])
        if acl["cluster"] == cluster and key not in seen:
            seen.add(key)
            chosen.append(acl)
    return chosen
