# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only topic report for kafka_topic_info: partitions, leaders, replicas, ISR, configs, begin/end offsets."""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaError
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.names import NameFilter
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_admin import read_topic_configs, read_topics

try:
    from kafka import TopicPartition
    from kafka.protocol.consumer import IsolationLevel, OffsetSpec
except ImportError:
    # _kafka.client.ensure_kafka_python() reports the missing library before any of this is used.
    TopicPartition = OffsetSpec = IsolationLevel = None

CONFIG_MODES = {"none": None, "non_default": "modified", "all": "all"}


def partition_offsets(admin, partitions):
    """({TopicPartition: begin offset}, {TopicPartition: end offset}) from ListOffsets (earliest, latest).

    The admin client's ListOffsets rather than a KafkaConsumer's beginning_offsets/end_offsets: kafka-python 3.0.12's
    consumer raises KeyError when the partitions span a topic its metadata does not hold yet (a topic created since its
    last call), where the admin client refreshes its metadata and asks again."""
    if not partitions:
        return {}, {}
    begin = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in partitions})
    end = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in partitions})
    return {tp: found.offset for tp, found in begin.items()}, {tp: found.offset for tp, found in end.items()}


def last_stable_offsets(admin, partitions):
    """{TopicPartition: last stable offset}: the end a read_committed consumer reads up to (no open transaction beyond)."""
    if not partitions:
        return {}
    found = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in partitions}, isolation_level=IsolationLevel.READ_COMMITTED)
    return {tp: value.offset for tp, value in found.items()}


def topic_report(admin, include=None, exclude=None, include_internal=False, configs="non_default", offsets=True):
    """({topic: details}, warnings) for the topics whose whole names match `include` (all when empty) and not `exclude`."""
    topics = read_topics(admin)
    selected = NameFilter(include, exclude).select(name for name, topic in topics.items() if include_internal or not topic["internal"])
    warnings = []
    config_values = {}
    if CONFIG_MODES[configs] and selected:
        described = read_topic_configs(admin, selected, config_filter=CONFIG_MODES[configs])
        config_values = {name: {key: entry["value"] for key, entry in keys.items()} for name, keys in described.items()}
    begin, end = {}, {}
    if offsets:
        try:
            begin, end = partition_offsets(admin, [TopicPartition(name, p["partition"]) for name in selected for p in topics[name]["partition_details"]])
        except KafkaError as exc:
            warnings.append(f"begin/end offsets could not be read (ListOffsets failed: {exc.__class__.__name__}: {exc}); they are reported as null")
    report = {}
    for name in selected:
        topic = topics[name]
        partitions = []
        for detail in topic["partition_details"]:
            tp = TopicPartition(name, detail["partition"])
            partitions.append(dict(detail, begin_offset=begin.get(tp), end_offset=end.get(tp)))
        report[name] = dict(
            partition_count=topic["partitions"],
            replication_factor=topic["replication_factor"],
            internal=topic["internal"],
            partitions=partitions,
            configs=config_values.get(name, {}) if CONFIG_MODES[configs] else None,
            under_replicated_partitions=sum(1 for detail in topic["partition_details"] if len(detail["isr"]) < len(detail["replicas"])),
        )
    return report, warnings
