# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight role's decisions, for its filters: what each cluster must support, and the report of all findings.

- missing_settings(): the inventory settings the preflight needs and lacks.
- cluster_checks(): per inventory cluster, the replication factors and MirrorMaker features kafka_cluster_info checks.
- clock_findings(): clock offsets of the hosts from (controller before, host time, controller after) readings.
- stale_state_flows(): the MirrorMaker flows whose offset syncs and checkpoints this host can read (kafka_mirror_status).
- report(): findings of every cluster, the clocks and the stale MirrorMaker state, deferred checks turned into warnings,
  the summary table.
Pure: the role's templates only call these through filters kafkaops.mirror.preflight_clusters / preflight_stale_state_flows /
preflight_report.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.findings import ERROR, INFO, WARNING, finding, finding_text
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.acls import PROBE_TOPIC, SOURCE, TARGET, acl_names, for_cluster, mirrormaker_acls
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import OFFSET_SYNCS_LOCATIONS, FlowNames
_TABLE_ROW = "%-12s %-9s %-7s %-10s %-6s %-8s %-11s %-10s %-6s %-8s"
_TABLE_COLUMNS = ("cluster", "bootstrap", "brokers", "advertised", "kafka", "min.isr", "auto-create", "can-create", "errors", "warnings")
_SUMMARY_KEYS = ("cluster", "bootstrap", "brokers", "advertised_ok", "kafka_version", "min_insync_replicas", "auto_create_topics",
                 "can_create_topics", "errors", "warnings")
_LABELS = {ERROR: "ERROR", WARNING: "WARN ", INFO: "info "}
DEFERRED_NOTE = " (deferred: a later stage fixes this and checks again)"


def _servers(value):
    return [part.strip() for part in value.split(",") if part.strip()] if isinstance(value, str) else list(value or [])


def missing_settings(group_names, clusters, target_alias):
    """Messages for every inventory setting the preflight needs and lacks; clusters: {group, host, alias, bootstrap_servers}."""
    found = {cluster["group"]: cluster for cluster in clusters}
    missing = []
    for group in group_names:
        cluster = found.get(group)
        if cluster is None:
            missing.append("inventory group %s with at least one host" % group)
            continue
        for variable, key in (("kafka_cluster_alias", "alias"), ("kafka_bootstrap_servers", "bootstrap_servers")):
            if not cluster.get(key):
                missing.append("%s for group %s (not set for its host %s)" % (variable, group, cluster["host"]))
    aliases = [cluster["alias"] for cluster in clusters if cluster.get("alias")]
    if not target_alias:
        missing.append("kafka_cluster_alias of group secondary_kafka (or preflight_target_alias): the alias of the cluster MirrorMaker writes to")
    elif aliases and target_alias not in aliases:
        missing.append("a cluster with alias %s (preflight_target_alias); the clusters are %s" % (target_alias, ", ".join(aliases)))
    return missing


def flow_acls(flows, alias, offset_syncs_topic_location, policy=None):
    """(the ACLs MirrorMaker's principal needs on cluster `alias` for `flows` (mirrormaker2_flows), a topic name of the kind it
    creates there for the topic-creation dry run or None). A flow whose topic or group patterns no ACL can express (MM2's
    default .* among them) is left out: its principal needs ACLs on every topic or group, which a cluster-wide check would not
    narrow down."""
    needed, probe = [], None
    for flow in flows or []:
        if alias not in (flow.get("source"), flow.get("target")):
            continue
        try:
            acls = mirrormaker_acls(flow["source"], flow["target"], list(flow.get("topics") or [".*"]), list(flow.get("groups") or [".*"]),
                                    offset_syncs_topic_location, policy or "default")
        except ValueError:
            continue
        needed += for_cluster(acls, SOURCE if flow["source"] == alias else TARGET)
        if flow["target"] == alias and probe is None:
            pattern_type, name = acl_names(list(flow.get("topics") or [".*"]))[0]
            probe = FlowNames(flow["source"], alias, policy or "default").remote_topic(name + PROBE_TOPIC if pattern_type == "prefixed" else name)
    return [{key: acl[key] for key in ("resource_type", "pattern_type", "resource_name", "operation")} for acl in needed], probe


