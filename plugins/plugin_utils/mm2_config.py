# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirrormaker2 role's declarative model turned into MirrorMaker configuration files.

build_config(model) validates the whole model first and raises MirrorConfigError listing every
problem; only a valid model yields files. The result is a MirrorConfig: `files` (name -> properties
dict), `secret_keys` (keys whose values are secrets), `warnings`, and for the legacy engine the
command-line arguments. Keys follow connect-mirror-maker.properties (KIP-382) and, for Kafka < 2.4,
kafka-mirror-maker.sh (MirrorMaker 1).
"""
from __future__ import annotations

import re

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.findings import ERROR, finding_text, min_insync_findings
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.keys import MAX_AUTO_REPLICATION_FACTOR, check_extra_properties, exclude_key, unread_keys
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import split_patterns
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import FEATURES, MM1_REMOVED, KafkaVersion, broker_too_old, requires
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.kafka_client_properties import java_client_properties

MM2_PROPERTIES_FILE = "connect-mirror-maker.properties"
MM1_CONSUMER_FILE = "mm1-consumer.properties"
MM1_PRODUCER_FILE = "mm1-producer.properties"
POLICY_CLASSES = {
    "default": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
    "identity": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
}
# Cluster model field -> client property. Secrets are marked so the role writes them 0600 with no_log.
CLUSTER_SECURITY_FIELDS = (
    ("security_protocol", "security.protocol", False),
    ("sasl_mechanism", "sasl.mechanism", False),
    ("sasl_kerberos_service_name", "sasl.kerberos.service.name", False),
    ("sasl_jaas_config", "sasl.jaas.config", True),
    ("ssl_truststore_location", "ssl.truststore.location", False),
    ("ssl_truststore_password", "ssl.truststore.password", True),
    ("ssl_keystore_location", "ssl.keystore.location", False),
    ("ssl_keystore_password", "ssl.keystore.password", True),
    ("ssl_key_password", "ssl.key.password", True),
    ("ssl_endpoint_identification_algorithm", "ssl.endpoint.identification.algorithm", False),
)
# `connection` holds the kafka-python options the role's modules use for the same cluster; MirrorMaker's security
# properties are derived from it (kafka_client_properties) unless the cluster sets the fields above itself.
CLUSTER_KEYS = frozenset(["alias", "bootstrap_servers", "broker_count", "min_insync_replicas", "properties", "connection"]
                         + [field for field, _key, _secret in CLUSTER_SECURITY_FIELDS])
SECRET_SUFFIXES = ("sasl.jaas.config", ".password", "basic.auth.user.info")
FLOW_DEFAULTS = {
    "enabled": True,
    "topics": [".*"],
    "topics_exclude": None,
    "groups": [".*"],
    "groups_exclude": None,
    "sync_group_offsets": False,
    "sync_group_offsets_interval_seconds": 60,
    "emit_checkpoints": True,
    "emit_checkpoints_interval_seconds": 60,
    "emit_heartbeats": True,
    "emit_heartbeats_interval_seconds": 1,
    "sync_topic_configs": True,
    # 60 s, not Kafka's 600: a topic or group created on the source while MirrorMaker runs is mirrored (and gets
    # checkpoints) within a minute, well inside the role's default health timeout (300 s), for one topic listing (plus
    # DescribeConfigs of the matching topics) or one group listing a minute per flow. The HDInsight guide's 10 s would
    # repeat that work six times as often on clusters with thousands of topics, for nothing the role waits for: topics
    # that exist when the role runs are picked up by a restart (roles/mirrormaker2/tasks/topics.yml, module_utils/_mirror/wait.py).
    "refresh_topics_interval_seconds": 60,
    "refresh_groups_interval_seconds": 60,
    "properties": {},
}
MODEL_DEFAULTS = {
    "engine": "mm2",
    "kafka_version": "3.9",
    "replication_policy": "default",
    "replication_policy_separator": ".",
    "replication_factor": "auto",
    "internal_replication_factor": "auto",
    "tasks_max": 1,
    "offset_syncs_topic_location": "source",
    "offset_lag_max": 100,
    "dedicated_rest": False,
    "rest_listeners": "http://localhost:8083",
    "exactly_once": False,
    "properties": {},
    "mm1_group_id": "mirrormaker1",
    "mm1_num_streams": 1,
    "cluster_facts": {},
}
REDACTED = "VALUE_REDACTED"
_ALIAS = re.compile(r"^[A-Za-z0-9_-]+$")


class MirrorConfigError(ValueError):
    """The model is invalid; `errors` lists every problem found."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("the mirrormaker2 model is invalid, nothing was changed:\n- " + "\n- ".join(self.errors))


