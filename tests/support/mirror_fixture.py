# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for one MirrorMaker 2 pass, for failover tests when the mirrormaker2 role cannot be used.

It does what MirrorSourceConnector and MirrorCheckpointConnector do, writing through the sandbox's one
MirrorMaker 2 record writer (sandbox.mm2.records: real topic names and record formats): copy every record of
a source topic to `<source>.<topic>` on the target (same partition), emit offset syncs to
`mm2-offset-syncs.<target>.internal` on the source on the first record and whenever the previous sync is
`offset_lag_max` records behind on either side (the fixture's own schedule, so that tests know where the syncs
are), and emit one checkpoint per group partition to `<source>.checkpoints.internal` on the target, translated
by the stand-in's OffsetSyncStore as MirrorCheckpointTask translates while the copy passes the group's offset.

`duplicate_first` re-copies the first N records of each partition, as after an MM2 task restart
(at-least-once delivery), so downstream offsets differ from upstream ones as they do in real mirrors.
"""
from __future__ import annotations

import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

from sandbox.mm2 import release
from sandbox.mm2.behaviour import Behaviour
from sandbox.mm2.records import MirrorRecords
from sandbox.mm2.sync_store import OffsetSyncStore
from tests.support.read_back import read_records

# Quirk (noida-db 0.2.3): it ignores fetch size limits and answers with everything to the end of the
# partition; raise kafka-python's receive cap so that a whole test topic fits in one reply.
RECEIVE_MAX = 512 * 1024 * 1024
NOIDA_API = (2, 7)  # Quirk (noida-db + kafka-python 3.0.12): DescribeCluster v0 KeyError; pin like conftest.make_kafka_admin.


def _client_options(bootstrap):
    return dict(bootstrap_servers=bootstrap, request_timeout_ms=15000, api_version=NOIDA_API)


def read_all(bootstrap, topic):
    """{partition: [ConsumerRecord, ...]} of the whole topic, read with an independent consumer."""
    consumer = KafkaConsumer(**_client_options(bootstrap), enable_auto_commit=False, group_id=None, receive_message_max_bytes=RECEIVE_MAX)
    try:
        return read_records(consumer, topic, 120)
    finally:
        consumer.close()


def keys_at(bootstrap, topic, offsets):
    """{partition: key of the record at offsets[partition]} (None where there is none), from one read of the topic with an
    independent consumer."""
    records = read_all(bootstrap, topic)
    return {partition: next((record.key.decode() for record in records.get(partition, []) if record.offset == offset), None)
            for partition, offset in offsets.items()}


def ensure_topic(bootstrap, topic, partitions):
    admin = KafkaAdminClient(**_client_options(bootstrap))
    try:
        if topic not in admin.list_topics():
            admin.create_topics({topic: {"num_partitions": partitions, "replication_factor": 1}})
    finally:
        admin.close()


def indexed_producer(bootstrap):
    # One request in flight and acks from every replica: the records land in the order sent, so a key's index is its offset.
    return KafkaProducer(**_client_options(bootstrap), acks="all", max_in_flight_requests_per_connection=1, linger_ms=5)


def send_indexed(producer, topic, indexes, partitions=(0, 1)):
    """Records keyed `<topic>-p<partition>-<index>` (resume_and_count's key rule), `index` being the source offset."""
    for index in indexes:
        for partition in partitions:
            producer.send(topic, key=f"{topic}-p{partition}-{index}".encode(), value=b"v%d" % index, partition=partition)
    producer.flush(30)


def produce_indexed(bootstrap, topic, indexes, partitions=(0, 1)):
    producer = indexed_producer(bootstrap)
    try:
        send_indexed(producer, topic, indexes, partitions)
    finally:
        producer.close()


def mirror_pass(source_bootstrap, target_bootstrap, source_alias, target_alias, topic, groups, offset_lag_max=100, duplicate_first=0,
                start_offset=0):
    """Copy `topic`, write offset-syncs and checkpoints for `groups`; returns {partition: [(upstream, downstream), ...]} syncs.

    `start_offset` leaves out the records before it, as when MirrorMaker started after the topic had data and began at the
    latest offset (consumer auto.offset.reset=latest) or retention had deleted them: no sync covers those offsets.
    """
    mm2 = MirrorRecords(source_alias, target_alias)
    remote = mm2.remote_topic(topic)
    source_records = {p: [r for r in records if r.offset >= start_offset] for p, records in read_all(source_bootstrap, topic).items()}
    ensure_topic(target_bootstrap, remote, len(source_records))
    ensure_topic(target_bootstrap, mm2.checkpoints_topic, 1)
    ensure_topic(source_bootstrap, mm2.offset_syncs_topic, 1)
    target_producer = KafkaProducer(**_client_options(target_bootstrap), acks="all", linger_ms=5)
    source_producer = KafkaProducer(**_client_options(source_bootstrap), acks="all")
    syncs = {}
    try:
        for partition, records in source_records.items():
            downstream = 0
            target_producer_count = 0
            plan = list(records[:duplicate_first]) + list(records)
            partition_syncs = []
            last_sync = None
            for index, record in enumerate(plan):
                # Produced one by one and flushed so that downstream offsets are known exactly.
                meta = target_producer.send(remote, key=record.key, value=record.value, headers=record.headers,
                                            partition=partition, timestamp_ms=record.timestamp).get(timeout=15)
                downstream = meta.offset
                target_producer_count += 1
                if index < duplicate_first:
                    continue
                if last_sync is None or record.offset - last_sync[0] >= offset_lag_max or downstream - last_sync[1] >= offset_lag_max:
                    last_sync = (record.offset, downstream)
                    partition_syncs.append(last_sync)
                    sync = mm2.offset_sync(topic, partition, record.offset, downstream)
                    source_producer.send(sync.topic, key=sync.key, value=sync.value, partition=0)
            syncs[partition] = partition_syncs
        source_producer.flush(15)
        write_checkpoints(source_bootstrap, target_bootstrap, source_alias, topic, groups, syncs)
    finally:
        target_producer.close()
        source_producer.close()
    return syncs


def translate_while_passing(partition_syncs, upstream_offset):
    """The downstream offset MirrorCheckpointTask writes for `upstream_offset` right after the copy passed it (its
    OffsetSyncStore then holds the syncs up to there), or None: the stand-in's store, fed those syncs."""
    store = OffsetSyncStore(Behaviour(release.DEFAULT_RELEASE))
    store.finish_initial_read()
    for upstream, downstream in partition_syncs:
        if upstream <= upstream_offset:
            store.add("topic", 0, upstream, downstream)
    return store.translate("topic", 0, upstream_offset)


def write_checkpoints(source_bootstrap, target_bootstrap, source_alias, topic, groups, syncs):
    """MirrorCheckpointTask: for each group's committed offset on the source, a checkpoint if a sync translates it.

    `syncs` is {partition: [(upstream, downstream), ...]} as mirror_pass returns. Only the source alias names the
    checkpoints topic; `topic` is a plain source topic here, so no target alias is needed to name its remote."""
    mm2 = MirrorRecords(source_alias, None)
    admin = KafkaAdminClient(**_client_options(source_bootstrap))
    producer = KafkaProducer(**_client_options(target_bootstrap), acks="all")
    written = []
    try:
        for group in groups:
            offsets = admin.list_group_offsets({group: None}).get(group, {})
            for tp, meta in sorted(offsets.items()):
                if tp.topic != topic or meta.offset < 0:
                    continue
                downstream = translate_while_passing(syncs.get(tp.partition, []), meta.offset)
                if downstream is None:
                    continue
                checkpoint = mm2.checkpoint(group, topic, tp.partition, meta.offset, downstream, "")
                record = mm2.checkpoint_record(checkpoint)
                producer.send(record.topic, key=record.key, value=record.value, partition=0)
                written.append(checkpoint)
        producer.flush(15)
    finally:
        producer.close()
        admin.close()
    return written


def resume_and_count(target_bootstrap, remote_topic, group, committed_at, per_partition):
    """Consume `remote_topic` in `group` on the target from its committed position; count records re-read and lost.

    Record keys end in -p<partition>-<source offset>, so every consumed record maps to its source offset.
    auto_offset_reset=earliest: without a committed offset the group would re-read everything, which the counts show.
    """
    consumer = KafkaConsumer(remote_topic, bootstrap_servers=target_bootstrap, group_id=group, enable_auto_commit=False,
                             auto_offset_reset="earliest", api_version=NOIDA_API, receive_message_max_bytes=RECEIVE_MAX)
    seen = {p: [] for p in committed_at}
    idle_until = time.monotonic() + 8
    while time.monotonic() < idle_until:
        for _tp, batch in consumer.poll(timeout_ms=300).items():
            for record in batch:
                _topic, part, index = record.key.decode().rsplit("-", 2)
                seen[int(part[1:])].append(int(index))
            idle_until = time.monotonic() + 3
    consumer.close()
    figures = {}
    for partition, start in committed_at.items():
        indexes = seen[partition]
        figures[partition] = dict(
            re_read=sum(1 for index in indexes if index < start),
            lost=sum(1 for index in range(start, per_partition) if index not in indexes),
            consumed=len(indexes),
        )
    return figures
