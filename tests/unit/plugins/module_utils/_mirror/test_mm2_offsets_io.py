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


class Record:
    def __init__(self, offset, key, value):
        self.offset, self.key, self.value, self.headers = offset, key, value, []


class LogConsumer:
    """A consumer over {TopicPartition: [Record]} (offsets from 0, no gaps) that counts the records it hands out."""

    def __init__(self, logs):
        self.logs, self.positions, self.handed = logs, {}, 0

    def assign(self, tps):
        self.positions = {tp: 0 for tp in tps}

    def beginning_offsets(self, tps):
        return {tp: 0 for tp in tps}

    def end_offsets(self, tps):
        return {tp: len(self.logs[tp]) for tp in tps}

    def seek(self, tp, offset):
        self.positions[tp] = offset

    def position(self, tp):
        return self.positions[tp]

    def poll(self, timeout_ms=0):
        batches = {}
        for tp, position in self.positions.items():
            batch = self.logs[tp][position:position + 500]
            if batch:
                batches[tp] = batch
                self.positions[tp] = position + len(batch)
                self.handed += len(batch)
        return batches

    def unsubscribe(self):
        self.positions = {}


class Logs:
    def __init__(self, logs):
        self.consumers = [LogConsumer(logs)]

    def consumer(self, **_options):
        return self.consumers[0]


def burst_row(source_offset, target_end):
    """A plan row whose only offset sync is (99, 99): MirrorMaker's translation (3.4.1+) is target 100."""
    row = dict(group="app", topic="primary.orders", source_topic="orders", partition=0, source_offset=source_offset, checkpoint=None,
               syncs=[(99, 99)], target_committed=None, target_end=target_end, active=False)
    return mm2_offsets.plan_offsets([row])[0]


def test_the_preview_window_grows_to_the_group_next_record_and_no_further_than_its_bound():
    """After a burst MirrorMaker's translation (target 100) is 3,000 records before the group's next one (source and target
    3,100): a window of 200 settles nothing, so it grows fourfold (800, 3,200) until the records prove the exact position; with
    a bound of 800 it stops there, commits MirrorMaker's position and says why."""
    records = [Record(i, b"k%d" % i, b"v%d" % i) for i in range(4000)]
    source, target = TopicPartition("orders", 0), TopicPartition("primary.orders", 0)
    grown = mm2_offsets.preview_rows(Logs({target: records}), Logs({source: records}), [burst_row(3100, 4000)], 200, None, 5,
                                     allow_rewind=False, window_max=51200)[0]
    assert grown["preview"]["window"] == 3200 and grown["preview"]["status"] == "re_read"
    assert (grown["exact_offset"], grown["commit_offset"], grown["re_read"], grown["preview"]["re_read"]) == (3100, 3100, 0, 3000)
    assert grown["action"] == "commit" and grown["reason"].startswith("commit 3100 (exact; MirrorMaker's translation: 100)")

    bounded = mm2_offsets.preview_rows(Logs({target: records}), Logs({source: records}), [burst_row(3100, 4000)], 200, None, 5,
                                       allow_rewind=False, window_max=800)[0]
    assert bounded["preview"]["window"] == 800 and bounded["preview"]["status"] == "unverified"
    assert (bounded["exact_offset"], bounded["commit_offset"]) == (None, 100) and bounded["action"] == "commit"
    assert "window of 800 records (verify_window_max): MirrorMaker's position is committed" in bounded["preview"]["detail"]

    translated = mm2_offsets.preview_rows(Logs({target: records}), Logs({source: records}), [burst_row(3100, 4000)], 200, None, 5,
                                          allow_rewind=False, window_max=51200, exact=False)[0]
    assert (translated["exact_offset"], translated["commit_offset"], translated["re_read"]) == (None, 100, 3000)
    assert translated["preview"]["exact_offset"] == 3100  # the preview shows it, position=translated does not commit it