class MirrorConfig:
    def __init__(self, engine):
        self.engine = engine
        self.files = {}
        self.secret_keys = set()
        self.warnings = []
        self.command_args = []

    @property
    def has_secrets(self):
        return bool(self.secret_keys)

    def redacted(self):
        """The same configuration with every secret value replaced, safe to print or diff."""
        copy = MirrorConfig(self.engine)
        copy.files = {name: {k: (REDACTED if k in self.secret_keys else v) for k, v in props.items()} for name, props in self.files.items()}
        copy.secret_keys, copy.warnings, copy.command_args = set(self.secret_keys), list(self.warnings), list(self.command_args)
        return copy

    def as_dict(self):
        return {
            "engine": self.engine,
            "files": self.files,
            "secret_keys": sorted(self.secret_keys),
            "has_secrets": self.has_secrets,
            "warnings": list(self.warnings),
            "command_args": list(self.command_args),
        }


def _patterns(value):
    """A pattern list rendered as MirrorMaker reads a LIST property: the items joined by commas (_mm2.patterns reads it back)."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    return ",".join(str(item).strip() for item in items if str(item).strip())


class _Builder:
    def __init__(self, model):
        self.model = dict(MODEL_DEFAULTS, **{k: v for k, v in (model or {}).items() if v is not None})
        self.errors = []
        self.warnings = []
        self.exactly_once = False  # decided by _mm2_config once the version gate ran
        try:
            self.version = KafkaVersion.parse(self.model["kafka_version"])
        except ValueError as exc:
            self.errors.append("kafka_version: %s" % exc)
            self.version = KafkaVersion(3, 9, 0)
        self.clusters = self._clusters()
        self._check_broker_versions()
        self.flows = self._flows()

    def need(self, feature, what):
        """True when MirrorMaker's release has `feature`; else records an error naming `what` and the release."""
        message = requires(feature, self.version, what)
        if message:
            self.errors.append(message)
        return message is None

    def _clusters(self):
        """Cluster entries, with discovered facts (broker_count, min_insync_replicas) under what the model sets itself."""
        clusters = {}
        facts = self.model.get("cluster_facts") or {}
        for index, given in enumerate(self.model.get("clusters") or []):
            alias = str(given.get("alias") or "")
            cluster = dict(facts.get(alias) or {}, **{k: v for k, v in given.items() if v is not None})
            where = "clusters[%d]" % index
            if not _ALIAS.match(alias):
                self.errors.append("%s: alias %r must be letters, digits, '-' or '_' (it prefixes keys and topic names)" % (where, alias))
                continue
            if alias in clusters:
                self.errors.append("%s: alias %r is defined twice" % (where, alias))
            unknown = sorted(set(given) - CLUSTER_KEYS)
            if unknown:
                self.errors.append("%s (%s): unknown key(s) %s; cluster keys are %s" % (where, alias, ", ".join(unknown), ", ".join(sorted(CLUSTER_KEYS))))
            if not cluster.get("bootstrap_servers"):
                self.errors.append("%s (%s): bootstrap_servers is empty; set it or the inventory's kafka_bootstrap_servers" % (where, alias))
            if cluster.get("connection") and not any(cluster.get(field) not in (None, "") for field, _key, _secret in CLUSTER_SECURITY_FIELDS):
                cluster["_client_security"], problems = java_client_properties(cluster["connection"], self.version)
                self.errors.extend("%s (%s): %s" % (where, alias, problem) for problem in problems)
            clusters[alias] = cluster
        if len(clusters) < 2 and self.model["engine"] == "mm2":
            self.errors.append("clusters: at least two clusters are needed, got %s" % (sorted(clusters) or "none"))
        return clusters

    def _check_broker_versions(self):
        """Each cluster's Kafka version (discovered through ApiVersions) against what the MirrorMaker clients can talk to."""
        for alias, cluster in sorted(self.clusters.items()):
            if not cluster.get("kafka_version"):
                continue
            try:
                broker = KafkaVersion.parse(cluster["kafka_version"])
            except ValueError as exc:
                self.errors.append("cluster %s: kafka_version %s" % (alias, exc))
                continue
            message = broker_too_old(self.version, broker)
            if message:
                self.errors.append("cluster %s: %s; run MirrorMaker from an older Kafka installation (mirrormaker2_kafka_home)" % (alias, message))

    def _flows(self):
        flows = []
        seen = set()
        for index, raw in enumerate(self.model.get("flows") or []):
            flow = dict(FLOW_DEFAULTS, **{k: v for k, v in raw.items() if v is not None})
            where = "flows[%d] (%s->%s)" % (index, flow.get("source"), flow.get("target"))
            unknown = sorted(set(raw) - set(FLOW_DEFAULTS) - {"source", "target"})
            if unknown:
                known = ", ".join(sorted(set(FLOW_DEFAULTS) | {"source", "target"}))
                self.errors.append("%s: unknown key(s) %s; flow keys are %s" % (where, ", ".join(unknown), known))
            for end in ("source", "target"):
                if flow.get(end) not in self.clusters:
                    self.errors.append("%s: %s %r is not a cluster alias; known aliases: %s" % (where, end, flow.get(end), ", ".join(sorted(self.clusters))))
            if flow.get("source") == flow.get("target"):
                self.errors.append("%s: source and target are the same cluster" % where)
            pair = (flow.get("source"), flow.get("target"))
            if pair in seen:
                self.errors.append("%s: this flow is defined twice" % where)
            seen.add(pair)
            flow["_where"] = where
            flows.append(flow)
        if not flows:
            self.errors.append("flows: no flow defined; add at least one {source, target}")
        enabled = {(f["source"], f["target"]) for f in flows if f["enabled"]}
        if self.model["replication_policy"] == "identity":
            for source, target in sorted(enabled):
                if (target, source) in enabled and source < target:
                    self.errors.append(
                        "flows %s->%s and %s->%s: the identity replication policy keeps topic names, so MirrorMaker cannot tell "
                        "mirrored records from local ones and would copy them back and forth forever (a replication loop). "
                        "Use replication_policy 'default' for active-active, or disable one direction" % (source, target, target, source))
        return flows

    def replication_factor(self, setting, alias, what):
        cluster = self.clusters.get(alias, {})
        brokers = cluster.get("broker_count")
        if setting == "auto":
            if not brokers:
                self.errors.append("%s of cluster %s is 'auto' but its broker count is unknown; set broker_count on the cluster "
                                   "or a number for the replication factor" % (what, alias))
                return None
            factor = min(MAX_AUTO_REPLICATION_FACTOR, int(brokers))
        else:
            try:
                factor = int(setting)
            except (TypeError, ValueError):
                self.errors.append("%s must be 'auto' or a number, got %r" % (what, setting))
                return None
            if factor < 1:
                self.errors.append("%s must be >= 1, got %d" % (what, factor))
            elif brokers and factor > int(brokers):
                self.errors.append("%s %d is more than the %d broker(s) of cluster %s; MirrorMaker would fail to create topics"
                                   % (what, factor, int(brokers), alias))
        for item in min_insync_findings(alias, what, factor, cluster.get("min_insync_replicas")):
            found = self.errors if item["severity"] == ERROR else self.warnings
            if finding_text(item) not in found:
                found.append(finding_text(item))
        return factor

    def extra(self, properties, origin, target):
        check = check_extra_properties(properties, set(self.clusters), self.version, origin)
        self.errors.extend(check.errors)
        self.warnings.extend(check.warnings)
        for key, value in check.properties.items():
            if key in target and str(target[key]) != str(value):
                # Values are left out on purpose: the key may hold a secret.
                self.warnings.append("%s: %r overrides the value the model derived for it" % (origin, key))
            target[key] = value

    def fail_if_invalid(self):
        if self.errors:
            # Each flow checks the clusters it names: a problem of a cluster in several flows is listed once.
            raise MirrorConfigError(list(dict.fromkeys(self.errors)))


