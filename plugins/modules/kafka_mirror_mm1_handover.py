#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_mirror_mm1_handover
short_description: Start MirrorMaker 2 where a MirrorMaker 1 flow stopped, so that nothing is copied twice
version_added: 0.1.0
description:
  - Switching a running MirrorMaker 1 mirror (C(kafka.tools.MirrorMaker)) to MirrorMaker 2 with the identity replication
    policy (the same topic names) would copy every record again, since MirrorMaker 2 keeps its progress in a place of its own.
    This module writes that progress before MirrorMaker 2's first start - for each source partition that MirrorMaker 1's
    consumer group committed an offset for, the source offset of the flow's C(MirrorSourceConnector) in MirrorMaker 2's
    offsets topic on the target (Kafka Connect's C(offset.storage.topic), by default C(mm2-offsets.<source_alias>.internal)),
    so that MirrorMaker 2 starts each partition at the group's committed offset.
  - MirrorMaker 1 commits only what its producer has flushed, so every record before a committed offset is on the target, and
    what MirrorMaker 2 copies again is at most what MirrorMaker 1 copied after its last commit (nothing after a clean stop).
  - Run it with MirrorMaker 1 stopped (its group without members) and before MirrorMaker 2 starts; the mirrormaker2 role does
    both with C(mirrormaker2_mm1_handover). A source offset MirrorMaker 2 (or an earlier run) already wrote is never
    overwritten, so a second run changes nothing.
  - The offsets topic is created (compacted) when it does not exist yet, as MirrorMaker 2 would create it.
options:
  source_alias:
    description: Alias of the source cluster in the MirrorMaker 2 configuration (C(source.cluster.alias) of the flow).
    type: str
    required: true
  source:
    description: Connection to the source cluster, where MirrorMaker 1's group committed its offsets; the same keys as the top-level connection options.
    type: dict
    required: true
  mirrormaker1_group:
    description: MirrorMaker 1's consumer group on the source (the mirrormaker2 role's C(mirrormaker2_mm1_group_id)).
    type: str
    required: true
  topics:
    description: Regular expressions (full match) of the source topics MirrorMaker 2 mirrors; the group's other topics are left out.
    type: list
    elements: str
    default: ['.*']
  topics_exclude:
    description: Regular expressions (full match) of source topics left out.
    type: list
    elements: str
  offsets_topic:
    description: MirrorMaker 2's C(offset.storage.topic) of the flow; unset, its default C(mm2-offsets.<source_alias>.internal).
    type: str
  offsets_topic_partitions:
    description: Partitions of the offsets topic when this module creates it (MirrorMaker 2's C(offset.storage.partitions) default).
    type: int
    default: 25
  offsets_topic_replication_factor:
    description: Replication factor of the offsets topic when this module creates it; unset, the target's broker count up to 3.
    type: int
  connector_name:
    description: Name of the flow's source connector, which keys its offsets (MirrorMaker 2 names it after its class).
    type: str
    default: MirrorSourceConnector
  read_timeout:
    description: Seconds allowed for reading the offsets topic to its end.
    type: int
    default: 60
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.kafka_connection
  - kafkaops.mirror.kafka_connection.source_cluster
attributes:
  check_mode:
    support: full
    details: Reads the group and the offsets topic and returns what would be written; MirrorMaker 1 may still be running then.
  diff_mode:
    support: full
    details: The source offsets written, by C(topic:partition).
  idempotent:
    support: full
    details: Offsets already in the offsets topic are kept (RV(kept)); a second run writes nothing.
notes:
  - The key and value are written byte for byte as MirrorMaker 2 (Kafka Connect's JSON converter) writes them, into the
    partition Kafka's default partitioner gives the key, so that MirrorMaker 2's own later records for it follow in order.
seealso:
  - module: kafkaops.mirror.kafka_mirror_status
  - module: kafkaops.mirror.kafka_mirror_offsets
author: kafkaops.mirror developers (@kafkaops)
"""

EXAMPLES = r"""
- name: Start MirrorMaker 2 where MirrorMaker 1 stopped (MirrorMaker 1 stopped, MirrorMaker 2 not started yet)
  kafkaops.mirror.kafka_mirror_mm1_handover:
    bootstrap_servers: [wn0-second:9092]
    source:
      bootstrap_servers: [wn0-primar:9092]
    source_alias: primary
    mirrormaker1_group: mirrormaker1
    topics: ['orders.*']
"""

RETURN = r"""
offsets_topic:
  description: The offsets topic read and written.
  returned: always
  type: str
created_topic:
  description: The offsets topic created (C(name), C(partitions), C(replication_factor)), or null.
  returned: always
  type: dict
mirrormaker1_group:
  description: MirrorMaker 1's group on the source - C(id), C(state), C(members).
  returned: always
  type: dict
seeded:
  description: Source offsets written (or that would be), C(topic:partition) to the last source offset taken as copied.
  returned: always
  type: dict
starts_at:
  description: Where MirrorMaker 2 starts each seeded partition (MirrorMaker 1's committed offset).
  returned: always
  type: dict
kept:
  description: Partitions that already have a source offset in the offsets topic, left as they are.
  returned: always
  type: dict
not_seeded:
  description: Partitions of the group's that get no offset, with the reason (MirrorMaker 2 starts them at their beginning).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import (
    KafkaConnection,
    KafkaConnectionError,
    KafkaError,
    ensure_kafka_python,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import (
    connection_option_errors,
    kafka_connection_argument_spec,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.mm1_handover import run_handover
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets_plan import OffsetsError
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import pattern_problems


def main():
    spec = kafka_connection_argument_spec()
    spec.update(
        source=dict(type="dict", required=True, options=kafka_connection_argument_spec()),
        source_alias=dict(type="str", required=True),
        mirrormaker1_group=dict(type="str", required=True),
        topics=dict(type="list", elements="str", default=[".*"]),
        topics_exclude=dict(type="list", elements="str"),
        offsets_topic=dict(type="str"),
        offsets_topic_partitions=dict(type="int", default=25),
        offsets_topic_replication_factor=dict(type="int"),
        connector_name=dict(type="str", default="MirrorSourceConnector"),
        read_timeout=dict(type="int", default=60),
    )
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    problems = pattern_problems("topics", params["topics"]) + pattern_problems("topics_exclude", params["topics_exclude"])
    problems += [f"option source: {message}" for message in connection_option_errors(params["source"])]
    for name in ("source_alias", "mirrormaker1_group", "connector_name"):
        if not params[name].strip():
            problems.append(f"{name} is empty")
    for name, least in (("offsets_topic_partitions", 1), ("offsets_topic_replication_factor", 1), ("read_timeout", 1)):
        if params[name] is not None and params[name] < least:
            problems.append(f"{name} must be at least {least}")
    if problems:
        module.fail_json(msg="kafka_mirror_mm1_handover: invalid options, nothing was read or changed: " + "; ".join(problems) + ".")
    ensure_kafka_python(module)
    try:
        with KafkaConnection(params) as target, KafkaConnection(params["source"]) as source:
            result = run_handover(target, source, params, module.check_mode)
    except (KafkaConnectionError, OffsetsError) as exc:
        module.fail_json(msg=f"kafka_mirror_mm1_handover: {exc}")
    except KafkaError as exc:
        module.fail_json(msg=f"kafka_mirror_mm1_handover: Kafka request failed ({type(exc).__name__}: {exc}); check the connection "
                             f"options and that the clusters are healthy, then run again (offsets written so far are kept).")
    if not module._diff:
        result.pop("diff")
    module.exit_json(**result)


if __name__ == "__main__":
    main()
