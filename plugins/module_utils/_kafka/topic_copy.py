# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""copy_from: turn a source cluster's topics into kafka_topic entries for the target (pre-create before MirrorMaker 2).

Target names: with copy_from.source_alias, the replication policy's remote-topic name (_mm2.naming.ReplicationPolicy,
so the names MirrorMaker 2 itself writes: IdentityReplicationPolicy keeps `orders` but writes `app-heartbeats` as
`primary.app-heartbeats`); otherwise the source name behind copy_from.rename_prefix.

The copies carry the source's overrides minus exclude_configs: what MirrorMaker 2's topic config sync sets too, so the sync
keeps them. An explicit entry that sets other configs on such a remote topic is undone by the sync (config_sync_warnings).

Which source topics are copied follows the release in copy_from.mirrormaker_version (left_out_of_copies): MirrorMaker 2 4.x
replicates a user topic named `*.internal` or `*-internal` (KIP-1074), earlier releases never do. That is a selection rule,
not the deletion guard: kafka_topics.is_protected_topic keeps refusing to delete such a name whatever the release.
"""
from __future__ import annotations

import re

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.names import NameFilter, regex_problems
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topics import canonical_config_value
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ReplicationPolicy
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import INCREMENTAL_ALTER_CONFIGS_SINCE, KafkaVersion

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
# MirrorSourceConnector.syncTopicConfigs: before 3.5 (_mm2.versions.INCREMENTAL_ALTER_CONFIGS_SINCE) the deprecated
# AlterConfigs, which leaves the remote topic with the synced set only; from 3.5 IncrementalAlterConfigs (KIP-894), which
# sets the source's overrides and deletes the keys the source leaves at their default, and leaves config.properties.exclude's
# keys alone.


# The heartbeats topics are MirrorMaker 2's own, whatever the release: their names are checked under its default naming, as
# kafka_topics.is_protected_topic does.
_DEFAULT_NAMING = ReplicationPolicy()


def _version(rules):
    """copy_from.mirrormaker_version as a KafkaVersion, or None when it is not given (the release not known)."""
    return KafkaVersion.parse(rules["mirrormaker_version"]) if rules.get("mirrormaker_version") else None


def _policy(rules):
    """The replication policy that names the copies, or None when copy_from names them with rename_prefix."""
    if not rules.get("source_alias"):
        return None
    return ReplicationPolicy(rules.get("replication_policy") or "default", rules.get("replication_policy_separator") or ".", _version(rules))


def copy_rule_problems(rules):
    """What is wrong in copy_from (regexes that do not compile, naming options that cannot go together), as messages."""
    problems = (
        regex_problems("copy_from.topics", [rules["topics"]] if rules.get("topics") else [])
        + regex_problems("copy_from.exclude", [rules["exclude"]] if rules.get("exclude") else [])
        + regex_problems("copy_from.exclude_configs", rules.get("exclude_configs"))
    )
    version_known = True
    if rules.get("mirrormaker_version"):
        try:
            KafkaVersion.parse(rules["mirrormaker_version"])
        except ValueError as exc:
            problems.append("copy_from.mirrormaker_version: %s" % exc)
            version_known = False
    if rules.get("source_alias") is not None and not rules["source_alias"].strip():
        problems.append("copy_from.source_alias must not be empty")
    if rules.get("source_alias") and rules.get("rename_prefix"):
        problems.append("copy_from.rename_prefix and copy_from.source_alias both name the copies: give source_alias (with "
                        "replication_policy and replication_policy_separator) to name them as MirrorMaker 2 does, or rename_prefix alone")
    elif not rules.get("source_alias") and (rules.get("replication_policy") or rules.get("replication_policy_separator")):
        problems.append("copy_from.replication_policy and copy_from.replication_policy_separator need copy_from.source_alias "
                        "(the alias MirrorMaker 2 gives the source cluster)")
    elif version_known:
        try:
            _policy(rules)
        except ValueError as exc:
            problems.append("copy_from: %s" % exc)
    return problems


def target_name(name, rules):
    """The target topic of source topic `name`: MirrorMaker 2's remote-topic name (formatRemoteTopic), or rename_prefix + name."""
    policy = _policy(rules)
    return (rules.get("rename_prefix") or "") + name if policy is None else policy.remote_topic(rules["source_alias"], name)


def _internal_rule(rules):
    """The ReplicationPolicy whose is_internal_topic says which source topics MirrorMaker 2 never replicates: the flow's (policy,
    separator) with source_alias, else MirrorMaker 2's default naming; of the release copy_from.mirrormaker_version names."""
    return _policy(rules) or ReplicationPolicy(version=_version(rules))


def left_out_of_copies(name, rules):
    """Whether source topic `name` is never copied, whatever copy_from.topics and copy_from.exclude say.

    - Internal to MirrorMaker 2 of the release copy_from.mirrormaker_version (ReplicationPolicy.isInternalTopic), which never
      replicates it: Kafka's (`__*`, `.*`) and MirrorMaker 2's own (offset syncs, checkpoints, `mm2-*` Connect stores); before
      4.0 also every name ending in `.internal` or `-internal`, which 4.0 and later (KIP-1074) replicate. The release not given
      (None): the rule before 4.0, so that no topic a release may leave out is pre-created for it.
    - A heartbeats topic (`heartbeats`, `A.heartbeats`): MirrorMaker 2's own.
    - Any `mm2-` name: with a custom separator MirrorMaker 2's own topics (`mm2-offset-syncs_B_internal`) are recognisable by
      that prefix only.
    The deletion guard is kafka_topics.is_protected_topic, which does not depend on the release.
    """
    return _left_out(name, _internal_rule(rules))