def _cluster_properties(alias, cluster, config):
    props = {"%s.bootstrap.servers" % alias: _patterns(cluster["bootstrap_servers"])}
    for field, key, secret in CLUSTER_SECURITY_FIELDS:
        if cluster.get(field) not in (None, ""):
            props["%s.%s" % (alias, key)] = cluster[field]
            if secret:
                config.secret_keys.add("%s.%s" % (alias, key))
    for key, value in (cluster.get("_client_security") or {}).items():
        props["%s.%s" % (alias, key)] = value
        if key.endswith(SECRET_SUFFIXES):
            config.secret_keys.add("%s.%s" % (alias, key))
    return props


def _mark_secrets(properties, config):
    for key, value in properties.items():
        if key.endswith(SECRET_SUFFIXES) and value not in (None, ""):
            config.secret_keys.add(key)


def _flow_properties(builder, flow):
    model, version = builder.model, builder.version
    prefix = "%s->%s." % (flow["source"], flow["target"])
    props = {prefix + "enabled": bool(flow["enabled"])}
    if not flow["enabled"]:
        props[prefix + "emit.heartbeats.enabled"] = bool(flow["emit_heartbeats"])
        return props
    props.update({
        prefix + "topics": _patterns(flow["topics"]),
        prefix + "groups": _patterns(flow["groups"]),
        prefix + "emit.checkpoints.enabled": bool(flow["emit_checkpoints"]),
        prefix + "emit.checkpoints.interval.seconds": int(flow["emit_checkpoints_interval_seconds"]),
        prefix + "emit.heartbeats.enabled": bool(flow["emit_heartbeats"]),
        prefix + "emit.heartbeats.interval.seconds": int(flow["emit_heartbeats_interval_seconds"]),
        prefix + "sync.topic.configs.enabled": bool(flow["sync_topic_configs"]),
        prefix + "refresh.topics.interval.seconds": int(flow["refresh_topics_interval_seconds"]),
        prefix + "refresh.groups.interval.seconds": int(flow["refresh_groups_interval_seconds"]),
    })
    for kind in ("topics", "groups"):
        if flow[kind + "_exclude"] is not None:
            props[prefix + exclude_key(kind, version)] = _patterns(flow[kind + "_exclude"])
    if flow["sync_group_offsets"] and builder.need(
            "sync_group_offsets", "%s: sync_group_offsets (use the failover role's checkpoint translation before 2.7)" % flow["_where"]):
        props[prefix + "sync.group.offsets.enabled"] = True
        props[prefix + "sync.group.offsets.interval.seconds"] = int(flow["sync_group_offsets_interval_seconds"])
    target_rf = builder.replication_factor(model["replication_factor"], flow["target"], "replication_factor (remote topics)")
    internal_target = builder.replication_factor(model["internal_replication_factor"], flow["target"], "internal_replication_factor")
    syncs_cluster = flow[model["offset_syncs_topic_location"]] if model["offset_syncs_topic_location"] in ("source", "target") else None
    internal_syncs = builder.replication_factor(model["internal_replication_factor"], syncs_cluster, "internal_replication_factor")
    props.update({
        prefix + "replication.factor": target_rf,
        prefix + "heartbeats.topic.replication.factor": internal_target,
        prefix + "checkpoints.topic.replication.factor": internal_target,
        prefix + "offset-syncs.topic.replication.factor": internal_syncs,
    })
    if builder.exactly_once:
        props["%s.exactly.once.source.support" % flow["target"]] = "enabled"
    builder.extra(flow.get("properties"), "%s properties" % flow["_where"], props)
    return props


