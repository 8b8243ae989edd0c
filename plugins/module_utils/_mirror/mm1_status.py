# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Health of one MirrorMaker 1 flow (kafka.tools.MirrorMaker, Kafka up to 3.9), read from the clusters (module
kafka_mirror_status with mirrormaker1_group).

MirrorMaker 1 copies each source topic into the topic of the same name on the target, where its producer partitions the
records again (by key), and writes nothing of its own but its consumer group's offsets on the source. It commits them
only after its producer has flushed (MirrorMakerThread.maybeFlushAndCommitOffsets, every --offset.commit.interval.ms, and
once more at a clean stop), so a committed offset says that every record before it is on the target: a partition's lag
is its end offset minus the group's committed offset (minus its beginning when the group committed nothing there, as
auto.offset.reset=earliest starts at the beginning). It can overestimate by what MirrorMaker copied since its last
commit, never hide a missing record; target offsets say nothing, since partitions are not kept.

There are no heartbeats, offset syncs or checkpoints. What shows that MirrorMaker 1 runs is its group having members: a
MirrorMaker that stopped or died leaves the group empty and its lag frozen.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_admin import existing_partitions
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_report import partition_offsets
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.flow_result import flow_result

try:
    from kafka import TopicPartition
except ImportError:
    TopicPartition = None  # _kafka.client.ensure_kafka_python() reports the missing library

# MirrorMaker 1 leaves no trace of these: only the lag can be waited for.
MM1_CONDITIONS = ("lag",)


class Mm1FlowStatus:
    """What MirrorMaker 1's group shows of one flow; read() can be called repeatedly."""

    def __init__(self, source, target, flow, group):
        self.source, self.target, self.group = source, target, group
        self.filter = flow["filter"]
        self.source_alias, self.target_alias = flow["names"].source_alias, flow["names"].target_alias

    def _group(self):
        """(state, member count, {TopicPartition: committed offset}) of the group on the source."""
        admin = self.source.admin()
        description = admin.describe_groups([self.group]).get(self.group) or {}
        committed = admin.list_group_offsets({self.group: None}).get(self.group) or {}
        offsets = {tp: found.offset for tp, found in committed.items() if found.offset is not None and found.offset >= 0}
        return description.get("group_state"), len(description.get("members") or []), offsets

    def read(self, now_ms=None):
        del now_ms  # nothing here ages
        existing_source, existing_target = set(self.source.admin().list_topics()), set(self.target.admin().list_topics())
        topics = self.filter.data_topics(existing_source)
        source_tps = sorted(TopicPartition(topic, partition) for topic, partition in existing_partitions(self.source.admin(), topics))
        # The group before the end offsets: a commit read first is never past the end it is compared with.
        state, members, committed = self._group()
        source_begin, source_end = partition_offsets(self.source.admin(), source_tps)
        partitions = []
        for tp in source_tps:
            position = max(committed.get(tp, source_begin[tp]), source_begin[tp])
            partitions.append({
                "topic": tp.topic,
                "remote_topic": tp.topic,
                "partition": tp.partition,
                "source_end_offset": source_end[tp],
                "committed_offset": committed.get(tp),
                "remote_topic_exists": tp.topic in existing_target,
                "target_end_offset": None,
                "last_offset_sync": None,
                "lag": max(0, source_end[tp] - position),
                "has_records": source_end[tp] > source_begin[tp],
            })
        problems = []
        for topic in topics:
            if topic not in existing_target:
                problems.append("remote topic %s (of %s) does not exist on %s: MirrorMaker 1's producer waits for it without end "
                                "(max.block.ms is unbounded in MirrorMaker 1), holding up every other topic; create it (the "
                                "kafka_topics stage creates it with the source's partitions)" % (topic, topic, self.target_alias))
        return flow_result(self.source_alias, self.target_alias, partitions, topics,
                           heartbeats={"emitted_age_s": None, "replicated_age_s": None}, checkpoints={}, offset_syncs_topic=None,
                           group={"id": self.group, "state": state, "members": members}, problems=problems, stale_state=[])