def _left_out(name, policy):
    return policy.is_internal_topic(name) or _DEFAULT_NAMING.is_heartbeats_topic(name) or name.startswith("mm2-")


def selected_source_topics(source_topics, rules):
    """Names of the source topics to copy: not internal (Kafka's flag, left_out_of_copies by the release in
    copy_from.mirrormaker_version), matching `topics`, not matching `exclude` (whole-name regexes)."""
    wanted = NameFilter([rules.get("topics") or ".*"], [rules["exclude"]] if rules.get("exclude") else [])
    policy = _internal_rule(rules)
    return wanted.select(name for name, topic in source_topics.items()
                         if not topic.get("internal") and not _left_out(name, policy))


def copied_entries(source_topics, source_overrides, rules, target_live_brokers):
    """kafka_topic entries that make the target match the source: partition counts and per-topic config overrides.

    source_topics: read_topics() of the source; source_overrides: {topic: {key: value}} of per-topic overrides;
    rules: copy_from options (topics, exclude, rename_prefix or source_alias with replication_policy and
    replication_policy_separator, replication_factor, exclude_configs).
    The replication factor is copy_from.replication_factor, else the source's capped at the target's live brokers.
    """
    excluded_configs = [re.compile(pattern) for pattern in rules.get("exclude_configs") or []]
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
                name=target_name(name, rules),
                state="present",
                partitions=topic["partitions"],
                replication_factor=rules.get("replication_factor") or min(topic["replication_factor"], target_live_brokers),
                configs=configs,
                keep_more_partitions=True,
            )
        )
    return entries


def merge_entries(copied, explicit):
    """Copied entries with explicit ones appended; an explicit entry replaces the copied entry of the same target name."""
    explicit_names = {entry.get("name") for entry in explicit}
    return [entry for entry in copied if entry["name"] not in explicit_names] + list(explicit)


def _undone_by_sync(entry_configs, copied_configs, excluded_configs, replaces_all):
    """{key: value} of an explicit entry's configs that a topic config sync changes back: whatever differs from the source's
    override (the copy's), except, with IncrementalAlterConfigs, the keys config.properties.exclude leaves alone."""
    return {key: value for key, value in sorted(entry_configs.items())
            if canonical_config_value(value) != canonical_config_value(copied_configs.get(key))
            and (replaces_all or not any(pattern.fullmatch(key) for pattern in excluded_configs))}


def _sync_rule(version, replaced, incremental):
    """(how the sync undoes them, {key: value} undone) for MirrorMaker 2 of `version` (None: unknown), or None."""
    if version is None:
        return ("MirrorMaker 2 sets it back to the source's configs (from Kafka 3.5 keeping config.properties.exclude keys; "
                "before 3.5 replacing all of them, excluded keys too)", replaced) if replaced else None
    if version < INCREMENTAL_ALTER_CONFIGS_SINCE:
        return ("MirrorMaker 2 of Kafka %s replaces all of its configs with the source's (AlterConfigs, before 3.5)" % (version,),
                replaced) if replaced else None
    return ("MirrorMaker 2 of Kafka %s sets it back to the source's configs and deletes overrides the source does not have "
            "(IncrementalAlterConfigs, 3.5+; config.properties.exclude keys are kept)" % (version,), incremental) if incremental else None


def config_sync_warnings(copied, explicit, rules):
    """Warnings for explicit entries whose configs MirrorMaker 2's topic config sync will undo on the remote topics it mirrors.

    Only for copies named as MirrorMaker 2 names them (source_alias) while it syncs topic configs (sync_topic_configs,
    MirrorMaker's sync.topic.configs.enabled, on by default); the rule follows mirrormaker_version (unknown: both rules).
    """
    if not rules.get("source_alias") or not rules.get("sync_topic_configs", True):
        return []
    version = KafkaVersion.parse(rules["mirrormaker_version"]) if rules.get("mirrormaker_version") else None
    copied_by_name = {entry["name"]: entry for entry in copied}
    excluded = [re.compile(pattern) for pattern in rules.get("exclude_configs") or []]
    warnings = []
    for entry in explicit:
        copy = copied_by_name.get(entry.get("name"))
        if copy is None or entry.get("state") == "absent" or not entry.get("configs"):
            continue
        rule = _sync_rule(version, _undone_by_sync(entry["configs"], copy["configs"], excluded, replaces_all=True),
                          _undone_by_sync(entry["configs"], copy["configs"], excluded, replaces_all=False))
        if rule is None:
            continue
        how, undone = rule
        warnings.append("%s sets %s on %s, the remote topic of %s: %s at every topic config sync (sync.topic.configs.interval.seconds, "
                        "600 s by default), so they do not stay. Set them on the source topic, or turn the sync off "
                        "(sync.topic.configs.enabled=false, the mirrormaker2 role's flow option sync_topic_configs) and set "
                        "copy_from.sync_topic_configs=false"
                        % (entry.get("label", entry["name"]), ", ".join("%s=%s" % item for item in undone.items()), entry["name"],
                           copy["label"], how))
    return warnings
