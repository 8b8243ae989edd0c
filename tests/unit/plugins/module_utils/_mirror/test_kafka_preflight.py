# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decision tables for the preflight findings (plugins/module_utils/_mirror/preflight.py evaluate, normalize_factors, option_problems)."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror import preflight as kp
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import KafkaVersion


def facts(version="3.6", brokers=3, problems=(), configs=None, can_create=None, create_error=None, denied=(), skipped=(), reachable=True):
    parsed = KafkaVersion.parse(version) if version else None
    return dict(
        cluster_alias="secondary", bootstrap_servers=["b:9092"], bootstrap_reachable=reachable, bootstrap_error=None if reachable else "timeout",
        probed_from="mm-host", cluster_id="c", controller_id=1,
        brokers=[dict(node_id=i, host=f"wn{i}", port=9092, rack=None, problem=problems[i] if i < len(problems) else None,
                      usable=not (i < len(problems) and problems[i])) for i in range(brokers)],
        broker_count=brokers, kafka_version=version, version_source="ApiVersions", api_versions={}, mm2_features=kp.mm2_features(parsed),
        broker_configs=configs or {}, broker_configs_error=None, can_create_topics=can_create, create_topics_error=create_error,
        denied=list(denied), skipped=list(skipped), anomalies=[], principal="SASL user 'mm' (SCRAM-SHA-512)",
    )


def checks(findings, severity):
    return sorted(f["check"] for f in findings if f["severity"] == severity)


@pytest.mark.parametrize("version, feature, supported", [
    ("2.4", "mm2", True), ("2.3", "mm2", False),
    ("2.6", "sync_group_offsets", False), ("2.7", "sync_group_offsets", True),
    ("2.8", "identity_policy", False), ("3.0", "identity_policy", True),
    ("3.4", "dedicated_rest", False), ("3.5", "dedicated_rest", True),
    ("3.4", "exactly_once", False), ("3.5", "exactly_once", True), ("4.1", "exactly_once", True),
])
def test_feature_gates(version, feature, supported):
    assert kp.mm2_features(KafkaVersion.parse(version))[feature]["supported"] is supported
    assert kp.mm2_features(None)[feature]["supported"] is None


# (facts kwargs, expectations, errors expected, warnings expected)
EVALUATE_TABLE = [
    (dict(), {}, [], []),
    (dict(reachable=False), {"replication_factors": {"x": 9}}, ["bootstrap"], []),  # nothing else is judged without metadata
    (dict(problems=["does not resolve (Name or service not known)"]), {}, ["advertised_address"], []),
    (dict(brokers=1), {"replication_factors": {"rf": 2}}, ["replication_factor"], []),
    (dict(brokers=3), {"replication_factors": {"rf": 3}}, [], []),
    (dict(brokers=1), {"internal_replication_factors": {"internal": 3}}, ["replication_factor"], []),
    (dict(configs={"min.insync.replicas": "2"}), {"internal_replication_factors": {"internal": 1}}, ["min_insync_replicas"], []),
    (dict(configs={"min.insync.replicas": "2"}), {"replication_factors": {"remote": 1}}, ["min_insync_replicas"], []),
    (dict(configs={"min.insync.replicas": "2"}), {"internal_replication_factors": {"internal": 2}}, [], ["min_insync_replicas"]),
    (dict(configs={"min.insync.replicas": "1"}), {"internal_replication_factors": {"internal": 1}}, [], []),
    (dict(configs={"min.insync.replicas": "2"}), {"internal_replication_factors": {"internal": 3}}, [], []),
    # Features are gated on the release that runs MirrorMaker, whatever the brokers run (KafkaVersion below: mirrormaker_version).
    (dict(version="3.6"), {"required_features": ["sync_group_offsets"], "mirrormaker_version": KafkaVersion(2, 4, 1)}, ["version_gate"], []),
    (dict(version="2.4"), {"required_features": ["sync_group_offsets"], "mirrormaker_version": KafkaVersion(3, 9, 0)}, [], []),
    (dict(version="2.4"), {"required_features": ["sync_group_offsets", "identity_policy"], "mirrormaker_version": KafkaVersion(3, 3, 0)}, [], []),
    (dict(version="3.9"), {"required_features": ["exactly_once", "dedicated_rest"], "mirrormaker_version": KafkaVersion(3, 3, 0)},
     ["version_gate", "version_gate"], []),
    # KIP-896: Kafka 4.0 clients (MirrorMaker's) talk to brokers 2.1 or later only.
    (dict(version="2.0"), {"mirrormaker_version": KafkaVersion(4, 0, 0)}, ["version_gate"], ["kafka_version"]),
    (dict(version="2.1"), {"mirrormaker_version": KafkaVersion(4, 0, 0)}, [], ["kafka_version"]),
    (dict(version="2.3"), {}, [], ["kafka_version"]),
    (dict(can_create=True), {}, [], []),
    (dict(can_create=False, create_error="TopicAuthorizationFailedError: denied",
          denied=[dict(operation="CreateTopics", resource="topic p", error="TopicAuthorizationFailedError")]), {}, ["acl", "topic_creation"], []),
    (dict(can_create=False, create_error="TopicAuthorizationFailedError: denied"), {"expected_topics": ["t"], "expected_topics_present": True},
     [], ["topic_creation"]),
    (dict(can_create=None, create_error="RequestTimedOutError: x"), {}, [], ["topic_creation"]),
    (dict(skipped=["broker configs"]), {}, [], ["skipped"]),
]


