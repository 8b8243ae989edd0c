# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Golden names of MirrorMaker 2's topics, worked out by hand from the Kafka source named in each case, run against the
sandbox's stand-in (from a properties file, as it runs) and the collection's vocabulary (plugins/module_utils/_mm2)."""
from dataclasses import dataclass, field

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import FlowNames
from sandbox.mm2.settings import load

IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"


@dataclass(frozen=True)
class Names:
    name: str
    release: tuple
    rule: str
    offset_syncs_topic: str
    checkpoints_topic: str
    separator: str = "."
    identity: bool = False
    syncs_on_target: bool = False
    internal_separator_enabled: bool = True
    remote: dict = field(default_factory=dict)  # source topic -> remote topic
    internal: dict = field(default_factory=dict)  # topic -> isInternalTopic


CASES = [
    Names("2.4.1 defaults", (2, 4, 1), "MirrorConnectorConfig.offsetSyncsTopic / checkpointsTopic (2.4.1)",
          "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal", remote={"orders": "primary.orders"},
          internal={"x-internal": True, "x.internal": True, "__consumer_offsets": True, ".hidden": True, "orders": False}),
    Names("3.0 offset syncs on the target", (3, 0, 0), "MirrorConnectorConfig.offsetSyncsTopic (3.0.0): otherClusterAlias",
          "mm2-offset-syncs.primary.internal", "primary.checkpoints.internal", syncs_on_target=True),
    Names("3.0 custom separator, dotted internal names", (3, 0, 0),
          "MirrorConnectorConfig (3.0.0) builds internal names with '.', DefaultReplicationPolicy.formatRemoteTopic the separator",
          "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal", separator="_", remote={"orders": "primary_orders"},
          internal={"a_internal": False}),
    Names("3.1 custom separator in internal names", (3, 1, 0), "DefaultReplicationPolicy.offsetSyncsTopic / checkpointsTopic (3.1.0, KIP-690)",
          "mm2-offset-syncs_secondary_internal", "primary_checkpoints_internal", separator="_",
          internal={"a_internal": True, "mm2-offset-syncs_b_internal": True}),
    Names("3.9 separator and offset syncs on the target", (3, 9, 0), "MirrorSourceConfig.offsetSyncsTopic + DefaultReplicationPolicy (3.9)",
          "mm2-offset-syncs_primary_internal", "primary_checkpoints_internal", separator="_", syncs_on_target=True),
    Names("3.9 internal separator switched off", (3, 9, 0), "DefaultReplicationPolicy.internalSeparator (3.5.2+, KIP-949)",
          "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal", separator="_", internal_separator_enabled=False,
          remote={"orders": "primary_orders"}),
    Names("3.9 identity policy and heartbeat-like names", (3, 9, 0), "IdentityReplicationPolicy.formatRemoteTopic / looksLikeHeartbeat",
          "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal", identity=True,
          remote={"orders": "orders", "heartbeats": "primary.heartbeats", "app-heartbeats": "primary.app-heartbeats"}),
    Names("3.9 every *.internal and *-internal name is internal", (3, 9, 2), "ReplicationPolicy.isInternalTopic (3.9)",
          "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal",
          internal={"ops.internal": True, "ops-internal": True, "mm2-offset-syncs.secondary.internal": True,
                    "primary.checkpoints.internal": True, "__consumer_offsets": True, "heartbeats": False}),
    Names("4.3.1 only MirrorMaker's own and Kafka's topics are internal", (4, 3, 1),
          "ReplicationPolicy.isInternalTopic / DefaultReplicationPolicy.isMM2InternalTopic (4.0+, KIP-1074)",
          "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal",
          internal={"ops.internal": False, "ops-internal": False, "mm2-offset-syncs.secondary.internal": True,
                    "mm2-configs.primary.internal": True, "primary.checkpoints.internal": True, "__consumer_offsets": True,
                    ".hidden": True, "heartbeats": False}),
    Names("4.3.1 custom separator", (4, 3, 1), "DefaultReplicationPolicy.internalSuffix / checkpointsTopicSuffix (4.0+)",
          "mm2-offset-syncs_secondary_internal", "primary_checkpoints_internal", separator="_",
          internal={"ops_internal": False, "mm2-offset-syncs_secondary_internal": True, "primary_checkpoints_internal": True}),
]


def properties(case):
    lines = ["clusters = primary, secondary", "primary.bootstrap.servers = a:9092", "secondary.bootstrap.servers = b:9092",
             "primary->secondary.enabled = true", "replication.policy.separator = %s" % case.separator]
    if case.identity:
        lines.append("replication.policy.class = %s" % IDENTITY)
    if case.syncs_on_target:
        lines.append("offset-syncs.topic.location = target")
    if not case.internal_separator_enabled:
        lines.append("replication.policy.internal.topic.separator.enabled = false")
    return "\n".join(lines) + "\n"


def stand_in(case, tmp_path):
    path = tmp_path / "mm2.properties"
    path.write_text(properties(case))
    flow = next(f for f in load(str(path), None, case.release).flows if f.enabled)
    return (flow.records.offset_syncs_topic, flow.records.checkpoints_topic, {t: flow.records.remote_topic(t) for t in case.remote},
            {t: flow.policy.is_internal_topic(t) for t in case.internal})


def product(case):
    names = FlowNames("primary", "secondary", "identity" if case.identity else "default", case.separator,
                      "target" if case.syncs_on_target else "source", case.release, case.internal_separator_enabled)
    return (names.offset_syncs_topic, names.checkpoints_topic, {t: names.remote_topic(t) for t in case.remote},
            {t: names.policy.is_internal_topic(t) for t in case.internal})


def expected(case):
    return case.offset_syncs_topic, case.checkpoints_topic, case.remote, case.internal


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_stand_in_names_topics_like_mirrormaker_2(case, tmp_path):
    assert stand_in(case, tmp_path) == expected(case), case.rule


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_collection_names_topics_like_mirrormaker_2(case):
    assert product(case) == expected(case), case.rule
