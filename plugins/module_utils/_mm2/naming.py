# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topic names of MirrorMaker 2, release by release, as Apache Kafka's connect/mirror-client defines them.

- ReplicationPolicy: DefaultReplicationPolicy (`default`: `<source><separator><topic>`) and IdentityReplicationPolicy
  (`identity`, Kafka 3.0+: names kept, except names ending in `heartbeats`, which are prefixed like the default policy's),
  with the internal-topic rule (ReplicationPolicy.isInternalTopic) and MM2's internal topic names.
- FlowNames: the names one flow `source -> target` uses (MirrorConnectorConfig), the offset-syncs topic included, which
  with offset-syncs.topic.location=target (3.0+) lives on the target and is named after the source.

Release differences (a version is a (major, minor, patch) tuple, such as _mm2.versions.KafkaVersion; None = newest):
- 2.4-3.0: internal names always use '.', `<alias>.checkpoints.internal`, `mm2-offset-syncs.<alias>.internal`.
- 3.1+ (KIP-690): they use replication.policy.separator, and `<separator>internal` is internal too.
- 3.5.2+ (KAFKA-15102): replication.policy.internal.topic.separator.enabled=false brings back '.' in internal names.
- 4.0+ (KIP-1074, KAFKA-17200): only MM2's own topics (isMM2InternalTopic: `mm2*<separator>internal` and the checkpoints
  topics) and Kafka's (`__*`, `.*`) are internal, so a user topic such as `audit.internal` or `audit-internal` is replicated;
  every earlier release treats each name ending in `.internal` or `-internal` as internal and never replicates it.
  The release not known (None): the rule before 4.0, so that every name some release treats as internal counts as internal
  (kafka_topic's deletion guard relies on that); a selection that must match MirrorMaker 2 passes its release.

Self-contained (standard library only): the validation job gets a generated copy (see _mm2/__init__.py).
"""
from __future__ import annotations

import re

HEARTBEATS_TOPIC = "heartbeats"
DEFAULT_SEPARATOR = "."
POLICIES = ("default", "identity")
OFFSET_SYNCS_LOCATIONS = ("source", "target")
# KIP-690: custom separators in the internal topics' names.
SEPARATOR_IN_INTERNAL_NAMES_SINCE = (3, 1, 0)
# KAFKA-15102: replication.policy.internal.topic.separator.enabled.
INTERNAL_SEPARATOR_SWITCH_SINCE = (3, 5, 2)
# KIP-716: offset-syncs.topic.location.
OFFSET_SYNCS_LOCATION_SINCE = (3, 0, 0)
# KAFKA-9726: IdentityReplicationPolicy is in connect-mirror-client from 3.0.0 on.
IDENTITY_POLICY_SINCE = (3, 0, 0)
# KIP-1074 (KAFKA-17200): ReplicationPolicy.isInternalTopic is isMM2InternalTopic or Kafka's; user `*.internal` topics travel.
ONLY_MM2_INTERNAL_TOPICS_SINCE = (4, 0, 0)


def parse_release(text, required=False):
    """A Kafka release as written (`2.4.1`, `3.9`, HDInsight's `2.4.1.5.0.3000`) as (major, minor, patch); None when empty
    unless `required`. The one rule: _mm2.versions.KafkaVersion.parse uses it, and the validation job gets it vendored."""
    if not required and (text is None or not str(text).strip()):
        return None
    match = re.match(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?", str(text))
    if not match:
        raise ValueError("%r is not a Kafka version (expected MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 3.9 or 2.4.1)" % (text,))
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def _since(version, release):
    return version is None or tuple(version)[:3] >= release


def known_since(version, release):
    """The release is known and `release` or later (None, an unknown release, is not)."""
    return version is not None and tuple(version)[:3] >= release


def _release(version):
    return "%d.%d.%d" % tuple(version)[:3]


def _java_split(text, separator):
    """java.util.regex.Pattern.split(text) for a quoted (literal) separator: trailing empty strings dropped."""
    if separator not in text:
        return [text]
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


class ReplicationPolicy:
    """`default` or `identity`, configured as MirrorMaker 2 configures it (replication.policy.separator and the rest)."""

    def __init__(self, kind="default", separator=DEFAULT_SEPARATOR, version=None, internal_separator_enabled=True,
                 source_cluster_alias=None):
        if kind not in POLICIES:
            raise ValueError("replication policy %r is not one of %s" % (kind, ", ".join(POLICIES)))
        if not separator:
            raise ValueError("replication policy separator must not be empty")
        if kind == "identity" and not _since(version, IDENTITY_POLICY_SINCE):
            raise ValueError("replication policy identity needs MirrorMaker 2 of Kafka 3.0 or later (IdentityReplicationPolicy, "
                             "KAFKA-9726); this one is Kafka %s, which has only the default policy" % _release(version))
        self.kind = kind
        self.separator = separator
        self.version = None if version is None else tuple(version)[:3]
        self.internal_separator_enabled = internal_separator_enabled
        # IdentityReplicationPolicy.SOURCE_CLUSTER_ALIAS_CONFIG: connectors configure it with their source alias.
        self.source_cluster_alias = source_cluster_alias

    @property
    def internal_separator(self):
        """The separator in MM2's internal topic names (DefaultReplicationPolicy.internalSeparator, 3.1+)."""
        if not _since(self.version, SEPARATOR_IN_INTERNAL_NAMES_SINCE):
            return DEFAULT_SEPARATOR
        if not self.internal_separator_enabled and _since(self.version, INTERNAL_SEPARATOR_SWITCH_SINCE):
            return DEFAULT_SEPARATOR
        return self.separator

    def _looks_like_heartbeat(self, topic):
        """IdentityReplicationPolicy.looksLikeHeartbeat: any name ending in `heartbeats`."""
        return topic is not None and topic.endswith(HEARTBEATS_TOPIC)

    def _defers_to_default(self, topic):
        return self.kind == "default" or self._looks_like_heartbeat(topic)

    def remote_topic(self, source_alias, topic):
        """formatRemoteTopic: the name on the target of `topic` replicated from the cluster `source_alias`."""
        if self._defers_to_default(topic):
            return "%s%s%s" % (source_alias, self.separator, topic)
        return topic

    def remote_prefix(self, source_alias):
        """What remote_topic() puts before a name that does not end in `heartbeats`: `<source><separator>`, or '' (identity)."""
        return self.remote_topic(source_alias, "")

    def topic_source(self, topic):
        """topicSource: the alias a remote topic came from, or None."""
        if not self._defers_to_default(topic):
            return self.source_cluster_alias
        parts = _java_split(topic, self.separator)
        return parts[0] if len(parts) >= 2 else None

    def upstream_topic(self, topic):
        """upstreamTopic: the name on the cluster the topic came from, or None when it is not a remote topic."""
        if not self._defers_to_default(topic):
            return topic
        source = self.topic_source(topic)
        return None if source is None else topic[len(source) + len(self.separator):]

    def original_topic(self, topic):
        """originalTopic: the name on the cluster where the records were first written."""
        while True:
            upstream = self.upstream_topic(topic)
            if upstream is None or upstream == topic:
                return topic
            topic = upstream

    @staticmethod
    def heartbeats_topic():
        """heartbeatsTopic (MirrorClientConfig.HEARTBEATS_TOPIC before 3.1)."""
        return HEARTBEATS_TOPIC

    def is_heartbeats_topic(self, topic):
        """isHeartbeatsTopic (MirrorSourceConnector.isHeartbeatTopic before 3.1): `heartbeats`, `A.heartbeats`, `B.A.heartbeats`."""
        return self.original_topic(topic) == HEARTBEATS_TOPIC

    def checkpoints_topic(self, cluster_alias):
        """checkpointsTopic (MirrorClientConfig.CHECKPOINTS_TOPIC_SUFFIX before 3.1)."""
        return "%s%scheckpoints%sinternal" % (cluster_alias, self.internal_separator, self.internal_separator)

    def offset_syncs_topic(self, cluster_alias):
        """offsetSyncsTopic (MirrorConnectorConfig.offsetSyncsTopic before 3.1); FlowNames chooses the alias."""
        return "mm2-offset-syncs%s%s%sinternal" % (self.internal_separator, cluster_alias, self.internal_separator)

    @property
    def only_mm2_internal_topics(self):
        """4.0+ (KIP-1074): only MM2's own topics and Kafka's are internal (False while the release is not known)."""
        return known_since(self.version, ONLY_MM2_INTERNAL_TOPICS_SINCE)

    def _internal_suffix(self):
        return self.internal_separator + "internal"

    def is_checkpoints_topic(self, topic):
        """isCheckpointsTopic (3.1+): ends with `<internal separator>checkpoints<internal separator>internal`."""
        return topic.endswith(self.internal_separator + "checkpoints" + self._internal_suffix())

    def is_mm2_internal_topic(self, topic):
        """isMM2InternalTopic (3.1+): before 4.0 every name ending in `<internal separator>internal`; from 4.0 (KIP-1074) only
        those starting with `mm2` (offset syncs, Connect's mm2-configs/offsets/status) and the checkpoints topics."""
        if self.only_mm2_internal_topics:
            return (topic.startswith("mm2") and topic.endswith(self._internal_suffix())) or self.is_checkpoints_topic(topic)
        return topic.endswith(self._internal_suffix())

    def is_internal_topic(self, topic):
        """isInternalTopic, never replicated: Kafka's (`__`, `.`) and MM2's own (is_mm2_internal_topic); before 4.0 (and with
        the release not known) also every name ending in `.internal` or `-internal` (Connect's), from 4.0 (KIP-1074) no longer.
        Before 3.1 isMM2InternalTopic does not exist, and `.internal` is the whole of it ('.' is the internal separator)."""
        if topic.startswith("__") or topic.startswith("."):
            return True
        if self.only_mm2_internal_topics:
            return self.is_mm2_internal_topic(topic)
        return topic.endswith(".internal") or topic.endswith("-internal") or self.is_mm2_internal_topic(topic)


def offset_syncs_cluster_alias(source_alias, target_alias, location="source", version=None):
    """MirrorConnectorConfig.offsetSyncsTopic: the topic is named after the cluster it is NOT on."""
    if location not in OFFSET_SYNCS_LOCATIONS:
        raise ValueError("offset-syncs topic location %r is not one of %s" % (location, ", ".join(OFFSET_SYNCS_LOCATIONS)))
    if location == "target" and not _since(version, OFFSET_SYNCS_LOCATION_SINCE):
        raise ValueError("offset-syncs.topic.location=target needs MirrorMaker 2 of Kafka 3.0 or later (KIP-716); this one is "
                         "Kafka %s, which keeps the offset syncs on the source" % _release(version))
    return target_alias if location == "source" else source_alias


class FlowNames:
    """The topic names of one flow `source -> target` (MirrorConnectorConfig, MirrorSourceConnector); target may be None."""

    def __init__(self, source_alias, target_alias, policy="default", separator=DEFAULT_SEPARATOR, offset_syncs_location="source",
                 version=None, internal_separator_enabled=True):
        if not source_alias or not str(source_alias).strip():
            raise ValueError("source alias must not be empty")
        self.source_alias, self.target_alias = source_alias, target_alias or None
        self.policy = ReplicationPolicy(policy, separator, version, internal_separator_enabled, source_cluster_alias=source_alias)
        self.offset_syncs_location = offset_syncs_location
        syncs_alias = offset_syncs_cluster_alias(source_alias, self.target_alias, offset_syncs_location, version)
        # None when it is named after a target alias that is not known (a validation without --target-alias).
        self.offset_syncs_topic = None if syncs_alias is None else self.policy.offset_syncs_topic(syncs_alias)
        # Both on the target: the checkpoint connector writes there, named after the source.
        self.checkpoints_topic = self.policy.checkpoints_topic(source_alias)
        # The target's own heartbeats topic (MirrorHeartbeatConnector writes it) and the source's, replicated.
        self.heartbeats_topic = self.policy.heartbeats_topic()
        self.remote_heartbeats_topic = self.policy.remote_topic(source_alias, self.heartbeats_topic)

    def remote_topic(self, topic):
        return self.policy.remote_topic(self.source_alias, topic)

    def is_cycle(self, topic):
        """MirrorSourceConnector.isCycle: replicating `topic` would send it back to the cluster it came from."""
        while True:
            source = self.policy.topic_source(topic)
            if source is None:
                return False
            if source == self.target_alias:
                return True
            upstream = self.policy.upstream_topic(topic)
            if upstream is None or upstream == topic:
                return False
            topic = upstream