def _heartbeat_only_pairs(builder):
    """Heartbeats topic RF for herder pairs that replicate nothing, which would otherwise create it with RF 3.

    MirrorMakerConfig.clusterPairs() starts a herder for every ordered pair of clusters unless its heartbeats are
    disabled, so that B->A heartbeats into A can be replicated by A->B as a health signal.
    """
    flows = {(flow["source"], flow["target"]): flow for flow in builder.flows}
    props = {}
    for source in sorted(builder.clusters):
        for target in sorted(builder.clusters):
            flow = flows.get((source, target))
            if source == target or (flow and (flow["enabled"] or not flow["emit_heartbeats"])):
                continue
            factor = builder.replication_factor(builder.model["internal_replication_factor"], target, "internal_replication_factor")
            props["%s->%s.heartbeats.topic.replication.factor" % (source, target)] = factor
    return props


def _mm2_config(builder):
    model = builder.model
    config = MirrorConfig("mm2")
    props = {"clusters": ",".join(sorted(builder.clusters))}
    policy = model["replication_policy"]
    if policy not in POLICY_CLASSES:
        builder.errors.append("replication_policy %r is not one of %s" % (policy, ", ".join(sorted(POLICY_CLASSES))))
    else:
        if policy == "identity":
            builder.need("identity_policy", "replication_policy 'identity'")
        props["replication.policy.class"] = POLICY_CLASSES[policy]
        # IdentityReplicationPolicy extends DefaultReplicationPolicy and reads the separator too: it names the remote
        # heartbeats topics and, from 3.1 (KIP-690), the internal topics, which the role's health check reads.
        props["replication.policy.separator"] = model["replication_policy_separator"]
    props["tasks.max"] = int(model["tasks_max"])
    props["offset.lag.max"] = int(model["offset_lag_max"])
    if model["offset_syncs_topic_location"] not in ("source", "target"):
        builder.errors.append("offset_syncs_topic_location must be 'source' or 'target', got %r" % model["offset_syncs_topic_location"])
    elif model["offset_syncs_topic_location"] != "source" and builder.need("offset_syncs_location", "offset_syncs_topic_location 'target'"):
        props["offset-syncs.topic.location"] = model["offset_syncs_topic_location"]
    for alias, cluster in sorted(builder.clusters.items()):
        props.update(_cluster_properties(alias, cluster, config))
        # Dedicated MirrorMaker runs a herder, with Connect state topics on its target, for every cluster pair, also
        # pairs without a flow (they emit heartbeats): every cluster gets these topics.
        factor = builder.replication_factor(model["internal_replication_factor"], alias, "internal_replication_factor")
        for store in ("config", "offset", "status"):
            props["%s.%s.storage.replication.factor" % (alias, store)] = factor
        scoped = {"%s.%s" % (alias, key): value for key, value in (cluster.get("properties") or {}).items()}
        builder.extra(scoped, "clusters %s properties" % alias, props)
    props.update(_heartbeat_only_pairs(builder))
    builder.exactly_once = bool(model["exactly_once"]) and builder.need("exactly_once", "exactly_once")
    for flow in builder.flows:
        props.update(_flow_properties(builder, flow))
    if (model["dedicated_rest"] or model["exactly_once"]) and builder.need(
            "dedicated_rest", "dedicated_rest (KIP-710 internal REST for multi-node MirrorMaker)"):
        props["dedicated.mode.enable.internal.rest"] = True
        props["listeners"] = model["rest_listeners"]
    builder.extra(model.get("properties"), "properties", props)
    for key in unread_keys(props, set(builder.clusters), builder.version):
        builder.errors.append("%r would be rendered, but MirrorMaker 2 of Kafka %s ignores it" % (key, builder.version))
    builder.fail_if_invalid()
    _mark_secrets(props, config)
    config.files[MM2_PROPERTIES_FILE] = props
    return config