def cluster_checks(clusters, target_alias, source_alias, offset_syncs_topic_location, replication_factor, internal_replication_factor,
                   topics=None, extra_replication_factors=None, features=None, check_topic_creation=True, flows=None, policy=None):
    """One entry per cluster {group, host, alias, bootstrap_servers}: its role in the flow and what kafka_cluster_info checks there.

    The target gets the remote topics' and heartbeats/checkpoints topics' replication factors, the features and the
    topic-creation check; the cluster that holds the offset-syncs topic (offset_syncs_topic_location) gets its factor. Each
    cluster of a flow in `flows` gets the ACLs MirrorMaker's principal needs there (flow_acls).
    """
    if offset_syncs_topic_location not in OFFSET_SYNCS_LOCATIONS:
        raise ValueError("offset_syncs_topic_location must be source or target, got %r" % (offset_syncs_topic_location,))
    topics = list(topics or [])
    checks = []
    for cluster in clusters:
        alias = cluster["alias"]
        is_target, is_source = alias == target_alias, alias == source_alias
        factors, internal = {}, {}
        if is_target:
            factors["remote topics (mirrormaker2_replication_factor)"] = replication_factor
            for topic in topics:
                if topic.get("replication_factor") is not None and str(topic["replication_factor"]) != "-1":
                    factors["kafka_topics_list " + str(topic.get("name"))] = topic["replication_factor"]
            internal["heartbeats/checkpoints topics (mirrormaker2_internal_replication_factor)"] = internal_replication_factor
        if (is_source and offset_syncs_topic_location == "source") or (is_target and offset_syncs_topic_location == "target"):
            internal["offset-syncs topic (mirrormaker2_internal_replication_factor)"] = internal_replication_factor
        factors.update((extra_replication_factors or {}).get(alias) or {})
        acls, probe = flow_acls(flows, alias, offset_syncs_topic_location, policy)
        checks.append(dict(
            group=cluster["group"], host=cluster["host"], alias=alias, bootstrap_servers=_servers(cluster["bootstrap_servers"]),
            role="target" if is_target else ("source" if is_source else "other"),
            replication_factors=factors, internal_replication_factors=internal,
            required_features=list(dict.fromkeys(features or [])) if is_target else [],
            check_topic_creation=bool(is_target and check_topic_creation),
            expected_topics=[topic["name"] for topic in topics if "name" in topic] if is_target else [],
            required_acls=acls, probe_topic=probe or PROBE_TOPIC,
        ))
    return checks


def clock_findings(readings, reference_host, max_skew_s):
    """(clocks, findings, summary line) from readings {host, time, before, after} (seconds; before/after on the controller).

    A host's offset is its time minus the controller's midpoint, known within half the round trip; two clocks are reported
    only when they differ by more than max_skew_s even after both uncertainties are taken off.
    """
    clocks = [dict(host=r["host"], offset=float(r["time"]) - (float(r["before"]) + float(r["after"])) / 2,
                   uncertainty=(float(r["after"]) - float(r["before"])) / 2) for r in readings or []]
    if not clocks:
        return clocks, [], "clocks: not compared"
    reference = next((clock for clock in clocks if clock["host"] == reference_host), clocks[0])
    findings = []
    for clock in clocks:
        if clock["host"] == reference["host"]:
            continue
        difference = clock["offset"] - reference["offset"]
        if abs(difference) - clock["uncertainty"] - reference["uncertainty"] > float(max_skew_s):
            findings.append(finding(
                ERROR, "clock_skew", None,
                "the clock of %s is %.1f s %s %s (more than %s s): record timestamps, lag by time and validation windows are off by as much"
                % (clock["host"], abs(difference), "ahead of" if difference > 0 else "behind", reference["host"], max_skew_s),
                "synchronize the clocks (chrony or ntpd against the same source) on both hosts"))
    offsets = [clock["offset"] for clock in clocks]
    line = "clocks: %d hosts, largest difference %.2f s (measured within +/-%.2f s, limit %s s)" % (
        len(clocks), max(offsets) - min(offsets), max(clock["uncertainty"] for clock in clocks), max_skew_s)
    return clocks, findings, line


def _unreadable(result):
    """Why this host cannot read the cluster of a kafka_cluster_info result, or None."""
    if result.get("failed"):
        return "its probe failed"
    if not result.get("bootstrap_reachable"):
        return "its bootstrap servers do not answer"
    if result.get("skipped") or any(broker.get("usable") is False for broker in result.get("brokers") or []):
        return "a broker's advertised address is unusable from here"
    return None


