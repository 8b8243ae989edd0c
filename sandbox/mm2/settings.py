# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""connect-mirror-maker.properties -> what the stand-in runs, resolved as MirrorMakerConfig resolves it.

MirrorMakerConfig.connectorBaseConfig: a flow A->B sees the top-level keys overridden by the `A->B.`-prefixed
ones. clusterProps: a cluster's client settings are its `<alias>.`-prefixed keys, with top-level client keys
(e.g. security.protocol) as fallback. workerConfig: the herder's Connect worker settings (offsets topic,
exactly-once support) are the target's `<target>.`-prefixed keys, overridden by top-level `offset.storage*`.
clusterPairs: a herder runs for every ordered pair whose flow is enabled or emits heartbeats.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from sandbox.mm2 import release as releases
from sandbox.mm2.behaviour import Behaviour
from sandbox.mm2.filters import (
    CONFIG_PROPERTIES_EXCLUDE_DEFAULT,
    GROUPS_EXCLUDE_DEFAULT,
    TOPICS_EXCLUDE_DEFAULT,
    TOPICS_EXCLUDE_DEFAULT_4,
    ConfigPropertyFilter,
    IncludeExclude,
    TopicSelection,
)
from sandbox.mm2.policy import DEFAULT_SEPARATOR, ReplicationPolicy
from sandbox.mm2.properties import load as load_properties
from sandbox.mm2.records import MirrorRecords

LOG = logging.getLogger("sandbox.mm2")

# MirrorConnectorConfig / MirrorSourceConfig / MirrorCheckpointConfig / MirrorHeartbeatConfig defaults (same from 2.4.1 to 3.9).
DEFAULTS = {
    "topics": ".*",
    "groups": ".*",
    "replication.factor": "2",
    "heartbeats.topic.replication.factor": "3",
    "checkpoints.topic.replication.factor": "3",
    "offset-syncs.topic.replication.factor": "3",
    "offset-syncs.topic.location": "source",
    "offset.lag.max": "100",
    "emit.checkpoints.enabled": "true",
    "emit.checkpoints.interval.seconds": "60",
    "emit.heartbeats.enabled": "true",
    "emit.heartbeats.interval.seconds": "1",
    "emit.offset-syncs.enabled": "true",
    "sync.group.offsets.enabled": "false",
    "sync.group.offsets.interval.seconds": "60",
    "sync.topic.configs.enabled": "true",
    "sync.topic.configs.interval.seconds": "600",
    "refresh.topics.enabled": "true",
    "refresh.topics.interval.seconds": "600",
    "refresh.groups.enabled": "true",
    "refresh.groups.interval.seconds": "600",
}
DEFAULT_POLICY = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
# Connect WorkerConfig defaults of a dedicated MirrorMaker 2 herder.
WORKER_DEFAULTS = {"offset.storage.replication.factor": "3", "offset.flush.interval.ms": "60000", "offset.flush.timeout.ms": "5000",
                   "exactly.once.source.support": "disabled"}
CLIENT_KEYS = ("bootstrap.servers", "security.protocol")


class SettingsError(ValueError):
    pass


@dataclass
class Flow:
    source: str
    target: str
    enabled: bool
    settings: dict
    worker: dict
    behaviour: Behaviour
    policy: ReplicationPolicy
    topics: TopicSelection
    groups: IncludeExclude
    config_properties: ConfigPropertyFilter
    records: MirrorRecords

    def get(self, key):
        return self.settings.get(key, DEFAULTS.get(key))

    def flag(self, key):
        return str(self.get(key)).strip().lower() == "true"

    def number(self, key):
        return int(str(self.get(key)).strip())

    def seconds(self, key):
        """An interval; MirrorConnectorConfig turns a negative one (or a disabled feature) into 'never'."""
        return float(str(self.get(key)).strip())

    @property
    def name(self):
        return "%s->%s" % (self.source, self.target)

    @property
    def offset_syncs_cluster(self):
        return self.records.offset_syncs_cluster

    @property
    def exactly_once(self):
        return self.behaviour.exactly_once and str(self.worker.get("exactly.once.source.support")).strip().lower() == "enabled"


@dataclass
class Settings:
    clusters: dict  # alias -> client settings ({"bootstrap.servers": ..., ...})
    flows: list  # every herder pair: enabled flows and heartbeat-only pairs
    behaviour: Behaviour


def _scoped_key(key, aliases):
    scope, dot, rest = key.partition(".")
    return rest if dot and ("->" in scope or scope in aliases) else key


def _read_by(props, release):
    """The properties MirrorMaker 2 of `release` reads; the others are logged and dropped, as real MM2 ignores them."""
    aliases = [alias.strip() for alias in props.get("clusters", "").split(",") if alias.strip()]
    read = {}
    for key, value in props.items():
        if releases.reads(_scoped_key(key, aliases), release):
            read[key] = value
        else:
            LOG.warning("%s is not a key MirrorMaker 2 of Kafka %s knows: ignored", key, releases.text(release))
    return read


