"""connect-mirror-maker.properties -> what the stand-in needs, resolved like MirrorMakerConfig does.

A flow A->B sees the top-level keys overridden by `A->B.`-prefixed keys; each cluster's client
settings are its `<alias>.`-prefixed keys.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_filters import MirrorFilter, compile_patterns
from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_properties import parse
from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_records import ReplicationPolicy
from sandbox.mm2 import release as releases

LOG = logging.getLogger("sandbox.mm2")

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
    "sync.group.offsets.enabled": "false",
    "sync.group.offsets.interval.seconds": "60",
    "sync.topic.configs.enabled": "true",
    "refresh.topics.interval.seconds": "600",
    "replication.policy.separator": ".",
    "replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
}
# Topic configs MM2 never copies (DefaultConfigPropertyFilter's default config.properties.exclude).
CONFIG_PROPERTIES_EXCLUDE = r"follower\.replication\.throttled\.replicas, leader\.replication\.throttled\.replicas, " \
    r"message\.timestamp\.difference\.max\.ms, message\.timestamp\.type, unclean\.leader\.election\.enable, min\.insync\.replicas"


class SettingsError(ValueError):
    pass


@dataclass
class Flow:
    source: str
    target: str
    enabled: bool
    settings: dict
    policy: ReplicationPolicy
    filter: MirrorFilter = None
    config_exclude: list = None

    def get(self, key):
        return self.settings.get(key, DEFAULTS.get(key))

    def flag(self, key):
        return str(self.get(key)).strip().lower() == "true"

    def number(self, key):
        return int(str(self.get(key)).strip())

    @property
    def name(self):
        return "%s->%s" % (self.source, self.target)

    def replicates_topic(self, topic):
        return self.filter.replicates_topic(topic)

    def replicates_group(self, group):
        return self.filter.replicates_group(group)

    def copies_config(self, key):
        return not any(pattern.fullmatch(key) for pattern in self.config_exclude)

    @property
    def offset_syncs_cluster(self):
        return self.target if str(self.get("offset-syncs.topic.location")).strip() == "target" else self.source


@dataclass
class Settings:
    clusters: dict  # alias -> client settings ({"bootstrap.servers": ..., ...})
    flows: list  # every herder pair: enabled flows and heartbeat-only pairs


def _exclude(settings, kind):
    """The exclude list, None for MM2's default. *.exclude wins over *.blacklist as in ConfigUtils.translateDeprecatedConfigs
    (2.7-3.9); a release that reads only one spelling had the other dropped by _read_by()."""
    for key in ("%s.exclude" % kind, "%s.blacklist" % kind):
        if key in settings:
            return settings[key]
    return None


WORKER_SETTINGS = ("offset.storage.replication.factor",)


def _read_by(props, release):
    """The properties MirrorMaker 2 of `release` reads; the others are logged and dropped, as real MM2 ignores them."""
    aliases = [alias.strip() for alias in props.get("clusters", "").split(",") if alias.strip()]
    read = {}
    for key, value in props.items():
        scope, dot, rest = key.partition(".")
        bare = rest if dot and ("->" in scope or scope in aliases) else key
        if releases.reads(bare, release):
            read[key] = value
        else:
            LOG.warning("%s is not a key MirrorMaker 2 of Kafka %s knows: ignored", key, releases.text(release))
    return read


def load(path, only_clusters=None, release=releases.DEFAULT_RELEASE):
    with open(path, encoding="utf-8") as handle:
        props = _read_by(parse(handle.read()), release)
    aliases = [alias.strip() for alias in props.get("clusters", "").split(",") if alias.strip()]
    if len(aliases) < 2:
        raise SettingsError("%s: `clusters` must list at least two aliases, got %r" % (path, props.get("clusters")))
    clusters = {}
    for alias in aliases:
        prefix = alias + "."
        # As in MirrorMakerConfig.workerConfig: top-level worker settings, overridden by the `<alias>.`-prefixed ones.
        client = {key: value for key, value in props.items() if key in WORKER_SETTINGS}
        client.update({key[len(prefix):]: value for key, value in props.items() if key.startswith(prefix)})
        if not client.get("bootstrap.servers"):
            raise SettingsError("%s: %sbootstrap.servers is missing" % (path, prefix))
        clusters[alias] = client
    top = {key: value for key, value in props.items() if "->" not in key and key.split(".", 1)[0] not in clusters}
    policy_class = top.get("replication.policy.class", DEFAULTS["replication.policy.class"])
    if policy_class == releases.IDENTITY_POLICY and release < releases.IDENTITY_POLICY_SINCE:
        raise SettingsError("%s: replication.policy.class: ClassNotFoundException %s (Kafka %s has no such class)"
                            % (path, policy_class, releases.text(release)))
    kind = "identity" if policy_class.endswith("IdentityReplicationPolicy") else "default"
    if kind == "default" and not policy_class.endswith("DefaultReplicationPolicy"):
        raise SettingsError("%s: replication.policy.class %s is not modeled by the stand-in" % (path, policy_class))
    policy = ReplicationPolicy(kind, top.get("replication.policy.separator", DEFAULTS["replication.policy.separator"]))
    flows = []
    for source in aliases:
        for target in aliases:
            if source == target or (only_clusters and target not in only_clusters):
                continue
            prefix = "%s->%s." % (source, target)
            settings = dict(top)
            settings.update({key[len(prefix):]: value for key, value in props.items() if key.startswith(prefix)})
            flow = Flow(source, target, str(settings.get("enabled", "false")).strip().lower() == "true", settings, policy)
            if not flow.enabled and not flow.flag("emit.heartbeats.enabled"):
                continue  # MirrorMakerConfig.clusterPairs(): a herder per pair that replicates or emits heartbeats
            flow.filter = MirrorFilter(policy, target, flow.get("topics"), _exclude(settings, "topics"),
                                       flow.get("groups"), _exclude(settings, "groups"))
            flow.config_exclude = compile_patterns(settings.get("config.properties.exclude", CONFIG_PROPERTIES_EXCLUDE))
            flows.append(flow)
    return Settings(clusters, flows)
