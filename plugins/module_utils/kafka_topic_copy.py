# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""copy_from: turn a source cluster's topics into kafka_topic entries for the target (pre-create before MirrorMaker 2)."""
from __future__ import annotations

import re

from ansible_collections.kafkaops.mirror.plugins.module_utils.kafka_names import NameFilter, regex_problems
from ansible_collections.kafkaops.mirror.plugins.module_utils.kafka_topics import is_protected_topic

# Topic settings that describe the source cluster rather than the data: the same list MirrorMaker 2 leaves out when it
# syncs topic configs (DefaultConfigPropertyFilter, config.properties.exclude).
DEFAULT_EXCLUDED_CONFIGS = [
    r"follower\.replication\.throttled\.replicas",
    r"leader\.replication\.throttled\.replicas",
    r"message\.timestamp\.difference\.max\.ms",
    r"message\.timestamp\.type",
    r"unclean\.leader\.election\.enable",
    r"min\.insync\.replicas",
]


def copy_rule_problems(rules):
    """Regexes in copy_from that do not compile, as messages."""
    return (
        regex_problems("copy_from.topics", [rules["topics"]] if rules.get("topics") else [])
        + regex_problems("copy_from.exclude", [rules["exclude"]] if rules.get("exclude") else [])
        + regex_problems("copy_from.exclude_configs", rules.get("exclude_configs"))
    )


def selected_source_topics(source_topics, rules):
    """Names of the source topics to copy: not internal, matching `topics`, not matching `exclude` (whole-name regexes)."""
    wanted = NameFilter([rules.get("topics") or ".*"], [rules["exclude"]] if rules.get("exclude") else [])
    return wanted.select(name for name, topic in source_topics.items() if not topic.get("internal") and not is_protected_topic(name))


def copied_entries(source_topics, source_overrides, rules, target_live_brokers):
    """kafka_topic entries that make the target match the source: partition counts and per-topic config overrides.

    source_topics: read_topics() of the source; source_overrides: {topic: {key: value}} of per-topic overrides;
    rules: copy_from options (topics, exclude, rename_prefix, replication_factor, exclude_configs).
    The replication factor is copy_from.replication_factor, else the source's capped at the target's live brokers.
    """
    excluded_configs = [re.compile(pattern) for pattern in rules.get("exclude_configs") or []]
    prefix = rules.get("rename_prefix") or ""
    entries = []
    for name in selected_source_topics(source_topics, rules):
        topic = source_topics[name]
        configs = {
            key: value
            for key, value in sorted(source_overrides.get(name, {}).items())
            if value is not None and not any(pattern.fullmatch(key) for pattern in excluded_configs)
        }
        entries.append(
            dict(
                label=f"copy_from topic {name!r}",
                name=prefix + name,
                state="present",
                partitions=topic["partitions"],
                replication_factor=rules.get("replication_factor") or min(topic["replication_factor"], target_live_brokers),
                configs=configs,
            )
        )
    return entries


def merge_entries(copied, explicit):
    """Copied entries with explicit ones appended; an explicit entry replaces the copied entry of the same target name."""
    explicit_names = {entry.get("name") for entry in explicit}
    return [entry for entry in copied if entry["name"] not in explicit_names] + list(explicit)