# isInternalTopic before 4.0 (_mm2.naming.ReplicationPolicy.is_internal_topic), which the health read's MirrorFilter applies
# whatever topics_exclude says; written without backslashes and dollars, which a systemd unit's command line would
# interpret. MirrorMaker 1 leaves out only Kafka's own internal topics itself (exclude.internal.topics).
MM1_NEVER_MIRRORED = (r"__.*", r"[.].*", r".*[-.]internal")
MM1_DEFAULT_EXCLUDE = (r".*[.]replica",)  # the rest of MirrorMaker 2's default topics.exclude before 4.0
# How often MirrorMaker 1 flushes its producer and then commits its group's offsets (its default is 60 s): the committed
# offsets are all the health read and a failover have of its progress, and what a killed MirrorMaker 1 copies again.
MM1_OFFSET_COMMIT_INTERVAL_MS = 10000


def mm1_include_list(flow):
    """MirrorMaker 1's --whitelist for a flow: its topics without its topics_exclude (MirrorMaker 2's default exclusions
    when unset), as one Java regular expression that MirrorMaker 1 matches against the whole name. It has no exclude list
    of its own: the exclusions become a negative lookahead, `(?!.)` standing for the end of the name."""
    excluded = MM1_NEVER_MIRRORED + (MM1_DEFAULT_EXCLUDE if flow["topics_exclude"] is None else tuple(split_patterns(flow["topics_exclude"])))
    included = split_patterns(flow["topics"])
    return "(?!(?:%s)(?!.))(?:%s)" % ("|".join(excluded), "|".join("(?:%s)" % pattern for pattern in included))


