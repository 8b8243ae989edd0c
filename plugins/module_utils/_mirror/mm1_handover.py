# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switching a MirrorMaker 1 flow to MirrorMaker 2 without copying twice (module kafka_mirror_mm1_handover): MirrorMaker 2
starts each source partition where MirrorMaker 1's group stopped.

MirrorMaker 2's source task keeps its progress as a Kafka Connect source offset in the flow's offsets topic on the target
(MirrorMakerConfig.workerConfig: offset.storage.topic, default `mm2-offsets.<source alias>.internal`), as Connect's
OffsetStorageWriter writes it: the key is the JSON array [connector name, source partition], the connector named after its
class (MirrorSourceConnector), the source partition {"cluster": <source alias>, "partition": <n>, "topic": <name>}
(MirrorUtils.wrapPartition, a java.util.HashMap, which JsonConverter writes in its iteration order: cluster, partition,
topic), and the value {"offset": <the last source offset copied>} (MirrorUtils.wrapOffset). At start the task seeks each
partition to that offset plus one, or, without one, leaves it to auto.offset.reset (earliest): MirrorSourceTask.loadOffset
and initializeConsumer, read at the tags 3.2.0 and 3.9.0. The worker reads the topic into a map keyed by the record key's
bytes, so a seeded key must be the same bytes MirrorMaker 2 writes, and its partition the one Kafka's default partitioner
gives those bytes (murmur2), so that MirrorMaker 2's own later records for the key follow it in the same partition.

MirrorMaker 1's group commits the offset of the next record to copy, and only after its producer flushed, so every record
before it is on the target: seeding `committed - 1` starts MirrorMaker 2 at the committed offset, and what it copies again
is at most what MirrorMaker 1 copied after its last commit (none after a clean stop, which commits).

The plan is pure (plan_seeds); the I/O reads the group, the offsets topic, and writes only the missing keys: a key that
MirrorMaker 2 (or an earlier run) already wrote is never overwritten.
"""
from __future__ import annotations

import json

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_admin import existing_partitions
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets import group_activity, group_offsets, read_partitions
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets_plan import OffsetsError
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import compile_patterns, matches_any

try:
    from kafka.admin import NewTopic
    from kafka.partitioner.default import murmur2
    from kafka.structs import TopicPartition
except ImportError:
    NewTopic = TopicPartition = murmur2 = None  # _kafka.client.ensure_kafka_python() reports the missing library

CONNECTOR = "MirrorSourceConnector"
MAX_AUTO_REPLICATION_FACTOR = 3


def offsets_topic(source_alias):
    """MirrorMaker 2's default offset.storage.topic of a flow from `source_alias`."""
    return f"mm2-offsets.{source_alias}.internal"