def _exclude(settings, kind, default):
    """ConfigUtils.translateDeprecatedConfigs (2.7+): `*.exclude` wins over the `*.blacklist` alias; a release that reads only
    one spelling had the other dropped by _read_by()."""
    for key in ("%s.exclude" % kind, "%s.blacklist" % kind):
        if key in settings:
            return settings[key]
    return default


def _policy(top, behaviour, path):
    policy_class = top.get("replication.policy.class", DEFAULT_POLICY).strip()
    if policy_class == releases.IDENTITY_POLICY and behaviour.release < releases.IDENTITY_POLICY_SINCE:
        raise SettingsError("%s: replication.policy.class: ClassNotFoundException %s (Kafka %s has no such class)"
                            % (path, policy_class, releases.text(behaviour.release)))
    if policy_class not in (DEFAULT_POLICY, releases.IDENTITY_POLICY):
        raise SettingsError("%s: replication.policy.class %s is not modelled by the stand-in" % (path, policy_class))
    separator = top.get("replication.policy.separator", DEFAULT_SEPARATOR)
    internal = DEFAULT_SEPARATOR
    if behaviour.internal_topics_use_separator and top.get("replication.policy.internal.topic.separator.enabled", "true").strip().lower() != "false":
        internal = separator
    return ReplicationPolicy(separator, policy_class == releases.IDENTITY_POLICY, internal,
                             only_mm2_internal=behaviour.replicates_user_internal_topics)


def _worker(props, target, aliases):
    prefix = target + "."
    worker = dict(WORKER_DEFAULTS)
    worker.update({key[len(prefix):]: value for key, value in props.items() if key.startswith(prefix)})
    # MirrorMakerConfig.workerConfig: the top-level offset.storage*, config.storage* and status.storage* keys win.
    worker.update({key: value for key, value in props.items()
                   if key.startswith(("offset.storage", "config.storage", "status.storage")) and _scoped_key(key, aliases) == key})
    return worker


def load(path, only_clusters=None, release=releases.DEFAULT_RELEASE):
    with open(path, encoding="utf-8") as handle:
        try:
            props = _read_by(load_properties(handle.read()), release)
        except ValueError as exc:
            raise SettingsError("%s: %s" % (path, exc)) from None
    behaviour = Behaviour(release)
    aliases = [alias.strip() for alias in props.get("clusters", "").split(",") if alias.strip()]
    if len(aliases) < 2:
        raise SettingsError("%s: `clusters` must list at least two aliases, got %r" % (path, props.get("clusters")))
    top = {key: value for key, value in props.items() if _scoped_key(key, aliases) == key}
    clusters = {}
    for alias in aliases:
        prefix = alias + "."
        client = {key: value for key, value in top.items() if key in CLIENT_KEYS}
        client.update({key[len(prefix):]: value for key, value in props.items() if key.startswith(prefix)})
        if not client.get("bootstrap.servers"):
            raise SettingsError("%s: %sbootstrap.servers is missing" % (path, prefix))
        clusters[alias] = client
    policy = _policy(top, behaviour, path)
    flows = []
    for source in aliases:
        for target in aliases:
            if source == target or (only_clusters and target not in only_clusters):
                continue
            prefix = "%s->%s." % (source, target)
            settings = dict(top)
            settings.update({key[len(prefix):]: value for key, value in props.items() if key.startswith(prefix)})
            enabled = str(settings.get("enabled", "false")).strip().lower() == "true"
            if not enabled and str(settings.get("emit.heartbeats.enabled", "true")).strip().lower() != "true":
                continue
            flow_policy = policy.for_source(source)
            exclude_default = TOPICS_EXCLUDE_DEFAULT_4 if behaviour.replicates_user_internal_topics else TOPICS_EXCLUDE_DEFAULT
            topic_filter = IncludeExclude(settings.get("topics", DEFAULTS["topics"]), _exclude(settings, "topics", exclude_default))
            syncs_on_target = str(settings.get("offset-syncs.topic.location", "source")).strip() == "target"
            flows.append(Flow(
                source, target, enabled, settings, _worker(props, target, aliases), behaviour, flow_policy,
                TopicSelection(flow_policy, target, topic_filter),
                IncludeExclude(settings.get("groups", DEFAULTS["groups"]), _exclude(settings, "groups", GROUPS_EXCLUDE_DEFAULT)),
                ConfigPropertyFilter(_exclude(settings, "config.properties", CONFIG_PROPERTIES_EXCLUDE_DEFAULT)),
                MirrorRecords(source, target, flow_policy, syncs_on_target)))
    return Settings(clusters, flows, behaviour)
