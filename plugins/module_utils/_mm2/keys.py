# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation of hand-written MirrorMaker 2 property keys, and the release each key arrived in.

MirrorMaker 2 ignores keys it does not know without a word, so a typo such as `task.max` silently
leaves the default in place, and so does a key newer than the Kafka release that runs it (2.4.1 reads
`topics.blacklist`, never `topics.exclude`). check_extra_properties() sorts every extra key into:
accepted, rejected (a known misspelling or wrong case, with the right spelling; a key the release
ignores and that has no older spelling), translated (*.blacklist / *.exclude to the spelling the
release reads, *.whitelist to the include list) and warned (unknown, with the nearest known key).
unread_keys() lists rendered keys a release would ignore.
"""
from __future__ import annotations

import difflib
import re

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import INTERNAL_SEPARATOR_SWITCH_SINCE
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import FEATURES, INCREMENTAL_ALTER_CONFIGS_SINCE, KafkaVersion

# KIP-629: the include/exclude spelling of the MM2 filters appeared in Kafka 2.7.
EXCLUDE_KEYS_SINCE = KafkaVersion.parse("2.7")
# The *.blacklist spelling was removed with the rest of the deprecated names in 4.0.
BLACKLIST_KEYS_UNTIL = KafkaVersion.parse("4.0")
# The mirrormaker2 role's 'auto' replication factor (its *.replication.factor keys): min(this, the cluster's brokers); the
# preflight (kafka_cluster_info) sizes 'auto' the same way.
MAX_AUTO_REPLICATION_FACTOR = 3

MM2_KEYS = frozenset(
    """
    clusters enabled topics topics.exclude groups groups.exclude config.properties.exclude
    replication.factor replication.policy.class replication.policy.separator tasks.max
    sync.topic.configs.enabled sync.topic.configs.interval.seconds sync.topic.acls.enabled sync.topic.acls.interval.seconds
    sync.group.offsets.enabled sync.group.offsets.interval.seconds emit.checkpoints.enabled emit.checkpoints.interval.seconds
    emit.heartbeats.enabled emit.heartbeats.interval.seconds emit.offset-syncs.enabled
    refresh.topics.enabled refresh.topics.interval.seconds refresh.groups.enabled refresh.groups.interval.seconds
    heartbeats.topic.replication.factor checkpoints.topic.replication.factor offset-syncs.topic.replication.factor
    offset-syncs.topic.location offset.lag.max consumer.poll.timeout.ms admin.timeout.ms
    topic.filter.class group.filter.class config.property.filter.class forwarding.admin.class use.incremental.alter.configs
    source.cluster.alias target.cluster.alias add.source.alias.to.metrics replication.policy.internal.topic.separator.enabled
    dedicated.mode.enable.internal.rest exactly.once.source.support exactly.once.support transaction.boundary
    key.converter value.converter header.converter offset.flush.interval.ms offset.flush.timeout.ms
    config.storage.topic config.storage.replication.factor offset.storage.topic offset.storage.replication.factor
    offset.storage.partitions status.storage.topic status.storage.replication.factor status.storage.partitions
    listeners rest.advertised.host.name rest.advertised.port rest.advertised.listener config.providers
    task.shutdown.graceful.timeout.ms scheduled.rebalance.max.delay.ms
    bootstrap.servers security.protocol client.id request.timeout.ms retry.backoff.ms metadata.max.age.ms
    connections.max.idle.ms receive.buffer.bytes send.buffer.bytes client.dns.lookup
    """.split()
)
DEPRECATED_KEYS = {
    "topics.blacklist": "topics.exclude",
    "groups.blacklist": "groups.exclude",
    "config.properties.blacklist": "config.properties.exclude",
}
# Keys MirrorMaker 2 reads only from a release on: key (a prefix when it ends with '.') -> (first release, where it is
# defined). Checked against Apache Kafka's sources at the tags 2.4.1, 2.7.0, 3.0.0, 3.3.0, 3.4.0, 3.5.0, 3.5.2, 3.9
# (connect/mirror/.../Mirror*Config.java, mirror-client/.../MirrorClientConfig.java, MirrorMaker.java). Every other key
# of MM2_KEYS is read by 2.4.1 already; the *.exclude keys' older spelling is DEPRECATED_KEYS.
KEYS_SINCE = {
    "topics.exclude": (EXCLUDE_KEYS_SINCE, "KIP-629, MirrorConnectorConfig.TOPICS_EXCLUDE"),
    "groups.exclude": (EXCLUDE_KEYS_SINCE, "KIP-629, MirrorConnectorConfig.GROUPS_EXCLUDE"),
    "config.properties.exclude": (EXCLUDE_KEYS_SINCE, "KIP-629, MirrorConnectorConfig.CONFIG_PROPERTIES_EXCLUDE"),
    "sync.group.offsets.enabled": (FEATURES["sync_group_offsets"][0], "KIP-545, MirrorConnectorConfig.SYNC_GROUP_OFFSETS_ENABLED"),
    "sync.group.offsets.interval.seconds": (FEATURES["sync_group_offsets"][0], "KIP-545, MirrorConnectorConfig.SYNC_GROUP_OFFSETS_INTERVAL_SECONDS"),
    "offset-syncs.topic.location": (FEATURES["offset_syncs_location"][0], "KIP-716, MirrorConnectorConfig.OFFSET_SYNCS_TOPIC_LOCATION"),
    "exactly.once.support": (KafkaVersion(3, 3, 0), "KIP-618, SourceConnectorConfig.EXACTLY_ONCE_SUPPORT_CONFIG"),
    "transaction.boundary": (KafkaVersion(3, 3, 0), "KIP-618, SourceConnectorConfig.TRANSACTION_BOUNDARY_CONFIG"),
    "forwarding.admin.class": (KafkaVersion(3, 4, 0), "KIP-787, MirrorClientConfig.FORWARDING_ADMIN_CLASS"),
    # Before 3.5 dedicated MirrorMaker runs no REST server (MirrorMaker.java), so worker REST settings are not read, and
    # exactly-once source support needs that server (KIP-710) to fence zombie tasks.
    "dedicated.mode.enable.internal.rest": (FEATURES["dedicated_rest"][0], "KIP-710, MirrorMakerConfig.ENABLE_INTERNAL_REST_CONFIG"),
    "listeners": (FEATURES["dedicated_rest"][0], "KIP-710, the REST server of dedicated MirrorMaker"),
    "listeners.https.": (FEATURES["dedicated_rest"][0], "KIP-710, the REST server of dedicated MirrorMaker"),
    "rest.": (FEATURES["dedicated_rest"][0], "KIP-710, the REST server of dedicated MirrorMaker"),
    "exactly.once.source.support": (FEATURES["exactly_once"][0], "KIP-618 in dedicated MirrorMaker, which needs KIP-710"),
    "use.incremental.alter.configs": (INCREMENTAL_ALTER_CONFIGS_SINCE, "KIP-894, MirrorSourceConfig.USE_INCREMENTAL_ALTER_CONFIGS"),
    "add.source.alias.to.metrics": (KafkaVersion(3, 5, 0), "MirrorSourceConfig.ADD_SOURCE_ALIAS_TO_METRICS"),
    "replication.policy.internal.topic.separator.enabled": (
        KafkaVersion(*INTERNAL_SEPARATOR_SWITCH_SINCE), "KAFKA-15102, MirrorClientConfig.INTERNAL_TOPIC_SEPARATOR_ENABLED"),
    "emit.offset-syncs.enabled": (KafkaVersion(3, 9, 0), "MirrorConnectorConfig.EMIT_OFFSET_SYNCS_ENABLED"),
}
# MM2 never had *.whitelist keys; the include list is the plain `topics` / `groups` key.
WHITELIST_KEYS = {"topics.whitelist": "topics", "groups.whitelist": "groups"}
MISSPELLED_KEYS = {
    "task.max": "tasks.max",
    "topic.blacklist": "topics.exclude",
    "topic.exclude": "topics.exclude",
    "topic.whitelist": "topics",
    "group.blacklist": "groups.exclude",
    "group.exclude": "groups.exclude",
    "sync.topics.configs.enabled": "sync.topic.configs.enabled",
    "sync.topics.acls.enabled": "sync.topic.acls.enabled",
    "sync.group.offset.enabled": "sync.group.offsets.enabled",
    "sync.groups.offsets.enabled": "sync.group.offsets.enabled",
    "emit.heartbeat.enabled": "emit.heartbeats.enabled",
    "emit.checkpoint.enabled": "emit.checkpoints.enabled",
    "replication.policy.seperator": "replication.policy.separator",
    "offset.syncs.topic.location": "offset-syncs.topic.location",
    "offset.syncs.topic.replication.factor": "offset-syncs.topic.replication.factor",
}
# Keys passed through to clients and SASL/SSL settings: their suffixes belong to the Kafka clients.
CLIENT_PREFIXES = ("producer.", "consumer.", "admin.", "source.consumer.", "source.admin.", "target.producer.", "target.admin.",
                   "producer.override.", "consumer.override.", "admin.override.", "config.providers.")
PASS_THROUGH_PREFIXES = ("sasl.", "ssl.", "listeners.https.", "rest.")
_FLOW_PREFIX = re.compile(r"^([^.>]+)->([^.>]+)\.(.+)$")


class KeyCheck:
    """Outcome of checking extra properties: the properties to render plus what to tell the user."""

    def __init__(self):
        self.properties = {}
        self.errors = []
        self.warnings = []


def _split_scope(key, aliases):
    """Return (scope prefix, bare key): `A->B.` or `A.` for known aliases, else ''."""
    match = _FLOW_PREFIX.match(key)
    if match and match.group(1) in aliases and match.group(2) in aliases:
        return key[: len(key) - len(match.group(3))], match.group(3)
    head, sep, rest = key.partition(".")
    if sep and head in aliases:
        return head + ".", rest
    return "", key


def _bare_key_problem(bare, version):
    """Return (error, replacement, warning) for one key without its scope prefix."""
    if bare in MISSPELLED_KEYS:
        return "MirrorMaker 2 silently ignores %r; the key is %r" % (bare, _spelling_for(MISSPELLED_KEYS[bare], version)), None, None
    if bare in WHITELIST_KEYS:
        right = WHITELIST_KEYS[bare]
        return None, right, "%r is not a MirrorMaker 2 key; rendered as %r (the include list)" % (bare, right)
    if bare in DEPRECATED_KEYS:
        if version < EXCLUDE_KEYS_SINCE:
            return None, bare, None
        right = DEPRECATED_KEYS[bare]
        gone = " and removed in 4.0" if version >= BLACKLIST_KEYS_UNTIL else ""
        return None, right, "%r is deprecated since Kafka 2.7 (KIP-629)%s; rendered as %r" % (bare, gone, right)
    arrival = _arrival(bare)
    if arrival and version < arrival[0]:
        older = _spelling_for(bare, version)
        if older != bare:
            return None, older, "%r is read from Kafka %s on (%s); MirrorMaker 2 of Kafka %s reads %r: rendered as that" % (
                bare, release(arrival[0]), arrival[1], version, older)
        return ("MirrorMaker 2 of Kafka %s ignores %r, which is read from Kafka %s on (%s): remove it, or run MirrorMaker from a "
                "newer Kafka installation" % (version, bare, release(arrival[0]), arrival[1])), None, None
    if bare in MM2_KEYS or bare.startswith(PASS_THROUGH_PREFIXES):
        return None, bare, None
    if bare.startswith(CLIENT_PREFIXES):
        if bare != bare.lower():
            return "client property %r has capital letters; Kafka config names are lower case (%r)" % (bare, bare.lower()), None, None
        return None, bare, None
    if bare.lower() in MM2_KEYS:
        return "MirrorMaker 2 keys are case-sensitive: %r is ignored, the key is %r" % (bare, bare.lower()), None, None
    close = difflib.get_close_matches(bare, sorted(MM2_KEYS), n=1, cutoff=0.8)
    hint = "; did you mean %r?" % close[0] if close else ""
    return None, bare, "%r is not a known MirrorMaker 2 key, rendered as given%s" % (bare, hint)


def release(version):
    """`2.7` for 2.7.0, `3.5.2` when the patch release matters."""
    return str(version) if version.patch else "%d.%d" % (version.major, version.minor)


def _arrival(bare):
    """(first release, where it is defined) of a key or of the prefix it starts with, None for keys every MM2 reads."""
    if bare in KEYS_SINCE:
        return KEYS_SINCE[bare]
    for prefix, arrival in KEYS_SINCE.items():
        if prefix.endswith(".") and bare.startswith(prefix):
            return arrival
    return None


def unread_keys(properties, aliases, version):
    """Keys of rendered `properties` that MirrorMaker 2 of `version` ignores: newer than it, or *.blacklist from 4.0 on."""
    unread = []
    for key in sorted(properties):
        bare = _split_scope(str(key), aliases)[1]
        arrival = _arrival(bare)
        if (arrival and version < arrival[0]) or (bare in DEPRECATED_KEYS and version >= BLACKLIST_KEYS_UNTIL):
            unread.append(key)
    return unread


def _spelling_for(key, version):
    """The exclude keys are spelled *.blacklist before 2.7."""
    if version < EXCLUDE_KEYS_SINCE:
        for old, new in DEPRECATED_KEYS.items():
            if new == key:
                return old
    return key


# MirrorMaker's producers write with acks=all: Connect's Worker sets it for every source task's producer (Worker
# producerConfigs, 2.4 onwards) and MirrorMaker 1's producer file says so. A weaker acks acknowledges a record one broker
# holds, and a target broker killed at that moment loses it for good: MirrorMaker has moved on, so no mirror is complete.
PRODUCER_ACKS_KEYS = tuple("%sacks" % prefix for prefix in ("producer.", "target.producer.", "producer.override."))
SAFE_ACKS = ("all", "-1")


def _value_problem(bare, value):
    """An error for a value that makes MirrorMaker lose records, else None."""
    if bare in PRODUCER_ACKS_KEYS and str(value).strip().lower() not in SAFE_ACKS:
        return ("acks=%s acknowledges a record before every in-sync replica has it, so a target broker that dies loses what "
                "MirrorMaker already counted as copied: remove the key (MirrorMaker writes with acks=all)" % value)
    return None


def check_extra_properties(properties, aliases, version, origin):
    """Check a dict of extra properties; `origin` names where they came from for messages."""
    result = KeyCheck()
    for key in sorted(properties or {}):
        scope, bare = _split_scope(str(key), aliases)
        error, replacement, warning = _bare_key_problem(bare, version)
        error = error or _value_problem(bare, properties[key])
        where = "%s: %r" % (origin, key)
        if error:
            result.errors.append("%s: %s" % (where, error))
            continue
        if warning:
            result.warnings.append("%s: %s" % (where, warning))
        result.properties[scope + replacement] = properties[key]
    return result


def exclude_key(kind, version):
    """`topics.exclude` / `groups.exclude`, or the *.blacklist spelling on Kafka before 2.7."""
    return "%s.blacklist" % kind if version < EXCLUDE_KEYS_SINCE else "%s.exclude" % kind