def source_key(connector, source_alias, topic, partition):
    """The offsets topic's record key of one source partition, byte for byte as MirrorMaker 2 writes it."""
    wrapped = {"cluster": source_alias, "partition": partition, "topic": topic}  # HashMap order of these three keys
    return json.dumps([connector, wrapped], separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def source_value(offset):
    return json.dumps({"offset": offset}, separators=(",", ":")).encode("utf-8")


def partition_for(key, partitions):
    """Kafka's default partitioner for a keyed record: toPositive(murmur2(key)) % partitions."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def parse_key(raw):
    """(connector, cluster, topic, partition) of an offsets-topic key, or None for a key of another shape."""
    try:
        connector, partition = json.loads(raw.decode("utf-8"))
        return connector, partition["cluster"], partition["topic"], int(partition["partition"])
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError):
        return None


def plan_seeds(committed, existing, topic_patterns, exclude_patterns):
    """(seeds, kept, not_seeded): seeds {(topic, partition): MirrorMaker 2 offset to write} for the group's committed offsets
    `committed` {(topic, partition): offset}; kept {(topic, partition): MirrorMaker 2's offset} where `existing` (the offsets
    topic's latest values for this flow) already has one; not_seeded {(topic, partition): why}."""
    seeds, kept, not_seeded = {}, {}, {}
    for (topic, partition), offset in sorted(committed.items()):
        if not matches_any(topic, topic_patterns) or matches_any(topic, exclude_patterns):
            continue
        if (topic, partition) in existing:
            kept[(topic, partition)] = existing[(topic, partition)]
        elif offset <= 0:
            not_seeded[(topic, partition)] = "MirrorMaker 1 copied nothing from it: MirrorMaker 2 starts at its beginning"
        else:
            seeds[(topic, partition)] = offset - 1
    return seeds, kept, not_seeded


def _read_existing(consumer, admin, topic, connector, source_alias, timeout_s):
    """{(topic, partition): offset} of the flow's source offsets in MirrorMaker 2's offsets topic, last record wins (a
    record without a value deletes the key)."""
    tps = [TopicPartition(name, p) for name, p in sorted(existing_partitions(admin, {topic}))]
    latest = {}
    for records in read_partitions(consumer, tps, timeout_s, f"topic {topic} on the target").values():
        for record in records:  # a key's records are in one partition, in order
            parsed = parse_key(record.key) if record.key else None
            if parsed is None or parsed[0] != connector or parsed[1] != source_alias:
                continue
            if record.value is None:
                latest.pop((parsed[2], parsed[3]), None)
                continue
            try:
                latest[(parsed[2], parsed[3])] = int(json.loads(record.value.decode("utf-8"))["offset"])
            except (ValueError, TypeError, KeyError, UnicodeDecodeError):
                continue
    return latest


def _name(key):
    return "%s:%s" % key


def run_handover(target, source, params, check_mode):
    """The module result: read MirrorMaker 1's group and MirrorMaker 2's offsets topic, write the missing source offsets."""
    group, alias, connector = params["mirrormaker1_group"], params["source_alias"], params["connector_name"]
    topic = params["offsets_topic"] or offsets_topic(alias)
    source_admin, target_admin = source.admin(), target.admin()
    warnings = []
    (active, state, members), = group_activity(source_admin, [group], warnings).values()
    committed = group_offsets(source_admin, [group])[group]
    if not committed:
        raise OffsetsError(f"MirrorMaker 1's group {group} has no committed offsets on the source: nothing says where it stopped. "
                           f"Check mirrormaker2_mm1_group_id (the group.id MirrorMaker 1 ran with); nothing was changed")
    if active and not check_mode:
        raise OffsetsError(f"MirrorMaker 1's group {group} still has {members if members is not None else 'some'} member(s) on the "
                           f"source (state {state}): stop MirrorMaker 1 first, so that its last commit is final; nothing was changed")
    exists = topic in set(target_admin.list_topics())
    existing = _read_existing(target.consumer(), target_admin, topic, connector, alias, params["read_timeout"]) if exists else {}
    seeds, kept, not_seeded = plan_seeds(committed, existing, compile_patterns(params["topics"], "topics"),
                                         compile_patterns(params.get("topics_exclude") or [], "topics_exclude"))
    created = None
    if seeds and not exists:
        brokers = len(target.cluster()["brokers"])
        factor = params["offsets_topic_replication_factor"] or min(MAX_AUTO_REPLICATION_FACTOR, brokers)
        created = dict(name=topic, partitions=params["offsets_topic_partitions"], replication_factor=factor)
        if not check_mode:
            target_admin.create_topics([NewTopic(topic, params["offsets_topic_partitions"], factor,
                                                 topic_configs={"cleanup.policy": "compact"})])
    if seeds and not check_mode:
        partitions = created["partitions"] if created else len(existing_partitions(target_admin, {topic}))
        producer = target.producer(acks="all")
        futures = []
        for (name, partition), offset in sorted(seeds.items()):
            key = source_key(connector, alias, name, partition)
            futures.append(producer.send(topic, key=key, value=source_value(offset), partition=partition_for(key, partitions)))
        producer.flush()
        for future in futures:
            future.get(timeout=params["read_timeout"])
    return dict(
        changed=bool(seeds),
        offsets_topic=topic,
        created_topic=created,
        mirrormaker1_group=dict(id=group, state=state, members=members),
        seeded={_name(key): offset for key, offset in sorted(seeds.items())},
        starts_at={_name(key): offset + 1 for key, offset in sorted(seeds.items())},
        kept={_name(key): offset for key, offset in sorted(kept.items())},
        not_seeded={_name(key): why for key, why in sorted(not_seeded.items())},
        warnings=warnings,
        diff=dict(before={_name(key): None for key in sorted(seeds)}, after={_name(key): offset for key, offset in sorted(seeds.items())}),
    )
