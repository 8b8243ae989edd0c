# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Connect worker of one MirrorMaker 2 herder, as far as it shows in Kafka: its three internal topics on the herder's
target cluster, and the source offsets of its connectors in the offsets topic.

Written from MirrorMakerConfig.workerConfig (every herder, enabled flow or heartbeats only, is a DistributedHerder whose
config, offsets and status topics default to mm2-configs/mm2-offsets/mm2-status.<source alias>.internal on the target),
DistributedConfig and KafkaTopicBasedBackingStore (config topic 1 partition, offset.storage.partitions 25,
status.storage.partitions 5, each `*.storage.replication.factor` 3, cleanup.policy=compact), and
KafkaOffsetBackingStore / OffsetStorageWriter (records keyed by the JSON of [connector name, source partition map], value
the JSON of the source offset map, partitioned by the producer's default partitioner: murmur2 of the key bytes).
The differential test (tests/integration/differential) found real MirrorMaker 2 3.2.0, 3.9.2 and 4.3.1 create all three
topics with these partition counts, for the heartbeats-only herder of the reverse direction too, and place each key where
murmur2 puts it; the stand-in had made only a 1-partition offsets topic, for enabled flows only.
"""
from __future__ import annotations

import json
import logging


LOG = logging.getLogger("sandbox.mm2")
COMPACT = {"cleanup.policy": "compact"}
# MirrorMakerConfig.workerConfig puts these in when absent; DistributedConfig's defaults for the rest.
STORAGE_DEFAULTS = {
    "config.storage.topic": "mm2-configs.{source}.internal",
    "offset.storage.topic": "mm2-offsets.{source}.internal",
    "status.storage.topic": "mm2-status.{source}.internal",
    "config.storage.replication.factor": "3",
    "offset.storage.replication.factor": "3",
    "status.storage.replication.factor": "3",
    "offset.storage.partitions": "25",
    "status.storage.partitions": "5",
}


def offset_key(connector, partition_fields):
    """Connect's JsonConverter (schemas off) of [connector, source partition]: compact JSON in the field order Java's HashMap
    gives the connector's map (MirrorUtils.wrapPartition and friends), which decides the bytes and so the partition."""
    return json.dumps([connector, partition_fields], separators=(",", ":")).encode()


def source_partition(source_alias, topic, partition):
    """MirrorUtils.wrapPartition: {cluster, partition, topic} (that HashMap's iteration order)."""
    return {"cluster": source_alias, "partition": partition, "topic": topic}


def checkpoint_partition(group, remote_topic, partition):
    """MirrorCheckpointTask.checkpointRecord's source partition (Checkpoint.connectPartition): {partition, topic, group}."""
    return {"partition": partition, "topic": remote_topic, "group": group}


def heartbeat_partition(source_alias, target_alias):
    """MirrorHeartbeatTask's source partition (Heartbeat.connectPartition): {sourceClusterAlias, targetClusterAlias}."""
    return {"sourceClusterAlias": source_alias, "targetClusterAlias": target_alias}


class ConnectWorker:
    """The herder source -> target's internal topics on the target, and its offsets topic."""

    def __init__(self, flow, target):
        self.flow, self.target = flow, target
        self.settings = {key: value.format(source=flow.source) for key, value in STORAGE_DEFAULTS.items()}
        self.settings.update({key: value for key, value in flow.worker.items() if key in STORAGE_DEFAULTS})
        self.offsets_topic = self.settings["offset.storage.topic"]
        self.written = set()  # keys of connectors whose offsets never change (checkpoints, heartbeats): written once

    def start(self):
        """KafkaConfigBackingStore, KafkaOffsetBackingStore and KafkaStatusBackingStore create their topics at herder start."""
        settings = self.settings
        self.target.ensure_topic(settings["config.storage.topic"], 1, int(settings["config.storage.replication.factor"]), COMPACT)
        self.target.ensure_topic(self.offsets_topic, int(settings["offset.storage.partitions"]), int(settings["offset.storage.replication.factor"]),
                                 COMPACT)
        self.target.ensure_topic(settings["status.storage.topic"], int(settings["status.storage.partitions"]),
                                 int(settings["status.storage.replication.factor"]), COMPACT)

    @staticmethod
    def records(connector, offsets):
        """(key, value) of the offsets topic for {source partition map as a tuple of items: offset map}. Sent without a
        partition, as KafkaBasedLog.send does: the producer's default partitioner (murmur2 of the key, which kafka-python's
        shares) places each among the partitions the topic has when it is sent (fewer than 25 after an auto-create)."""
        return [(offset_key(connector, dict(fields)), json.dumps(offset, separators=(",", ":")).encode()) for fields, offset in offsets]

    def read_offsets(self, connector):
        """{key: offset map} of `connector`'s source offsets in the offsets topic, newest last (every partition)."""
        found = {}
        for record in self.target.read_partitions(self.offsets_topic):
            if not record.key:
                continue
            key = json.loads(record.key)
            if key[0] == connector:
                found[record.key] = json.loads(record.value) if record.value else None
        return found

    def write_once(self, connector, fields):
        """A constant {"offset": 0} (the checkpoint and heartbeat connectors' source offset), once per key in a lifetime;
        flushed with the next commit()."""
        key = offset_key(connector, fields)
        if key in self.written:
            return
        self.target.offset_store_producer().send(self.offsets_topic, key=key, value=b'{"offset":0}')
        self.written.add(key)

    def commit(self, records, timeout_s):
        """WorkerSourceTask.commitOffsets through the offset store: send (key, value) records and wait for them at most
        offset.flush.timeout.ms; past it kafka-python raises KafkaTimeoutError, and the caller keeps its offsets for the next
        commit, as Connect logs "Timed out waiting to flush offsets to storage" and tries again at the next interval."""
        producer = self.target.offset_store_producer()
        for key, value in records:
            producer.send(self.offsets_topic, key=key, value=value)
        producer.flush(timeout=timeout_s)
