# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in's MirrorCheckpointConnector / MirrorCheckpointTask against recorded cluster state (a fake admin):
which groups get checkpoints, when, and what sync.group.offsets commits on the target, version by version."""
from pathlib import Path

from kafka import TopicPartition
from kafka.errors import NoError
from kafka.structs import OffsetAndMetadata

from sandbox.mm2.checkpoints import CheckpointTask
from sandbox.mm2.records import MirrorRecords
from sandbox.mm2.settings import load

PROPERTIES = """
clusters = primary, secondary
primary.bootstrap.servers = 127.0.1.10:9092
secondary.bootstrap.servers = 127.0.2.10:9092
primary->secondary.enabled = true
primary->secondary.topics = orders
primary->secondary.sync.group.offsets.enabled = true
"""


class FakeAdmin:
    def __init__(self, groups=None, offsets=None):
        self.groups = groups or []  # ListGroups entries
        self.offsets = offsets or {}  # group -> {TopicPartition: OffsetAndMetadata}
        self.altered = []

    def list_groups(self):
        return list(self.groups)

    def list_group_offsets(self, specs):
        return {group: dict(self.offsets.get(group, {})) for group in specs}

    def alter_group_offsets(self, group, offsets):
        self.altered.append((group, {tp: meta.offset for tp, meta in offsets.items()}))
        self.offsets.setdefault(group, {}).update(offsets)
        return {tp: NoError for tp in offsets}


class FakeRecordsTopic:
    def __init__(self, records):
        self.records = records

    def read_new(self):
        records, self.records = self.records, []
        return records


class Sent:
    def __init__(self, key, value):
        self.key, self.value = key, value


class FakeCluster:
    def __init__(self, admin, syncs=()):
        self._admin, self.sent = admin, []
        self.syncs = [Sent(record.key, record.value) for record in syncs]

    def admin(self):
        return self._admin

    def tail(self, _topic):
        return FakeRecordsTopic(self.syncs)

    def read_all(self, _topic):
        return []

    def ensure_topic(self, *_args):
        return False

    def producer(self):
        return self

    def send(self, topic, key, value, partition):
        self.sent.append(MirrorRecords.read_checkpoint(key, value))

    def flush(self):
        pass


def task(tmp_path: Path, release, source_admin, target_admin=None, syncs=((0, 0), (101, 101))):
    path = tmp_path / "mm2.properties"
    path.write_text(PROPERTIES)
    flow = next(f for f in load(str(path), None, release).flows if f.enabled)
    records = [flow.records.offset_sync("orders", 0, u, d) for u, d in syncs]
    source, target = FakeCluster(source_admin, records), FakeCluster(target_admin or FakeAdmin())
    checkpoints = CheckpointTask(flow, source, target, source)
    checkpoints.start()
    return checkpoints, target


def committed(offset):
    return {TopicPartition("orders", 0): OffsetAndMetadata(offset, "", -1)}


def test_simple_groups_get_no_checkpoints_before_2_8(tmp_path):
    """MirrorCheckpointConnector.findConsumerGroups (2.4.1 - 2.7.x): .filter(x -> !x.isSimpleConsumerGroup())."""
    admin = FakeAdmin([{"group_id": "assigned", "protocol_type": ""}, {"group_id": "subscribed", "protocol_type": "consumer"},
                       {"group_id": "worker", "protocol_type": "connect"}],
                      {"assigned": committed(150), "subscribed": committed(150), "worker": committed(150)})
    assert task(tmp_path, (2, 7, 0), admin)[0].groups == ["subscribed"]
    assert task(tmp_path, (2, 8, 0), admin)[0].groups == ["assigned", "subscribed"]  # ListConsumerGroups: consumer or ""


def test_groups_without_a_replicated_topic_are_left_out_from_3_4_1(tmp_path):
    """findConsumerGroups (3.4.1+): only groups with an offset on a topic the topic filter accepts."""
    admin = FakeAdmin([{"group_id": "other", "protocol_type": "consumer"}], {"other": {TopicPartition("audit", 0): OffsetAndMetadata(5, "", -1)}})
    assert task(tmp_path, (3, 4, 0), admin)[0].groups == ["other"]
    assert task(tmp_path, (3, 4, 1), admin)[0].groups == []


def test_a_group_that_appears_later_waits_for_the_next_group_refresh(tmp_path):
    """Groups are found at start and by refreshConsumerGroups every refresh.groups.interval.seconds, not at each checkpoint."""
    admin = FakeAdmin()
    checkpoints, target = task(tmp_path, (3, 9, 0), admin)
    admin.groups.append({"group_id": "late", "protocol_type": "consumer"})
    admin.offsets["late"] = committed(150)
    checkpoints.emit()
    assert target.sent == []
    checkpoints.refresh_groups()
    checkpoints.emit()
    assert [(c.group, c.topic, c.upstream_offset, c.downstream_offset) for c in target.sent] == [("late", "primary.orders", 150, 102)]


def test_checkpoints_do_not_move_back_from_3_4_1_unless_the_group_rewinds(tmp_path):
    """checkpointIsMoreRecent (3.4.1+): a repeated checkpoint is not written again, a rewound group's is."""
    admin = FakeAdmin([{"group_id": "app", "protocol_type": "consumer"}], {"app": committed(150)})
    checkpoints, target = task(tmp_path, (3, 9, 0), admin)
    checkpoints.emit()
    checkpoints.emit()
    admin.offsets["app"] = committed(50)
    checkpoints.emit()
    assert [(c.upstream_offset, c.downstream_offset) for c in target.sent] == [(150, 102), (50, 1)]
    admin.offsets["app"] = committed(150)
    repeated, earlier = task(tmp_path, (3, 4, 0), admin)
    repeated.emit()
    repeated.emit()
    # 3.4.0 writes the same checkpoint at every interval, translated from the latest sync (101, 101) by d + (g - u).
    assert [(c.upstream_offset, c.downstream_offset) for c in earlier.sent] == [(150, 150), (150, 150)]


def test_downstream_zero_needs_2_7(tmp_path):
    """checkpointsForGroup: `downstreamOffset() > 0` before 2.7.0."""
    admin = FakeAdmin([{"group_id": "app", "protocol_type": "consumer"}], {"app": committed(0)})
    for release, written in (((2, 4, 1), []), ((2, 7, 0), [0])):
        checkpoints, target = task(tmp_path, release, admin, syncs=((0, 0),))
        checkpoints.emit()
        assert [c.downstream_offset for c in target.sent] == written, release


def test_sync_group_offsets_only_moves_new_or_empty_groups_forward(tmp_path):
    """MirrorCheckpointTask.syncGroupOffset (2.7+): a group absent on the target gets every checkpointed offset; an Empty
    one only where its offset is behind; a group with members is left alone."""
    remote = TopicPartition("primary.orders", 0)
    source = FakeAdmin([{"group_id": g, "protocol_type": "consumer"} for g in ("new", "behind", "ahead", "busy")],
                       {g: committed(150) for g in ("new", "behind", "ahead", "busy")})
    target = FakeAdmin([{"group_id": "behind", "group_state": "Empty"}, {"group_id": "ahead", "group_state": "Empty"},
                        {"group_id": "busy", "group_state": "Stable"}],
                       {"behind": {remote: OffsetAndMetadata(40, "", -1)}, "ahead": {remote: OffsetAndMetadata(120, "", -1)}})
    checkpoints, _target_admin = task(tmp_path, (3, 9, 0), source, target)
    checkpoints.emit()
    checkpoints.sync_group_offsets()
    assert sorted(target.altered) == [("behind", {remote: 102}), ("new", {remote: 102})]