@pytest.mark.parametrize("facts_kwargs, expectations, errors, warnings", EVALUATE_TABLE)
def test_evaluate(facts_kwargs, expectations, errors, warnings):
    findings = kp.evaluate(facts(**facts_kwargs), expectations)
    assert checks(findings, "error") == sorted(errors)
    assert checks(findings, "warning") == sorted(warnings)
    for finding in findings:
        assert finding["cluster"] == "secondary" and finding["message"].startswith("cluster secondary")


def test_advertised_address_finding_names_address_cluster_and_fix():
    finding = kp.evaluate(facts(problems=["does not resolve (Name or service not known)"]), {})[0]
    assert "wn0:9092" in finding["message"] and "cluster secondary" in finding["message"] and "from mm-host" in finding["message"]
    assert "kafkaops.mirror.hosts_sync" in finding["fix"] and "ambari_kafka" in finding["fix"]


def test_version_gate_message_names_the_feature_and_mirrormakers_release():
    expectations = {"required_features": ["sync_group_offsets"], "mirrormaker_version": KafkaVersion(2, 4, 1)}
    finding = [f for f in kp.evaluate(facts(version="3.6"), expectations) if f["severity"] == "error"][0]
    assert "sync.group.offsets needs Kafka 2.7 or later (KIP-545); MirrorMaker runs Kafka 2.4.1" in finding["message"]
    assert "cluster secondary" in finding["message"] and "mirrormaker2_kafka_home" in finding["fix"]


def test_version_line_shows_the_cluster_and_mirrormakers_release():
    info = [f for f in kp.evaluate(facts(version="2.4"), {"mirrormaker_version": KafkaVersion(3, 9, 0)}) if f["check"] == "kafka_version"][0]
    assert "cluster secondary: Kafka 2.4 (ApiVersions); MirrorMaker runs Kafka 3.9.0" in info["message"]
    assert "sync.group.offsets yes (2.7+)" in info["message"] and "exactly-once yes (3.5+)" in info["message"]


@pytest.mark.parametrize("mapping, count, expected", [
    ({"a": 2, "b": "auto", "c": None}, 5, {"a": 2, "b (auto)": 3}),
    ({"b": "auto"}, 1, {"b (auto)": 1}),
    ({"b": "auto"}, 0, {}),
    ({"a": "2"}, None, {"a": 2}),
])
def test_normalize_factors(mapping, count, expected):
    assert kp.normalize_factors(mapping, count) == expected


def test_option_problems():
    problems = kp.option_problems(dict(replication_factors={"x": "three", "y": 0, "z": "auto"}, internal_replication_factors={},
                                       required_features=["teleport"], probe_timeout=0))
    text = "; ".join(problems)
    assert "replication_factors.x must be a positive integer or 'auto'" in text
    assert "replication_factors.y must be a positive integer" in text
    assert "unknown entries teleport" in text and "probe_timeout" in text
    assert kp.option_problems(dict(replication_factors={"z": "auto", "n": 3}, required_features=["mm2"], mirrormaker_version="2.4.1",
                                   probe_timeout=5)) == []
    assert "required_features needs mirrormaker_version" in "; ".join(kp.option_problems(dict(required_features=["mm2"], probe_timeout=5)))
    assert "mirrormaker_version: 'two' is not a Kafka version" in "; ".join(kp.option_problems(dict(mirrormaker_version="two", probe_timeout=5)))


def test_summary_row_counts():
    f = facts(brokers=2, problems=["does not resolve"], configs={"min.insync.replicas": "1", "auto.create.topics.enable": "false"}, can_create=True)
    findings = kp.evaluate(f, {"replication_factors": {"rf": 3}})
    row = kp.summary_row(f, findings)
    assert row["advertised_ok"] == "1/2" and row["errors"] == 2 and row["can_create_topics"] == "yes" and row["auto_create_topics"] == "false"


