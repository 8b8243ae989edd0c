"""MirrorSourceConnector's job for one flow: remote topics, record copies, offset-syncs, resumable progress."""
from __future__ import annotations

import json
import logging
import time

from kafka import TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType

from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_records import OffsetSync, offset_syncs_topic

LOG = logging.getLogger("sandbox.mm2")
COMPACT = {"cleanup.policy": "compact"}
POLL_MAX_RECORDS = 5000


def progress_topic(source_alias):
    """Connect's offsets topic of a dedicated MirrorMaker 2 herder, on the target cluster."""
    return "mm2-offsets.%s.internal" % source_alias


def progress_key(source_alias, topic, partition):
    # Connect's JsonConverter (schemas off) key for a MirrorSourceConnector source partition.
    return json.dumps(["MirrorSourceConnector", {"cluster": source_alias, "partition": partition, "topic": topic}],
                      separators=(",", ":"), sort_keys=True).encode()


class PartitionSyncState:
    """When MirrorSourceTask emits an offset sync for a partition (offset.lag.max semantics)."""

    def __init__(self):
        self.previous_upstream = -1
        self.previous_downstream = -1
        self.last_sync_downstream = -1

    def update(self, upstream, downstream, max_lag):
        first = self.last_sync_downstream == -1
        # A translated offset lands one past the last sync, hence the + 1.
        stale = downstream - (self.last_sync_downstream + 1) >= max_lag
        skipped_upstream = upstream - self.previous_upstream != 1
        truncated_downstream = downstream < self.previous_downstream
        emit = first or stale or skipped_upstream or truncated_downstream
        if emit:
            self.last_sync_downstream = downstream
        self.previous_upstream, self.previous_downstream = upstream, downstream
        return emit


class SyncStore:
    """Offset syncs per source topic-partition, as read back from (and written to) the offset-syncs topic."""

    def __init__(self):
        self.syncs = {}

    def add(self, sync):
        self.syncs.setdefault((sync.topic, sync.partition), []).append((sync.upstream_offset, sync.downstream_offset))

    def for_partition(self, topic, partition):
        return self.syncs.get((topic, partition), [])


class SourceReplicator:
    def __init__(self, flow, source, target, syncs_cluster):
        self.flow = flow
        self.source, self.target, self.syncs_cluster = source, target, syncs_cluster
        self.consumer = None
        self.assigned = {}  # TopicPartition -> remote topic name
        self.progress = {}  # (topic, partition) -> last copied upstream offset
        self.states = {}
        self.store = SyncStore()
        self.max_lag = flow.number("offset.lag.max")

    def start(self):
        flow = self.flow
        self.target.ensure_topic(progress_topic(flow.source), 1, self.target.storage_replication_factor(), COMPACT)
        self.syncs_cluster.ensure_topic(offset_syncs_topic(flow.target), 1, flow.number("offset-syncs.topic.replication.factor"), COMPACT)
        for record in self.target.read_all(progress_topic(flow.source)):
            key = json.loads(record.key)
            if key[0] == "MirrorSourceConnector" and key[1].get("cluster") == flow.source and record.value:
                self.progress[(key[1]["topic"], key[1]["partition"])] = json.loads(record.value)["offset"]
        for record in self.syncs_cluster.read_all(offset_syncs_topic(flow.target)):
            self.store.add(OffsetSync.decode(record.key, record.value))
        LOG.info("%s: resuming %d partitions from %s, %d offset syncs known", flow.name, len(self.progress),
                 progress_topic(flow.source), sum(len(v) for v in self.store.syncs.values()))
        self.consumer = self.source.consumer()
        self.refresh_topics()

    def _source_configs(self, topic):
        if not self.flow.flag("sync.topic.configs.enabled"):
            return {}
        described = self.source.admin().describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
        entries = described.get("topic", {}).get(topic, {})
        return {key: data["value"] for key, data in entries.items()
                if data.get("config_source") in ("DYNAMIC_TOPIC_CONFIG", None) and data.get("value") is not None and self.flow.copies_config(key)}

    def refresh_topics(self):
        flow = self.flow
        counts = {topic: n for topic, n in self.source.partition_counts().items() if flow.replicates_topic(topic)}
        remote_counts = self.target.partition_counts()
        wanted = {}
        for topic, partitions in sorted(counts.items()):
            remote = flow.policy.remote_topic(flow.source, topic)
            if remote not in remote_counts:
                self.target.ensure_topic(remote, partitions, flow.number("replication.factor"), self._source_configs(topic))
            elif remote_counts[remote] < partitions:
                self.target.admin().create_partitions({remote: {"count": partitions}})
                LOG.info("%s: grew %s to %d partitions like %s", flow.name, remote, partitions, topic)
            for partition in range(partitions):
                wanted[TopicPartition(topic, partition)] = remote
        if set(wanted) != set(self.assigned):
            self.consumer.assign(list(wanted))
            for tp in wanted:
                if tp not in self.assigned:
                    last = self.progress.get((tp.topic, tp.partition))
                    if last is None:
                        self.consumer.seek_to_beginning(tp)
                    else:
                        self.consumer.seek(tp, last + 1)
            LOG.info("%s: replicating %d topics (%d partitions): %s", flow.name, len(counts), len(wanted), ", ".join(sorted(counts)) or "none")
            self.assigned = wanted

    def step(self, timeout_ms):
        """Copy one poll's worth of records; returns how many were copied."""
        if not self.assigned:
            time.sleep(timeout_ms / 1000.0)
            return 0
        batches = self.consumer.poll(timeout_ms=timeout_ms, max_records=POLL_MAX_RECORDS)
        if not batches:
            # Quirk (noida-db 0.2.3): an empty fetch is answered at once, whatever fetch_max_wait_ms says, so an idle
            # poll spins (~50 fetches/s, 35-50% of a core); pausing after an empty poll gives that CPU back.
            time.sleep(timeout_ms / 1000.0)
            return 0
        producer = self.target.producer()
        sent = []
        for tp, records in batches.items():
            remote = self.assigned[tp]
            for record in records:
                future = producer.send(remote, key=record.key, value=record.value, headers=list(record.headers or []),
                                       partition=tp.partition, timestamp_ms=record.timestamp)
                sent.append((tp, record.offset, future))
        producer.flush()
        syncs = self.syncs_cluster.producer()
        topic = offset_syncs_topic(self.flow.target)
        last = {}
        for tp, upstream, future in sent:
            downstream = future.get(timeout=30).offset
            state = self.states.setdefault(tp, PartitionSyncState())
            if state.update(upstream, downstream, self.max_lag):
                sync = OffsetSync(tp.topic, tp.partition, upstream, downstream)
                syncs.send(topic, key=sync.encode_key(), value=sync.encode_value(), partition=0)
                self.store.add(sync)
            last[tp] = upstream
        syncs.flush()
        # At least once: progress is committed only after the copies above were acknowledged.
        for tp, upstream in last.items():
            self.progress[(tp.topic, tp.partition)] = upstream
            producer.send(progress_topic(self.flow.source), key=progress_key(self.flow.source, tp.topic, tp.partition),
                          value=json.dumps({"offset": upstream}).encode(), partition=0)
        producer.flush()
        return len(sent)