def _mm1_config(builder):
    """MirrorMaker 1 (kafka-mirror-maker.sh, Kafka up to 3.9): one enabled flow, consumer and producer files."""
    model = builder.model
    config = MirrorConfig("mm1")
    enabled = [flow for flow in builder.flows if flow["enabled"]]
    if len(enabled) != 1:
        builder.errors.append("engine mm1 runs exactly one enabled flow, got %d; run one service per flow" % len(enabled))
    if builder.version >= MM1_REMOVED:
        builder.errors.append("engine mm1: MirrorMaker 1 (kafka.tools.MirrorMaker) was removed in Kafka 4.0; run it from a Kafka home "
                              "of 3.9 or older, or use engine mm2 with replication_policy identity to keep topic names")
    for flow in enabled:
        # TopicFilter turns every comma into `|` and drops every space of the list it is given.
        for pattern in split_patterns(flow["topics"]) + split_patterns(flow["topics_exclude"]):
            if re.search(r"\s", pattern):
                builder.errors.append("flow %s->%s: topic pattern %r has white space, which MirrorMaker 1 removes from its "
                                      "include list; use \\s" % (flow["source"], flow["target"], pattern))
    builder.fail_if_invalid()
    flow = enabled[0]
    source, target = builder.clusters[flow["source"]], builder.clusters[flow["target"]]
    consumer = {key.split(".", 1)[1]: value for key, value in _cluster_properties(flow["source"], source, config).items()}
    consumer.update({"group.id": model["mm1_group_id"], "auto.offset.reset": "earliest", "exclude.internal.topics": True,
                     # A topic created on the source is subscribed at the consumer's next metadata refresh.
                     "metadata.max.age.ms": int(flow["refresh_topics_interval_seconds"]) * 1000})
    producer = {key.split(".", 1)[1]: value for key, value in _cluster_properties(flow["target"], target, config).items()}
    producer.update({"acks": "all", "max.in.flight.requests.per.connection": 1, "retries": 2147483647})
    config.secret_keys = {key.split(".", 1)[1] for key in config.secret_keys}
    # --whitelist is the one spelling every MirrorMaker 1 release accepts (--include only arrived in 3.0).
    config.command_args = ["--whitelist", mm1_include_list(flow), "--num.streams", str(int(model["mm1_num_streams"])),
                           "--offset.commit.interval.ms", str(MM1_OFFSET_COMMIT_INTERVAL_MS)]
    config.files[MM1_CONSUMER_FILE] = consumer
    config.files[MM1_PRODUCER_FILE] = producer
    return config


def build_config(model):
    """Validate the model and return a MirrorConfig, or raise MirrorConfigError listing every problem."""
    builder = _Builder(model)
    engine = builder.model["engine"]
    if engine not in ("mm2", "mm1"):
        builder.errors.append("engine %r is not one of mm2, mm1" % engine)
        builder.fail_if_invalid()
    if engine == "mm2":
        builder.need("mm2", "engine mm2 (MirrorMaker 2; use engine mm1 for older clusters)")
        config = _mm2_config(builder)
    else:
        config = _mm1_config(builder)
    config.warnings = builder.warnings
    return config


def required_features(model):
    """The MirrorMaker 2 features (_mm2.versions.FEATURES) the model turns on, each of which build_config gates on the release.

    The preflight role checks the same list against the same release (preflight_mirrormaker_version, filter preflight_clusters).
    """
    model = dict(MODEL_DEFAULTS, **{k: v for k, v in (model or {}).items() if v is not None})
    if model["engine"] != "mm2":
        return []
    flows = [dict(FLOW_DEFAULTS, **{k: v for k, v in flow.items() if v is not None}) for flow in model.get("flows") or []]
    used = {
        "mm2": True,
        "sync_group_offsets": any(flow["enabled"] and flow["sync_group_offsets"] for flow in flows),
        "identity_policy": model["replication_policy"] == "identity",
        "offset_syncs_location": model["offset_syncs_topic_location"] == "target",
        # Exactly-once in dedicated MirrorMaker needs the KIP-710 REST server (_mm2_config turns it on).
        "dedicated_rest": bool(model["dedicated_rest"] or model["exactly_once"]),
        "exactly_once": bool(model["exactly_once"]),
    }
    return [feature for feature in FEATURES if used[feature]]
