# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Group reads of kafka_mirror_offsets (plugins/module_utils/_mirror/offsets.py) against admin clients that answer oddly."""
from __future__ import annotations

from kafka import TopicPartition
from kafka.errors import UnknownTopicOrPartitionError
from kafka.structs import OffsetAndMetadata, OffsetAndTimestamp

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror import offsets as mm2_offsets


class Admin:
    """The two admin calls group_activity makes, answering as a broker with members in `stable` would."""

    def __init__(self, describe_error=None):
        self.describe_error = describe_error

    def describe_groups(self, groups):
        if self.describe_error:
            raise self.describe_error
        return {"stable": {"group_state": "Stable", "members": [{"member_id": "m"}]}, "empty": {"group_state": "Empty", "members": []}}

    @staticmethod
    def list_groups():
        return [{"group_id": "stable", "protocol_type": "consumer", "group_state": "Stable"},
                {"group_id": "empty", "protocol_type": "consumer", "group_state": "Empty"},
                {"group_id": "simple", "protocol_type": ""}]


def test_group_activity_from_describe_groups():
    warnings = []
    activity = mm2_offsets.group_activity(Admin(), ["stable", "empty"], warnings)
    assert activity == {"stable": (True, "Stable", 1), "empty": (False, "Empty", 0)} and warnings == []


def test_an_undecodable_describe_groups_reply_falls_back_to_list_groups():
    """kafka-python raises ValueError for a DescribeGroups reply it cannot decode (e.g. authorized_operations bits it does
    not know); the states then come from ListGroups (v4+), member counts are unknown, and the run goes on with a warning."""
    warnings = []
    activity = mm2_offsets.group_activity(Admin(ValueError("8 is not a valid AclOperation")), ["stable", "empty", "simple"], warnings)
    assert activity == {"stable": (True, "Stable", None), "empty": (False, "Empty", None), "simple": (False, "unknown", None)}
    assert len(warnings) == 1 and "DescribeGroups failed" in warnings[0] and "ValueError" in warnings[0]


def test_listed_groups_marks_simple_groups():
    listed = mm2_offsets.listed_groups(Admin())
    assert {name for name, entry in listed.items() if not entry.get("protocol_type")} == {"simple"}


class GrownSourceAdmin:
    """A source whose topic `orders` has 3 partitions and group `app` committed on all, and a target whose remote topic has
    the 2 partitions it had before the source grew; ListOffsets refuses unknown partitions as kafka-python's admin does."""

    def __init__(self, partitions, committed):
        self.partitions, self.committed = partitions, committed

    def list_topics(self):
        return list(self.partitions)

    def describe_topics(self, names):
        return [{"name": name, "error_code": 0, "partitions": [{"partition_index": p} for p in range(self.partitions[name])]}
                for name in names]

    def list_partition_offsets(self, specs):
        unknown = [tp for tp in specs if tp.partition >= self.partitions.get(tp.topic, 0)]
        if unknown:
            raise UnknownTopicOrPartitionError("The following partitions are not known: %s" % unknown)
        return {tp: OffsetAndTimestamp(10, -1, None) for tp in specs}

    def list_groups(self):
        return [{"group_id": group, "protocol_type": "consumer", "group_state": "Empty"} for group in self.committed]

    def list_group_offsets(self, request):
        return {group: {TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1)
                        for (topic, partition), offset in self.committed.get(group, {}).items()} for group in request}

    def describe_groups(self, groups):
        return {group: {"group_state": "Empty", "members": []} for group in groups}


class Cluster:
    def __init__(self, admin):
        self._admin = admin

    def admin(self):
        return self._admin


def test_rows_of_partitions_the_remote_topic_lacks_have_no_target_end(monkeypatch):
    monkeypatch.setattr(mm2_offsets, "read_internal_topic", lambda *_args: (True, [], []))
    source = Cluster(GrownSourceAdmin({"orders": 3}, {"app": {("orders", 0): 5, ("orders", 1): 5, ("orders", 2): 5}}))
    target = Cluster(GrownSourceAdmin({"primary.orders": 2}, {}))
    params = dict(read_timeout=5, groups=[".*"], groups_exclude=None, source_alias="primary", target_alias="secondary",
                  replication_policy="default", replication_policy_separator=".", mirrormaker_version="3.9.0", offset_syncs=False)
    rows, _facts = mm2_offsets.collect(target, source, params)
    assert [(row["topic"], row["partition"], row["target_end"]) for row in rows] == [
        ("primary.orders", 0, 10), ("primary.orders", 1, 10), ("primary.orders", 2, None)]
