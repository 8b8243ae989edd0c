# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which topics and groups a MirrorMaker 2 flow replicates (DefaultTopicFilter, DefaultGroupFilter, shouldReplicateTopic).

Patterns are Java-style regexes matched against the whole name; a pattern string may hold several,
comma-separated, as in the properties file.
"""
from __future__ import annotations

import re

from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_records import HEARTBEATS_TOPIC

DEFAULT_TOPICS_EXCLUDE = [r".*[\-\.]internal", r".*\.replica", r"__.*"]
DEFAULT_GROUPS_EXCLUDE = [r"console-consumer-.*", r"connect-.*", r"__.*"]


def compile_patterns(patterns):
    """A list of compiled regexes from a list and/or comma-separated strings; ValueError names a bad pattern."""
    items = [patterns] if isinstance(patterns, str) else list(patterns or [])
    compiled = []
    for item in items:
        for part in str(item).split(","):
            if part.strip():
                try:
                    compiled.append(re.compile(part.strip()))
                except re.error as exc:
                    raise ValueError("pattern %r is not a valid regular expression: %s" % (part.strip(), exc)) from None
    return compiled


def _matches(patterns, name):
    return any(pattern.fullmatch(name) for pattern in patterns)


class MirrorFilter:
    """The topic and group selection of one flow `source -> target` under a ReplicationPolicy."""

    def __init__(self, policy, target_alias, topics=".*", topics_exclude=None, groups=".*", groups_exclude=None):
        self.policy = policy
        self.target_alias = target_alias
        self.topics = compile_patterns(topics)
        self.topics_exclude = compile_patterns(DEFAULT_TOPICS_EXCLUDE if topics_exclude is None else topics_exclude)
        self.groups = compile_patterns(groups)
        self.groups_exclude = compile_patterns(DEFAULT_GROUPS_EXCLUDE if groups_exclude is None else groups_exclude)

    def is_heartbeats(self, topic):
        return topic == HEARTBEATS_TOPIC or topic.endswith(self.policy.separator + HEARTBEATS_TOPIC)

    def replicates_topic(self, topic):
        """Heartbeats topics always travel; internal topics and topics that would go back where they came from never do."""
        if self.policy.is_internal(topic) or self.policy.is_cycle(topic, self.target_alias):
            return False
        if self.is_heartbeats(topic):
            return True
        return _matches(self.topics, topic) and not _matches(self.topics_exclude, topic)

    def replicates_group(self, group):
        return _matches(self.groups, group) and not _matches(self.groups_exclude, group)
