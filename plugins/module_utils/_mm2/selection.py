# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which topics and groups one MirrorMaker 2 flow replicates, and which of them a validation compares.

MirrorSourceConnector.shouldReplicateTopic: (DefaultTopicFilter matches, or a heartbeats topic) and not internal and not
a cycle. DefaultTopicFilter / DefaultGroupFilter: an include list (default `.*`) minus an exclude list, which when given
replaces MM2's default exclude list (it is one config value). An empty include list matches nothing
(MirrorUtils.compilePatternList gives no pattern).

Both halves of "internal" follow the release that runs MirrorMaker 2 (FlowNames' version): before 4.0 the default
topics.exclude and isInternalTopic leave out every `*.internal` / `*-internal` topic; from 4.0 (KIP-1074) only MM2's own
(default_topics_exclude here, ReplicationPolicy.is_internal_topic in naming).

Self-contained apart from patterns and naming: the validation job gets a generated copy (see _mm2/__init__.py).
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ONLY_MM2_INTERNAL_TOPICS_SINCE, FlowNames, known_since
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import (
    DEFAULT_GROUPS_EXCLUDE,
    DEFAULT_TOPICS_EXCLUDE,
    DEFAULT_TOPICS_EXCLUDE_4,
    compile_patterns,
    matches_any,
)


def default_topics_exclude(version):
    """DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT of MirrorMaker 2 of Kafka `version` (a (major, minor, patch) tuple): from 4.0
    (KIP-1074) `mm2.*\\.internal, .*\\.replica, __.*`, before it (and with the release not known, None)
    `.*[\\-\\.]internal, .*\\.replica, __.*`."""
    return DEFAULT_TOPICS_EXCLUDE_4 if known_since(version, ONLY_MM2_INTERNAL_TOPICS_SINCE) else DEFAULT_TOPICS_EXCLUDE


class MirrorFilter:
    """The topic and group selection of one flow (FlowNames names it, its version picks the release's rules). Patterns follow
    _mm2.patterns' comma rule; topics_exclude/groups_exclude None: MirrorMaker 2's default of that release."""

    def __init__(self, names, topics=".*", topics_exclude=None, groups=".*", groups_exclude=None):
        if not isinstance(names, FlowNames):
            raise TypeError("MirrorFilter needs the flow's FlowNames")
        self.names = names
        self.topics = compile_patterns(topics, "topics")
        if topics_exclude is None:
            topics_exclude = default_topics_exclude(names.policy.version)
        self.topics_exclude = compile_patterns(topics_exclude, "topics_exclude")
        self.groups = compile_patterns(groups, "groups")
        self.groups_exclude = compile_patterns(DEFAULT_GROUPS_EXCLUDE if groups_exclude is None else groups_exclude, "groups_exclude")

    def is_heartbeats(self, topic):
        return self.names.policy.is_heartbeats_topic(topic)

    def replicates_topic(self, topic):
        """shouldReplicateTopic: heartbeats topics always travel; internal topics and cycles never do."""
        if self.names.policy.is_internal_topic(topic) or self.names.is_cycle(topic):
            return False
        return self.is_heartbeats(topic) or (matches_any(topic, self.topics) and not matches_any(topic, self.topics_exclude))

    def replicates_group(self, group):
        """DefaultGroupFilter.shouldReplicateGroup."""
        return matches_any(group, self.groups) and not matches_any(group, self.groups_exclude)

    def data_topics(self, names):
        """The replicated topics whose records are the user's data (heartbeats left out), sorted."""
        return sorted(topic for topic in names if self.replicates_topic(topic) and not self.is_heartbeats(topic))


def validated_topics(topic_names, include, exclude, names):
    """The source topics a validation compares: the flow's data topics under MM2's default selection (internal topics, cycles,
    heartbeats and MM2's default topics.exclude left out, both of the release `names` carries), those matching `include` and
    not `exclude` (validation's own lists)."""
    wanted, unwanted = compile_patterns(include, "topics"), compile_patterns(exclude, "exclude")
    return [topic for topic in MirrorFilter(names).data_topics(topic_names) if matches_any(topic, wanted) and not matches_any(topic, unwanted)]
