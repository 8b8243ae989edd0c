# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which topics, groups and topic configs a flow replicates (DefaultTopicFilter, DefaultGroupFilter,
DefaultConfigPropertyFilter, MirrorSourceConnector.shouldReplicateTopic / isCycle).

Written from Apache Kafka's connect/mirror sources at 2.4.1, 2.7.0, 3.0.0 and 3.9, independently of the
collection's filters, which is what the stand-in checks. A list setting is ConfigDef's Type.LIST (split at
commas, blanks around them dropped); MirrorUtils.compilePatternList joins its items with `|` and a name is
replicated when the whole name matches; an empty list matches nothing.
"""
from __future__ import annotations

import re

TOPICS_EXCLUDE_DEFAULT = r".*[\-\.]internal, .*\.replica, __.*"
# 4.0+ (KIP-1074, DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT in the 4.0.0 and 4.3.1 sources): only MM2's own internal topics,
# so user topics named `*.internal` / `*-internal` are replicated.
TOPICS_EXCLUDE_DEFAULT_4 = r"mm2.*\.internal, .*\.replica, __.*"
GROUPS_EXCLUDE_DEFAULT = r"console-consumer-.*, connect-.*, __.*"
CONFIG_PROPERTIES_EXCLUDE_DEFAULT = (r"follower\.replication\.throttled\.replicas, leader\.replication\.throttled\.replicas, "
                                     r"message\.timestamp\.difference\.max\.ms, message\.timestamp\.type, "
                                     r"unclean\.leader\.election\.enable, min\.insync\.replicas")


def parse_list(value):
    """ConfigDef.parseType(LIST): trimmed, split at commas with the blanks around them; "" is the empty list."""
    text = (value or "").strip()
    return re.split(r"\s*,\s*", text) if text else []


def compile_pattern_list(value):
    """MirrorUtils.compilePatternList: one regex of the items joined by `|`, or None (matches nothing) for an empty list."""
    items = parse_list(value)
    return re.compile("|".join(items)) if items else None


def _matches(pattern, name):
    return pattern is not None and pattern.fullmatch(name) is not None


class IncludeExclude:
    """DefaultTopicFilter / DefaultGroupFilter: included and not excluded."""

    def __init__(self, include, exclude):
        self.include = compile_pattern_list(include)
        self.exclude = compile_pattern_list(exclude)

    def replicates(self, name):
        return _matches(self.include, name) and not _matches(self.exclude, name)


class TopicSelection:
    """MirrorSourceConnector.shouldReplicateTopic for the flow `source -> target` under `policy`."""

    def __init__(self, policy, target_alias, topic_filter):
        self.policy, self.target_alias, self.topic_filter = policy, target_alias, topic_filter

    def is_cycle(self, topic):
        source = self.policy.topic_source(topic)
        if source is None:
            return False
        if source == self.target_alias:
            return True
        upstream = self.policy.upstream_topic(topic)
        if upstream is None or upstream == topic:  # IdentityReplicationPolicy cannot see cycles
            return False
        return self.is_cycle(upstream)

    def replicates(self, topic):
        return ((self.topic_filter.replicates(topic) or self.policy.is_heartbeats_topic(topic))
                and not self.policy.is_internal_topic(topic) and not self.is_cycle(topic))


class ConfigPropertyFilter:
    """DefaultConfigPropertyFilter.shouldReplicateConfigProperty."""

    def __init__(self, exclude=CONFIG_PROPERTIES_EXCLUDE_DEFAULT):
        self.exclude = compile_pattern_list(exclude)

    def replicates(self, name):
        return not _matches(self.exclude, name)
