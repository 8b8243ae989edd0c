# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only facts about one Kafka cluster as seen from the host the module runs on, and the preflight findings.

Used by the kafka_cluster_info module (and through it the preflight role).
- gather(connection, params): bootstrap, advertised brokers (each resolved and TCP-probed from here), Kafka version
  from ApiVersions, broker configs when describable, a CreateTopics dry run (validate_only: nothing is created).
  Requests that go to advertised addresses are skipped when any of them is unusable from here (they would only time out).
- evaluate(facts, expectations): findings, each {severity: error|warning|info, check, cluster, message, fix}. Pure.
- summary_row(facts, findings): one line per cluster for the preflight table.
"""
from __future__ import annotations

import socket

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import (
    HOSTS_SYNC_FIX,
    IP_ADVERTISING_FIX,
    KafkaConnectionError,
    KafkaError,
    principal_of,
    probe_address,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.acls import PROBE_TOPIC
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.findings import ERROR, SEVERITIES, finding, finding_text, min_insync_findings
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.keys import MAX_AUTO_REPLICATION_FACTOR  # how the mirrormaker2 role sizes 'auto'
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import FEATURES, KafkaVersion, broker_too_old, requires

try:
    from kafka.admin import ConfigResource, ConfigResourceType
    from kafka.errors import for_code
    from kafka.protocol.broker_version_data import infer_broker_version_from_api_versions
except ImportError:
    # _kafka.client.ensure_kafka_python() reports the missing library before any of this is used.
    ConfigResource = ConfigResourceType = for_code = infer_broker_version_from_api_versions = None

BROKER_CONFIG_KEYS = (
    "min.insync.replicas",
    "auto.create.topics.enable",
    "default.replication.factor",
    "offsets.topic.replication.factor",
    "num.partitions",
)
FEATURE_LABELS = {
    "mm2": "MirrorMaker 2",
    "sync_group_offsets": "sync.group.offsets",
    "identity_policy": "identity replication policy",
    "offset_syncs_location": "offset-syncs.topic.location",
    "dedicated_rest": "dedicated-mode REST",
    "exactly_once": "exactly-once",
}


def mm2_features(version):
    """{feature: {supported, since, kip, label}} for a KafkaVersion (None: unknown)."""
    features = {}
    for name, (since, kip) in FEATURES.items():
        features[name] = dict(supported=None if version is None else version >= since, since="%d.%d" % (since.major, since.minor),
                              kip=kip, label=FEATURE_LABELS.get(name, name))
    return features


def _is_authorization_error(name):
    return "Authorization" in name or "Authentication" in name


def gather(connection, params):
    """Facts about the cluster of `connection` (a KafkaConnection that has not been used yet)."""
    alias = params.get("cluster_alias") or ",".join(params["bootstrap_servers"])
    facts = dict(cluster_alias=alias, bootstrap_servers=list(params["bootstrap_servers"]), bootstrap_reachable=False, bootstrap_error=None,
                 probed_from=socket.gethostname(), cluster_id=None, controller_id=None, brokers=[], broker_count=0, kafka_version=None,
                 version_source=None, api_versions={}, mm2_features=mm2_features(None), broker_configs={}, broker_configs_error=None,
                 can_create_topics=None, create_topics_error=None, denied=[], skipped=[], anomalies=[],
                 principal=principal_of(params))
    try:
        cluster = connection.cluster()
    except KafkaConnectionError as exc:
        facts["bootstrap_error"] = str(exc)
        return facts
    facts["bootstrap_reachable"] = True
    facts["cluster_id"] = cluster["cluster_id"]
    facts["controller_id"] = cluster["controller_id"]
    for broker in cluster["brokers"]:
        entry = dict(broker, problem=None, usable=None)
        if params.get("probe_advertised", True):
            entry["problem"] = probe_address(broker["host"], broker["port"], timeout=params.get("probe_timeout") or 5)
            entry["usable"] = entry["problem"] is None
        facts["brokers"].append(entry)
    facts["broker_count"] = len(facts["brokers"])

    # The brokers' addresses were probed above: the admin client is not asked to probe them again. ApiVersions came from
    # the bootstrap connection (or the pinned api_version).
    admin = connection.admin(check_brokers=False)
    versions = admin.api_versions()
    facts["api_versions"] = {getattr(key, "name", str(key)): [int(low), int(high)] for key, (low, high) in sorted(versions.items(), key=lambda kv: int(kv[0]))}
    if params.get("api_version"):
        facts["version_source"] = "pinned (api_version option)"
        version = KafkaVersion.parse(params["api_version"])
    else:
        facts["version_source"] = "ApiVersions"
        inferred = infer_broker_version_from_api_versions({int(key): value for key, value in versions.items()})
        version = KafkaVersion.parse(".".join(str(part) for part in inferred)) if inferred else None
    if version is not None:
        facts["kafka_version"] = "%d.%d" % (version.major, version.minor)
    facts["mm2_features"] = mm2_features(version)

    if any(broker["usable"] is False for broker in facts["brokers"]):
        facts["skipped"].append("broker configs and the topic-creation dry run: they go to the advertised addresses, which are unusable from here")
        return facts
    _describe_broker_configs(admin, facts)
    if params.get("check_topic_creation"):
        _create_topics_dry_run(admin, facts, params.get("probe_topic") or PROBE_TOPIC)
    if params.get("required_acls"):
        _check_acls(admin, facts, params["required_acls"])
    return facts


def _describe_broker_configs(admin, facts):
    broker_id = facts["controller_id"] if facts["controller_id"] is not None and facts["controller_id"] >= 0 else facts["brokers"][0]["node_id"]
    # All keys: not every broker implements the key filter of DescribeConfigs.
    resource = ConfigResource(ConfigResourceType.BROKER, str(broker_id))
    try:
        answer = admin.describe_configs([resource], config_filter="all")
    except KafkaError as exc:
        name = type(exc).__name__
        facts["broker_configs_error"] = f"{name}: {exc}"
        if _is_authorization_error(name):
            facts["denied"].append(dict(operation="DescribeConfigs", resource=f"broker {broker_id}", error=name))
        return
    entries = (answer.get("broker") or answer.get("BROKER") or {}).get(str(broker_id), {})
    facts["broker_configs"] = {key: entries[key]["value"] for key in BROKER_CONFIG_KEYS if key in entries and entries[key].get("value") is not None}


def _create_topics_dry_run(admin, facts, probe_topic):
    """CreateTopics with validate_only: the broker checks authorization and settings and creates nothing. `probe_topic` is a
    name of the kind MirrorMaker creates (a remote topic of the flow): a principal allowed to create only those (a prefixed
    ACL) is not refused for another name."""
    existed = probe_topic in admin.list_topics()
    try:
        answer = admin.create_topics({probe_topic: {"num_partitions": 1, "replication_factor": 1}}, validate_only=True, raise_errors=False)
    except KafkaError as exc:
        name = type(exc).__name__
        facts["create_topics_error"] = f"{name}: {exc}"
        if _is_authorization_error(name):
            facts["can_create_topics"] = False
            facts["denied"].append(dict(operation="CreateTopics", resource=f"topic {probe_topic}", error=name))
        return
    topics = answer.get("topics") if isinstance(answer, dict) else None
    code = topics[0].get("error_code", 0) if topics else 0
    if code in (0, 36):  # none, TopicAlreadyExists
        facts["can_create_topics"] = True
        if not existed and probe_topic in admin.list_topics():
            facts["anomalies"].append(f"the broker ignored validate_only and created topic {probe_topic}: delete it "
                                      f"(this broker does not implement CreateTopics validate_only)")
        return
    error = for_code(code)
    name = error.__name__
    message = topics[0].get("error_message") or ""
    facts["create_topics_error"] = f"{name}: {message}".rstrip(": ")
    if _is_authorization_error(name):
        facts["can_create_topics"] = False
        facts["denied"].append(dict(operation="CreateTopics", resource=f"topic {probe_topic}", error=name))


def _check_acls(admin, facts, required):
    """Each of `required` (the ACLs the flow's MirrorMaker principal needs here, _mm2/acls.py), checked as the connection's
    principal: on the topics that exist and on the cluster, the operations the brokers say it may do (Metadata's authorized
    operations, KIP-430, Kafka 2.3+); where no topic exists yet, whether it may create one (CreateTopics with validate_only).
    Groups and operations on topics that do not exist yet cannot be asked without changing something; they are listed in
    facts["acls_unverified"]."""
    facts["acls_checked"], facts["acls_unverified"] = 0, []
    try:
        # pylint: disable-next=protected-access
        metadata = admin._manager.run(admin._get_cluster_metadata, None)  # topics and the cluster's operations in one answer
    except ValueError as exc:  # kafka-python 3.0.12 cannot decode some brokers' authorized operations (tansu 0.6.0's bit 15)
        facts["acls_unverified"].append(f"every ACL: the brokers' authorized operations could not be read ({exc})")
        return
    visible = {topic["name"]: topic for topic in metadata["topics"] if not topic.get("error_code")}
    # An empty list is "none" only from brokers that report operations at all (some topic has some).
    reported = any(topic.get("authorized_operations") for topic in visible.values())
    wanted = {}
    for acl in required:
        wanted.setdefault((acl["resource_type"], acl["pattern_type"], acl["resource_name"]), []).append(acl["operation"])
    for (resource_type, pattern_type, name), operations in wanted.items():
        what = f"{resource_type} {pattern_type} {name}"
        if resource_type == "cluster":
            # The brokers report a principal's operations on the cluster only to one that may Describe it (KafkaApis'
            # Metadata handler, 2.3+), which MirrorMaker's principal need not.
            allowed = set(metadata.get("authorized_operations") or ())
            if allowed:
                _check_operations(facts, allowed, operations, "the cluster", what, reported)
            else:
                facts["acls_unverified"].append(f"{what} {', '.join(operations)} (only a principal that may Describe the cluster is told)")
            continue
        if resource_type != "topic":
            facts["acls_unverified"].append(what)
            continue
        matching = sorted(topic for topic in visible if topic == name or (pattern_type == "prefixed" and topic.startswith(name)))
        if pattern_type == "literal" and not matching:
            if (admin.describe_topics([name]) or [{}])[0].get("error_code") == 29:  # TOPIC_AUTHORIZATION_FAILED
                _deny(facts, "DESCRIBE", f"topic {name}", "TopicAuthorizationFailedError", what)
                continue
        for topic in matching:
            _check_operations(facts, set(visible[topic].get("authorized_operations") or ()), operations, f"topic {topic}", what, reported)
        if not matching and "CREATE" in operations:
            probe = name if pattern_type == "literal" else name + PROBE_TOPIC
            answer = admin.create_topics({probe: {"num_partitions": 1, "replication_factor": 1}}, validate_only=True, raise_errors=False)
            topics = answer.get("topics") if isinstance(answer, dict) else None
            code = topics[0].get("error_code", 0) if topics else 0
            facts["acls_checked"] += 1
            if code and _is_authorization_error(for_code(code).__name__):
                _deny(facts, "CREATE", f"topic {probe}", for_code(code).__name__, what)
        if not matching:
            facts["acls_unverified"].append(f"{what} {', '.join(op for op in operations if op != 'CREATE')} (no such topic yet)")


def _check_operations(facts, allowed, operations, resource, acl, reported):
    if not allowed and not reported:
        facts["acls_unverified"].append(f"{acl} (the brokers do not report authorized operations)")
        return
    facts["acls_checked"] += 1
    for operation in operations:
        if operation not in allowed and "ALL" not in allowed:
            _deny(facts, operation, resource, "not authorized", acl)


def _deny(facts, operation, resource, error, acl):
    facts["denied"].append(dict(operation=operation, resource=resource, error=error, acl=f"ALLOW {operation} on {acl}"))


def evaluate(facts, expectations):
    """Findings for one cluster. expectations: replication_factors, internal_replication_factors ({what: int}),
    required_features ([feature]) and mirrormaker_version (the KafkaVersion that runs MirrorMaker, which they are gated on),
    expected_topics ([name])."""
    alias = facts["cluster_alias"]
    findings = []
    if not facts["bootstrap_reachable"]:
        findings.append(finding("error", "bootstrap", alias, f"cluster {alias}: no metadata from {', '.join(facts['bootstrap_servers'])} "
                                                             f"(from {facts['probed_from']}): {facts['bootstrap_error']}",
                                "check kafka_bootstrap_servers, that the brokers run and that the port is open from the MirrorMaker host; "
                                "names of the other cluster's nodes resolve there only after role kafkaops.mirror.hosts_sync (the preflight "
                                "role reaches them before it, at the addresses hosts_sync is about to write, with "
                                "preflight_resolve_through_hosts_sync: true, as playbooks/mirror.yml and preflight.yml set it)"))
        return findings
    for broker in facts["brokers"]:
        if broker["problem"]:
            findings.append(finding(
                "error", "advertised_address", alias,
                f"cluster {alias}: broker {broker['node_id']} advertises {broker['host']}:{broker['port']}, which {broker['problem']} "
                f"from {facts['probed_from']}; every client (MirrorMaker too) must reach each broker at its advertised address",
                f"{HOSTS_SYNC_FIX}, {IP_ADVERTISING_FIX}"))
    version = facts["kafka_version"]
    features = facts["mm2_features"]
    release = expectations.get("mirrormaker_version")
    text = f"cluster {alias}: Kafka {version or 'unknown'} ({facts['version_source']})"
    if release is not None:
        allowed = ", ".join(f"{f['label']} {'yes' if f['supported'] else 'no'} ({f['since']}+)"
                            for name, f in mm2_features(release).items() if name != "mm2")
        text += f"; MirrorMaker runs Kafka {release}, whose MirrorMaker 2 features are: {allowed}"
    findings.append(finding("info", "kafka_version", alias, text))
    if version is not None and features["mm2"]["supported"] is False:
        findings.append(finding("warning", "kafka_version", alias,
                                f"cluster {alias}: Kafka {version} is older than 2.4: MirrorMaker 2 (KIP-382) needs 2.4 brokers for every feature; "
                                f"use MirrorMaker 1 (mirrormaker2_engine mm1) or upgrade"))
    findings.extend(_release_findings(alias, version, expectations))
    count = facts["broker_count"]
    for what, factor in sorted((expectations.get("replication_factors") or {}).items()):
        if factor is not None and count and int(factor) > count:
            findings.append(finding("error", "replication_factor", alias,
                                    f"cluster {alias}: {what} asks for replication factor {factor}, but the cluster has {count} broker(s); "
                                    f"topic creation fails with InvalidReplicationFactor",
                                    f"set {what} to {count} or less (or 'auto')"))
    configs = facts["broker_configs"]
    min_isr = configs.get("min.insync.replicas")
    for what, factor in sorted((expectations.get("internal_replication_factors") or {}).items()):
        if factor is None:
            continue
        if count and int(factor) > count:
            findings.append(finding("error", "replication_factor", alias,
                                    f"cluster {alias}: {what} asks for replication factor {factor}, but the cluster has {count} broker(s); "
                                    f"MirrorMaker fails at start creating its internal topics (MM2 defaults to 3)",
                                    f"set {what} to {count} or less"))
    checked = dict(expectations.get("replication_factors") or {})
    checked.update(expectations.get("internal_replication_factors") or {})
    for what, factor in sorted(checked.items()):
        findings.extend(min_insync_findings(alias, what, factor, min_isr))
    if expectations.get("internal_replication_factors") and min_isr is None and not facts["skipped"]:
        findings.append(finding("info", "min_insync_replicas", alias,
                                f"cluster {alias}: min.insync.replicas is not describable ({facts['broker_configs_error'] or 'not returned'}); "
                                f"internal-topic replication factors were checked against the broker count only"))
    findings.extend(_creation_findings(facts, expectations, alias))
    for denial in facts["denied"]:
        if denial.get("acl"):
            findings.append(finding("error", "acl", alias,
                                    f"cluster {alias}: {facts['principal']} may not {denial['operation']} on {denial['resource']} ({denial['error']})",
                                    f"add the ACL {denial['acl']} for MirrorMaker's principal (module kafkaops.mirror.kafka_mirror_acls, "
                                    f"docs/security.md; a Ranger policy on an ESP cluster)"))
            continue
        findings.append(finding("error", "acl", alias,
                                f"cluster {alias}: {denial['operation']} on {denial['resource']} was denied to {facts['principal']} ({denial['error']})",
                                f"grant the principal MirrorMaker uses {denial['operation']} on the cluster/topics (kafka-acls.sh --add ...), or use "
                                f"an authorized principal"))
    for skipped in facts["skipped"]:
        findings.append(finding("warning", "skipped", alias, f"cluster {alias}: skipped {skipped}"))
    for anomaly in facts["anomalies"]:
        findings.append(finding("warning", "broker_anomaly", alias, f"cluster {alias}: {anomaly}"))
    return findings


def _release_findings(alias, cluster_version, expectations):
    """MirrorMaker features are gated on the Kafka release that runs MirrorMaker (its jars), not on the cluster's brokers:
    a 3.9 MirrorMaker syncs group offsets between 2.4 clusters, a 2.4.1 one cannot whatever the brokers run. The brokers
    matter only where that release's clients cannot talk to them (KIP-896)."""
    release = expectations.get("mirrormaker_version")
    findings = []
    if release is None:
        return findings
    for feature in expectations.get("required_features") or []:
        label, since = FEATURE_LABELS.get(feature, feature), FEATURES[feature][0]
        message = requires(feature, release, label)
        if message:
            findings.append(finding("error", "version_gate", alias, f"cluster {alias}: {message}",
                                    f"turn {label} off for this flow, or run MirrorMaker from a Kafka {since.major}.{since.minor}+ "
                                    f"installation (mirrormaker2_kafka_home)"))
    if cluster_version is not None:
        message = broker_too_old(release, KafkaVersion.parse(cluster_version))
        if message:
            findings.append(finding("error", "version_gate", alias, f"cluster {alias}: {message}",
                                    f"run MirrorMaker from an older Kafka installation, or upgrade cluster {alias}"))
    return findings


def _creation_findings(facts, expectations, alias):
    if facts["can_create_topics"] is None and facts["create_topics_error"] is None:
        return []
    auto_create = facts["broker_configs"].get("auto.create.topics.enable")
    expected = expectations.get("expected_topics") or []
    if facts["can_create_topics"]:
        return [finding("info", "topic_creation", alias, f"cluster {alias}: topics can be created (CreateTopics dry run accepted; "
                                                         f"auto.create.topics.enable={auto_create if auto_create is not None else 'unknown'})")]
    if facts["can_create_topics"] is False:
        severity = "warning" if expected and expectations.get("expected_topics_present") else "error"
        return [finding(severity, "topic_creation", alias,
                        f"cluster {alias}: topics cannot be created ({facts['create_topics_error']}); MirrorMaker creates remote and internal "
                        f"topics itself" + ("; the expected topics exist already" if severity == "warning" else ""),
                        "grant CreateTopics (and DescribeConfigs/AlterConfigs) to MirrorMaker's principal, or pre-create every topic "
                        "(role kafkaops.mirror.kafka_topics)")]
    return [finding("warning", "topic_creation", alias,
                    f"cluster {alias}: the CreateTopics dry run failed ({facts['create_topics_error']}), so topic creation is unverified")]


def summary_row(facts, findings):
    """Counts and key facts for the preflight table."""
    counts = {severity: sum(1 for f in findings if f["severity"] == severity) for severity in SEVERITIES}
    usable = sum(1 for broker in facts["brokers"] if broker["usable"])
    return dict(
        cluster=facts["cluster_alias"],
        bootstrap="ok" if facts["bootstrap_reachable"] else "FAILED",
        brokers=facts["broker_count"],
        advertised_ok="%d/%d" % (usable, facts["broker_count"]),
        kafka_version=facts["kafka_version"] or "?",
        min_insync_replicas=facts["broker_configs"].get("min.insync.replicas", "?"),
        auto_create_topics=facts["broker_configs"].get("auto.create.topics.enable", "?"),
        can_create_topics={True: "yes", False: "NO", None: "?"}[facts["can_create_topics"]],
        errors=counts["error"],
        warnings=counts["warning"],
    )


def run_cluster_info(connection, params):
    """The module result: facts, findings, summary."""
    facts = gather(connection, params)
    expectations = dict(
        replication_factors=normalize_factors(params.get("replication_factors"), facts["broker_count"]),
        internal_replication_factors=normalize_factors(params.get("internal_replication_factors"), facts["broker_count"]),
        required_features=params.get("required_features") or [],
        mirrormaker_version=KafkaVersion.parse(params["mirrormaker_version"]) if params.get("mirrormaker_version") else None,
        expected_topics=params.get("expected_topics") or [],
    )
    if expectations["expected_topics"] and facts["bootstrap_reachable"] and not facts["skipped"]:
        existing = set(connection.admin().list_topics())
        expectations["expected_topics_present"] = all(topic in existing for topic in expectations["expected_topics"])
    findings = evaluate(facts, expectations)
    facts["findings"] = findings
    facts["summary"] = summary_row(facts, findings)
    facts["errors"] = [finding_text(f) for f in findings if f["severity"] == ERROR]
    return facts


def option_problems(params):
    problems = []
    for option in ("replication_factors", "internal_replication_factors"):
        for what, factor in (params.get(option) or {}).items():
            if factor is None or str(factor) == "auto":
                continue
            try:
                if int(factor) < 1:
                    problems.append(f"{option}.{what} must be a positive integer, got {factor!r}")
            except (TypeError, ValueError):
                problems.append(f"{option}.{what} must be a positive integer or 'auto', got {factor!r}")
    unknown = [feature for feature in params.get("required_features") or [] if feature not in FEATURES]
    if unknown:
        problems.append(f"required_features has unknown entries {', '.join(unknown)} (known: {', '.join(sorted(FEATURES))})")
    if params.get("required_features") and not params.get("mirrormaker_version"):
        problems.append("required_features needs mirrormaker_version: MirrorMaker's features depend on the Kafka release that runs it, "
                        "not on the cluster's brokers")
    if params.get("mirrormaker_version"):
        try:
            KafkaVersion.parse(params["mirrormaker_version"])
        except ValueError as exc:
            problems.append(f"mirrormaker_version: {exc}")
    if params.get("probe_timeout") is not None and params["probe_timeout"] <= 0:
        problems.append("probe_timeout must be positive")
    return problems


def normalize_factors(mapping, broker_count=None):
    """{what: int}: 'auto' becomes min(3, broker count) as the mirrormaker2 role sizes it (dropped when the count is unknown)."""
    factors = {}
    for what, factor in (mapping or {}).items():
        if factor is None:
            continue
        if str(factor) == "auto":
            if broker_count:
                factors[f"{what} (auto)"] = min(MAX_AUTO_REPLICATION_FACTOR, broker_count)
            continue
        factors[what] = int(factor)
    return factors
