# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which Kafka release the stand-in plays, and the connect-mirror-maker.properties keys that release reads.

Real MirrorMaker 2 is whatever Kafka its home holds, and ignores keys newer than that release without a
word (2.4.1 reads `topics.blacklist`, never `topics.exclude`). The stand-in does the same, so a file
rendered for the wrong release mirrors the wrong things in tests as it would on HDInsight.

The release comes from the stand-in's own Kafka home: the directory above it holding
bin/connect-mirror-maker.sh (the sandbox copies the stand-in into the MirrorMaker node's Kafka home),
by its `libs/kafka-clients-<version>.jar`, the jar Kafka's scripts put on the class path. Anywhere
else (run from the checkout) it plays DEFAULT_RELEASE.

Graded against real MirrorMaker 2 of 3.2.0 and 4.3.1 (tests/integration/differential), which lie on both sides of every
release this file and the stand-in switch on; 3.9.2 was graded too until the suite's time ran short, and agreed on every
check. Its 2.4 mode (HDInsight 5.0) cannot be graded, since Maven Central serves no connect-mirror 2.4.1 (the oldest is
2.7.2).

Written from Apache Kafka's sources (connect/mirror*/src/main/java/org/apache/kafka/connect/mirror at the
tags 2.4.1, 2.7.0, 3.0.0, 3.9 and trunk for 4.0), independently of the collection's own version table,
which is what the stand-in tests.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path

LOG = logging.getLogger("sandbox.mm2")
DEFAULT_RELEASE = (3, 9, 0)
SCRIPT = Path("bin") / "connect-mirror-maker.sh"
CLIENTS_JAR = re.compile(r"^kafka-clients-(\d+)\.(\d+)(?:\.(\d+))?")

# Key -> first release that reads it. Keys every release since 2.4 reads are not listed.
FIRST_READ = {
    "topics.exclude": (2, 7, 0),  # DefaultTopicFilter.TOPICS_EXCLUDE_CONFIG (KIP-629)
    "groups.exclude": (2, 7, 0),  # DefaultGroupFilter.GROUPS_EXCLUDE_CONFIG
    "config.properties.exclude": (2, 7, 0),  # DefaultConfigPropertyFilter.CONFIG_PROPERTIES_EXCLUDE_CONFIG
    "sync.group.offsets.enabled": (2, 7, 0),  # MirrorConnectorConfig.SYNC_GROUP_OFFSETS_ENABLED (KIP-545)
    "sync.group.offsets.interval.seconds": (2, 7, 0),
    "offset-syncs.topic.location": (3, 0, 0),  # MirrorConnectorConfig.OFFSET_SYNCS_TOPIC_LOCATION (KIP-716)
    "emit.offset-syncs.enabled": (3, 9, 0),  # MirrorConnectorConfig.EMIT_OFFSET_SYNCS_ENABLED
    "exactly.once.source.support": (3, 5, 0),  # DistributedConfig.EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG for MM2 (KIP-618)
    "use.incremental.alter.configs": (3, 5, 0),  # MirrorSourceConfig.USE_INCREMENTAL_ALTER_CONFIGS (KIP-894)
    "replication.policy.internal.topic.separator.enabled": (3, 5, 2),  # MirrorClientConfig.INTERNAL_TOPIC_SEPARATOR_ENABLED (KIP-949)
}
# Key -> first release that no longer reads it: 4.0 dropped the deprecated *.blacklist names.
LAST_READ_BEFORE = {"topics.blacklist": (4, 0, 0), "groups.blacklist": (4, 0, 0), "config.properties.blacklist": (4, 0, 0)}
# IdentityReplicationPolicy is in connect-mirror-client from 3.0 on (KAFKA-9726); before, the class does not exist.
IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
IDENTITY_POLICY_SINCE = (3, 0, 0)


def text(release):
    return ".".join(str(part) for part in release)


def kafka_home(start=None):
    """The Kafka installation the stand-in sits in (the nearest directory above it with bin/connect-mirror-maker.sh), or None."""
    for directory in Path(start or __file__).resolve().parents:
        if (directory / SCRIPT).is_file():
            return directory
    return None


def detect(home=None):
    """The release of `home` (default: the stand-in's own Kafka home) from its kafka-clients jar, else DEFAULT_RELEASE."""
    home = home or kafka_home()
    if home is not None:
        for jar in sorted((Path(home) / "libs").glob("kafka-clients-*.jar")):
            match = CLIENTS_JAR.match(jar.name)
            if match:
                release = tuple(int(part or 0) for part in match.groups())
                LOG.info("playing MirrorMaker 2 of Kafka %s (%s)", text(release), jar)
                return release
    LOG.info("no libs/kafka-clients-<version>.jar in a Kafka home around the stand-in: playing Kafka %s", text(DEFAULT_RELEASE))
    return DEFAULT_RELEASE


def reads(bare_key, release):
    """Whether MirrorMaker 2 of `release` reads `bare_key` (a key without its `A.` / `A->B.` scope)."""
    if bare_key in FIRST_READ and release < FIRST_READ[bare_key]:
        return False
    return not (bare_key in LAST_READ_BEFORE and release >= LAST_READ_BEFORE[bare_key])
