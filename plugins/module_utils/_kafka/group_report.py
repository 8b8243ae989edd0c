# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only consumer group report for kafka_consumer_group_info: state, members, committed offsets and lag per partition.

Kafka version notes: ListGroups states filters (2.6+) are not used, groups are filtered here; committed offsets use
OffsetFetch, one request per group before Kafka 3.0 (v8 batches groups), which kafka-python chooses by itself.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaError
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.names import NameFilter
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_report import partition_offsets


def _members(description):
    members = []
    for member in description.get("members") or []:
        assignment = member.get("member_assignment")
        assigned = []
        if isinstance(assignment, dict):
            assigned = [
                dict(topic=item["topic"], partition=partition)
                for item in sorted(assignment.get("assigned_partitions", []), key=lambda item: item["topic"])
                for partition in sorted(item["partitions"])
            ]
        members.append(
            dict(
                member_id=member.get("member_id"),
                group_instance_id=member.get("group_instance_id"),
                client_id=member.get("client_id"),
                client_host=member.get("client_host"),
                assignment=assigned,
            )
        )
    return members


def group_report(admin, include=None, exclude=None, topics=None, lag=True):
    """({group_id: details}, warnings) for groups whose whole ids match `include` (all when empty) and not `exclude`.

    topics: regexes; only committed offsets of matching topics are reported (all when empty).
    """
    listed = {group["group_id"]: group for group in admin.list_groups()}
    selected = NameFilter(include, exclude).select(listed)
    topic_filter = NameFilter(topics)
    warnings = []
    descriptions = {}
    try:
        descriptions = admin.describe_groups(selected) if selected else {}
    except (KafkaError, ValueError) as exc:
        # ValueError: kafka-python 3.0.12 cannot decode an authorized_operations bitfield with bits unknown to it.
        warnings.append(f"members could not be described (DescribeGroups failed: {exc.__class__.__name__}: {exc}); "
                        f"states come from ListGroups and members are reported as null")
    committed = {}
    for group_id in selected:
        try:
            committed[group_id] = admin.list_group_offsets({group_id: None})[group_id]
        except KafkaError as exc:
            warnings.append(f"committed offsets of group {group_id!r} could not be read: {exc.__class__.__name__}: {exc}")
            committed[group_id] = {}
    end = {}
    if lag:
        wanted = {tp for offsets in committed.values() for tp in offsets if topic_filter(tp.topic)}
        try:
            end = partition_offsets(admin, sorted(wanted))[1]
        except KafkaError as exc:
            warnings.append(f"end offsets could not be read, lag is reported as null: {exc.__class__.__name__}: {exc}")
    report = {}
    for group_id in selected:
        description = descriptions.get(group_id, {})
        offsets = []
        for tp, found in sorted(committed[group_id].items()):
            if not topic_filter(tp.topic):
                continue
            end_offset = end.get(tp)
            has_commit = found.offset is not None and found.offset >= 0
            offsets.append(
                dict(
                    topic=tp.topic,
                    partition=tp.partition,
                    committed_offset=found.offset if has_commit else None,
                    metadata=found.metadata or "",
                    end_offset=end_offset,
                    lag=max(end_offset - found.offset, 0) if has_commit and end_offset is not None else None,
                )
            )
        lags = [offset["lag"] for offset in offsets if offset["lag"] is not None]
        report[group_id] = dict(
            state=description.get("group_state") or listed[group_id].get("group_state"),
            protocol_type=description.get("protocol_type", listed[group_id].get("protocol_type")),
            protocol=description.get("protocol_data"),
            members=_members(description) if description else None,
            offsets=offsets,
            total_lag=sum(lags) if lag and offsets else None,
        )
    return report, warnings