class AclAdmin:
    """What _check_acls asks a cluster: one Metadata answer (topics with their authorized operations, the cluster's), a
    described topic's error, and CreateTopics with validate_only."""

    def __init__(self, topics, cluster_operations=(), hidden=(), creatable=()):
        self.metadata = {"authorized_operations": list(cluster_operations),
                         "topics": [{"name": name, "error_code": 0, "authorized_operations": list(ops)} for name, ops in topics.items()]}
        self.hidden, self.creatable, self.created = set(hidden), set(creatable), []
        self._manager = self

    def run(self, _function, _topics):
        return self.metadata

    def _get_cluster_metadata(self, _topics):  # named by _check_acls; run() answers it
        return self.metadata

    def describe_topics(self, names):
        return [{"name": name, "error_code": 29 if name in self.hidden else 3} for name in names]

    def create_topics(self, topics, validate_only, raise_errors):
        assert validate_only and not raise_errors
        (name, _spec), = topics.items()
        self.created.append(name)
        return {"topics": [{"name": name, "error_code": 0 if any(name.startswith(p) for p in self.creatable) else 29}]}


def acl(resource_type, pattern_type, name, *operations):
    return [dict(resource_type=resource_type, pattern_type=pattern_type, resource_name=name, operation=op) for op in operations]


@pytest.mark.parametrize("admin, required, denied, unverified", [
    # Existing topics under a prefix: every operation checked on each; READ missing on one.
    (AclAdmin({"sx-a": ["DESCRIBE", "READ"], "sx-b": ["DESCRIBE"]}), acl("topic", "prefixed", "sx-", "DESCRIBE", "READ"),
     [("READ", "topic sx-b")], []),
    # No remote topic yet: creation probed under the prefix, refused; the other operations wait for the topic.
    (AclAdmin({"sx-a": ["READ"]}), acl("topic", "prefixed", "primary.sx-", "CREATE", "WRITE"),
     [("CREATE", "topic primary.sx-kafkaops-preflight-probe")], ["topic prefixed primary.sx- WRITE (no such topic yet)"]),
    (AclAdmin({"sx-a": ["READ"]}, creatable=["primary."]), acl("topic", "prefixed", "primary.sx-", "CREATE", "WRITE"), [],
     ["topic prefixed primary.sx- WRITE (no such topic yet)"]),
    # A literal topic the principal may not even describe.
    (AclAdmin({"sx-a": ["READ"]}, hidden=["heartbeats"]), acl("topic", "literal", "heartbeats", "DESCRIBE", "WRITE"),
     [("DESCRIBE", "topic heartbeats")], []),
    # The cluster's operations are told only to a principal that may describe the cluster.
    (AclAdmin({"sx-a": ["READ"]}), acl("cluster", "literal", "kafka-cluster", "IDEMPOTENT_WRITE"), [],
     ["cluster literal kafka-cluster IDEMPOTENT_WRITE (only a principal that may Describe the cluster is told)"]),
    (AclAdmin({"sx-a": ["READ"]}, cluster_operations=["DESCRIBE"]), acl("cluster", "literal", "kafka-cluster", "IDEMPOTENT_WRITE"),
     [("IDEMPOTENT_WRITE", "the cluster")], []),
    (AclAdmin({}), acl("group", "literal", "primary-mm2", "READ"), [], ["group literal primary-mm2"]),
])
def test_required_acls_are_checked_as_the_principal(admin, required, denied, unverified):
    found = dict(denied=[], principal="SASL user 'mm' (SCRAM-SHA-512)")
    kp._check_acls(admin, found, required)  # pylint: disable=protected-access
    assert [(d["operation"], d["resource"]) for d in found["denied"]] == denied
    assert found["acls_unverified"] == unverified
    for denial in found["denied"]:
        assert denial["acl"].startswith(f"ALLOW {denial['operation']} on ")


def test_a_missing_acl_finding_names_cluster_principal_resource_and_operation():
    denial = dict(operation="READ", resource="topic sx-orders", error="not authorized", acl="ALLOW READ on topic prefixed sx-")
    found = kp.evaluate(facts(denied=[denial]), {})
    message = next(f for f in found if f["check"] == "acl")
    assert "cluster secondary: SASL user 'mm' (SCRAM-SHA-512) may not READ on topic sx-orders" in message["message"]
    assert "ALLOW READ on topic prefixed sx-" in message["fix"] and "kafka_mirror_acls" in message["fix"]
