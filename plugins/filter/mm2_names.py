# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters kafkaops.mirror.mm2_topics_exclude and kafkaops.mirror.mm2_remote_prefix: MirrorMaker 2's names for playbooks.

Both come from the collection's one MirrorMaker 2 vocabulary (module_utils/_mm2), so a playbook never re-derives them.
"""
from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ReplicationPolicy, parse_release
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import alternation, pattern_problems
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.selection import default_topics_exclude


def mm2_topics_exclude(patterns=None, version=None):
    """One whole-name regex of `patterns` (comma rule of MirrorMaker 2), or, when none are given, of the default topics.exclude
    of MirrorMaker 2 of Kafka `version` (the release that runs it, such as `3.9.2` or `4.3.1`): from 4.0 (KIP-1074)
    `mm2.*\\.internal, .*\\.replica, __.*`, before it `.*[\\-\\.]internal, .*\\.replica, __.*`. The release not known
    (None or ''): the list before 4.0, which leaves out more."""
    problems = pattern_problems("topics exclude", patterns)
    try:
        release = parse_release(version)
    except ValueError as exc:
        problems.append("version: %s" % exc)
    if problems:
        raise AnsibleFilterError("; ".join(problems))
    return alternation(default_topics_exclude(release) if patterns is None else patterns)


def mm2_remote_prefix(source_alias, replication_policy="default", separator="."):
    """The prefix the replication policy gives remote topics of `source_alias` (heartbeats aside)."""
    try:
        return ReplicationPolicy(replication_policy, separator).remote_prefix(source_alias)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"mm2_topics_exclude": mm2_topics_exclude, "mm2_remote_prefix": mm2_remote_prefix}