def stale_state_flows(cluster_results, flows, engine="mm2"):
    """{flows, skipped}: the enabled flows ({source, target, source_host, target_host} and their topic and group patterns)
    both of whose clusters answered kafka_cluster_info from this host, and a message for each flow left out.

    flows: the mirrormaker2_flows model ({source, target, enabled, topics, topics_exclude, groups, groups_exclude, ...}; the
    rest, such as properties that may hold secrets, is not copied). MirrorMaker 1 keeps no offset syncs or checkpoints.
    """
    if engine == "mm1":
        return dict(flows=[], skipped=[])
    clusters = {result["item"]["alias"]: result for result in cluster_results}
    chosen, skipped = [], []
    for flow in flows or []:
        if not flow.get("enabled", True):
            continue
        name = "%s->%s" % (flow["source"], flow["target"])
        reasons = ["cluster %s is not among the preflight's clusters" % alias if alias not in clusters else
                   "cluster %s: %s" % (alias, _unreadable(clusters[alias]))
                   for alias in (flow["source"], flow["target"]) if alias not in clusters or _unreadable(clusters[alias])]
        if reasons:
            skipped.append("the offset syncs and checkpoints of flow %s were not read (%s)" % (name, "; ".join(reasons)))
            continue
        entry = dict(source=flow["source"], target=flow["target"], source_host=clusters[flow["source"]]["item"]["host"],
                     target_host=clusters[flow["target"]]["item"]["host"])
        # As the mirrormaker2 role reads them: unset means every topic and group, an empty list none.
        entry.update(topics=flow.get("topics", [".*"]), groups=flow.get("groups", [".*"]))
        entry.update((key, flow[key]) for key in ("topics_exclude", "groups_exclude") if flow.get(key) is not None)
        chosen.append(entry)
    return dict(flows=chosen, skipped=skipped)


def _stale_state_lines(stale_state_results, stale_state_skipped):
    """(findings, table lines) of the kafka_mirror_status results of stale_state_flows' flows."""
    findings, lines = [], []
    for result in stale_state_results or []:
        found = result.get("stale_state") or []
        findings.extend(found)
        lines.append("MirrorMaker state of %s (%s and checkpoints): %s" % (
            result["flow"], result["offset_syncs_topic"], "%d stale finding(s)" % len(found) if found else "nothing stale"))
    findings.extend(finding(WARNING, "stale_state", None, message) for message in stale_state_skipped or [])
    return findings, lines


def _defer(item, deferred):
    if item["severity"] == ERROR and item["check"] in deferred:
        return dict(item, severity=WARNING, message=item["message"] + DEFERRED_NOTE)
    return item


def report(cluster_results, readings=None, reference_host=None, max_skew_s=5.0, deferred_checks=None, stale_state_results=None,
           stale_state_skipped=None):
    """{table, findings, errors, warnings, clusters, clocks, stale_state_read} of the preflight.

    cluster_results: the registered loop results of kafka_cluster_info (a failed probe becomes an error finding).
    deferred_checks: checks whose errors are reported as warnings because a later stage fixes them and checks again.
    stale_state_results: the registered loop results of kafka_mirror_status for stale_state_flows' flows; stale_state_skipped
    its messages about flows left out (warnings); both None when the state was not looked at. stale_state_read: it was, and
    every flow was read.
    """
    findings, rows = [], []
    for result in cluster_results:
        alias = result["item"]["alias"]
        if result.get("failed"):
            findings.append(finding(ERROR, "module", alias, "cluster %s: the probe failed: %s" % (alias, result.get("msg") or "no message")))
        else:
            findings.extend(result["findings"])
            rows.append(result["summary"])
    clocks, clock_problems, clock_line = clock_findings(readings, reference_host, max_skew_s)
    findings.extend(clock_problems)
    stale_findings, stale_lines = _stale_state_lines(stale_state_results, stale_state_skipped)
    findings.extend(stale_findings)
    table = [_TABLE_ROW % _TABLE_COLUMNS]
    table.extend(_TABLE_ROW % tuple(row[key] for key in _SUMMARY_KEYS) for row in rows)
    table.append(clock_line)
    table.extend(stale_lines)
    reported = [_defer(item, set(deferred_checks or [])) for item in findings]
    table.extend("%s %s" % (_LABELS[item["severity"]], finding_text(item, stop="")) for item in reported)
    return dict(table=table, findings=reported, clusters=rows, clocks=clocks,
                stale_state_read=stale_state_results is not None and not stale_state_skipped,
                errors=[finding_text(item, stop="") for item in reported if item["severity"] == ERROR],
                warnings=[finding_text(item, stop="") for item in reported if item["severity"] == WARNING])
