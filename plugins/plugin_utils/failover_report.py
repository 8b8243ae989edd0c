# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failover role's decisions, for its filters: which settings are missing, and the report of what the failover did.

Pure: the role calls these through filters kafkaops.mirror.failover_missing and kafkaops.mirror.failover_report.
"""
from __future__ import annotations


def missing_settings(aliases, groups_bootstrap):
    """Messages for what the failover needs and lacks.

    aliases: [(variable, value, group it defaults from)]; groups_bootstrap: [(group, first host or None, bootstrap servers or None)].
    """
    missing = ["%s (default: kafka_cluster_alias of the group %s)" % (variable, group) for variable, value, group in aliases if not value]
    for group, host, servers in groups_bootstrap:
        if host is None:
            missing.append("inventory group %s with at least one host" % group)
        elif servers is None:
            missing.append("kafka_bootstrap_servers for group %s (not set for its host %s)" % (group, host))
    return missing


def _group_line(group):
    actions = ", ".join("%s=%s" % item for item in sorted(group["actions"].items()))
    active = " - ACTIVE on the target, left untouched" if group["status"] == "refused_active" else ""
    return "group %s: %s (%s)%s" % (group["group"], group["status"], actions, active)


def _row_line(row, mode):
    preview = row.get("preview") or {}
    exact = "" if row.get("exact_offset") is None else ", exact %s" % row["exact_offset"]
    # A MirrorMaker 1 row: the group's offsets of every source partition of the topic (partitions are not kept).
    mm1 = row.get("source_offsets") is not None
    source = ("offsets %s" % ", ".join("%s:%s" % item for item in sorted(row["source_offsets"].items()))) if mm1 else row["source_offset"]
    line = "  %s[%s] source %s -> target %s (%s%s): %s; %s" % (
        row["topic"], row["partition"], source, row["translated_offset"], row.get("basis") or "no translation", exact,
        mode if row["action"] == "commit" else row["action"], row["reason"])
    if preview:
        line += " | preview %s: re-read %s (%s from %s), skipped %s - %s" % (
            preview["status"], row.get("re_read"), preview["re_read"], "the partition's start" if mm1 else "MirrorMaker's offset",
            preview["skipped"], preview["detail"])
    return line


def report(result, check_mode, verify, target_bootstrap, target_alias, replication_policy):
    """{lines, would_skip, totals, renames, refused, untranslated, committed} from kafka_mirror_offsets' result."""
    mode = "would commit (check mode)" if check_mode else "committed"
    lines = []
    for group in result["groups"]:
        lines.append(_group_line(group))
        lines.extend(_row_line(row, mode) for row in result["offsets"] if row["group"] == group["group"])
    totals = result.get("preview_totals")
    if verify:
        lines.append("preview: %s partition(s) counted from the records, %s at their exact position; %s record(s) read again (%s from "
                     "MirrorMaker's translated offsets), %s skipped; %s not verifiable"
                     % (totals["partitions"], totals["exact"], totals["re_read"], totals["re_read_translated"], totals["skipped"],
                        totals["unverified"]))
    servers = target_bootstrap if isinstance(target_bootstrap, str) else ",".join(target_bootstrap)
    lines.append("consumers must change: bootstrap.servers=%s (cluster %s)" % (servers, target_alias))
    renames = {row["source_topic"]: row["topic"] for row in result["offsets"] if row.get("source_topic") and row["source_topic"] != row["topic"]}
    lines.extend("  subscribe to %s instead of %s (%s replication policy)" % (target, source, replication_policy)
                 for source, target in sorted(renames.items()))
    if not renames:
        lines.append("  topic names stay the same (%s)" % ("MirrorMaker 1 keeps them" if replication_policy == "MirrorMaker 1"
                                                           else "%s replication policy" % replication_policy))
    lines.extend("NOT TRANSLATED (nothing committed, never guessed): %s" % entry for entry in result["untranslated"])
    return dict(lines=lines, would_skip=result["would_skip"], totals=totals, renames=renames, refused=result["refused"],
                untranslated=result["untranslated"], committed=result["committed"])
