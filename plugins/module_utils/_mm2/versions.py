# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kafka versions and the MirrorMaker features they bring."""
from __future__ import annotations

from collections import namedtuple

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import IDENTITY_POLICY_SINCE, OFFSET_SYNCS_LOCATION_SINCE, parse_release


class KafkaVersion(namedtuple("KafkaVersion", "major minor patch")):
    __slots__ = ()

    @classmethod
    def parse(cls, text):
        return cls(*parse_release(text, required=True))

    def __str__(self):
        return "%d.%d.%d" % self


# First version with each feature, and the KIP (or JIRA) that brought it.
FEATURES = {
    "mm2": (KafkaVersion(2, 4, 0), "KIP-382"),
    "sync_group_offsets": (KafkaVersion(2, 7, 0), "KIP-545"),
    "identity_policy": (KafkaVersion(*IDENTITY_POLICY_SINCE), "KAFKA-9726"),
    "offset_syncs_location": (KafkaVersion(*OFFSET_SYNCS_LOCATION_SINCE), "KIP-716"),
    "dedicated_rest": (KafkaVersion(3, 5, 0), "KIP-710"),
    "exactly_once": (KafkaVersion(3, 5, 0), "KIP-618/KIP-656"),
}
MM1_REMOVED = KafkaVersion(4, 0, 0)
# KIP-894: MirrorSourceConnector syncs topic configs with IncrementalAlterConfigs (use.incremental.alter.configs), not the
# deprecated AlterConfigs, from 3.5.0 on. A release fact, not a FEATURES entry: nothing asks for it or gates on it.
INCREMENTAL_ALTER_CONFIGS_SINCE = KafkaVersion(3, 5, 0)
# KIP-896: Kafka 4.0 clients (MirrorMaker 2 included) dropped the protocol versions of brokers older than 2.1.
CLIENTS_NEED_BROKERS = ((KafkaVersion(4, 0, 0), KafkaVersion(2, 1, 0), "KIP-896"),)


def requires(feature, version, what):
    """An error message when MirrorMaker of Kafka `version` lacks `feature`, else None."""
    since, kip = FEATURES[feature]
    if version < since:
        return ("%s needs Kafka %d.%d or later (%s); MirrorMaker runs Kafka %s (mirrormaker2_kafka_version, or the version detected "
                "in mirrormaker2_kafka_home)" % (what, since.major, since.minor, kip, version))
    return None


def broker_too_old(client, broker):
    """An error message when clients of Kafka `client` cannot talk to brokers of Kafka `broker`, else None."""
    for clients_since, brokers_since, kip in CLIENTS_NEED_BROKERS:
        if client >= clients_since and broker < brokers_since:
            return ("Kafka %d.%d clients (MirrorMaker runs Kafka %s) talk to brokers %d.%d or later only (%s); the cluster runs %s"
                    % (clients_since.major, clients_since.minor, client, brokers_since.major, brokers_since.minor, kip, broker))
    return None
