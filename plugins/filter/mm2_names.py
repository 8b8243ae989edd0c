# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters kafkaops.mirror.mm2_topics_exclude and kafkaops.mirror.mm2_remote_prefix: MirrorMaker 2's names for playbooks.

Both come from the collection's one MirrorMaker 2 vocabulary (module_utils/_mm2), so a playbook never re-derives them.
"""
from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ReplicationPolicy
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import DEFAULT_TOPICS_EXCLUDE, alternation, pattern_problems


def mm2_topics_exclude(patterns=None):
    """One whole-name regex of `patterns` (comma rule of MirrorMaker 2), or of MM2's default topics.exclude when none are given."""
    problems = pattern_problems("topics exclude", patterns)
    if problems:
        raise AnsibleFilterError("; ".join(problems))
    return alternation(DEFAULT_TOPICS_EXCLUDE if patterns is None else patterns)


def mm2_remote_prefix(source_alias, replication_policy="default", separator="."):
    """The prefix the replication policy gives remote topics of `source_alias` (heartbeats aside)."""
    try:
        return ReplicationPolicy(replication_policy, separator).remote_prefix(source_alias)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"mm2_topics_exclude": mm2_topics_exclude, "mm2_remote_prefix": mm2_remote_prefix}
