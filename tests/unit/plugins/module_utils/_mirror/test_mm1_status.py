# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kafka_mirror_status for a MirrorMaker 1 flow (mirrormaker1_group): lag from the group's committed offsets, the group's
members as its sign of life, and the options MirrorMaker 1 has no use for refused before any connection."""
import pytest
from kafka.structs import OffsetAndMetadata

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.mm1_status import Mm1FlowStatus
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import MirrorStatusError, flow_options, run_status, unmet_conditions
from tests.unit.plugins.module_utils._mirror.test_mm2_status import FakeAdmin, FakeCluster, FakeRecord, NoConnection, params

GROUP = "mirrormaker1"


class GroupAdmin(FakeAdmin):
    """FakeAdmin with one consumer group: DescribeGroups and OffsetFetch as kafka-python 3's admin client returns them."""

    def describe_groups(self, ids):
        return {gid: {"group_state": self.cluster.state, "members": [{"member_id": m} for m in self.cluster.members]} for gid in ids}

    def list_group_offsets(self, groups):
        return {gid: {tp: OffsetAndMetadata(offset, "", -1) for tp, offset in self.cluster.committed.items()} for gid in groups}


class SourceWithGroup(FakeCluster):
    def __init__(self, topics, committed, members=("mm1-0", "mm1-1"), state="Stable"):
        super().__init__(topics)
        self.committed, self.members, self.state = committed, list(members), state

    def admin(self):
        return GroupAdmin(self)


def mm1_params(**overrides):
    return params(replication_policy="identity", mirrormaker1_group=GROUP, topics=["m1-.*"], **overrides)


def records(count):
    return [FakeRecord(i, b"k%d" % i, b"v") for i in range(count)]


def tp(topic, partition):
    from kafka import TopicPartition
    return TopicPartition(topic, partition)


def test_lag_is_the_end_minus_what_the_group_committed():
    source = SourceWithGroup({"m1-orders": [records(10), records(4)], "other": [records(3)]}, {tp("m1-orders", 0): 7})
    # MirrorMaker 1 partitions again on the target: one partition there, whatever its offsets, says nothing of the lag.
    target = FakeCluster({"m1-orders": [records(1)]})
    status = Mm1FlowStatus(source, target, flow_options(mm1_params()), GROUP).read()
    assert [(p["topic"], p["remote_topic"], p["partition"], p["committed_offset"], p["lag"]) for p in status["partitions"]] == [
        ("m1-orders", "m1-orders", 0, 7, 3), ("m1-orders", "m1-orders", 1, None, 4)]
    assert status["topics"] == ["m1-orders"] and status["lag_total"] == 7 and status["lag_max"] == 4
    assert status["group"] == {"id": GROUP, "state": "Stable", "members": 2}
    assert status["problems"] == [] and all(p["remote_topic_exists"] for p in status["partitions"])
    assert unmet_conditions(status, ["lag"], 4, 60) == []
    assert unmet_conditions(status, ["lag"], 3, 60) == ["1 partition(s) lag more than 3 records (worst m1-orders-1: 4)"]


def test_a_group_without_members_is_not_healthy_even_without_lag():
    source = SourceWithGroup({"m1-orders": [records(5)]}, {tp("m1-orders", 0): 5}, members=(), state="Empty")
    status = Mm1FlowStatus(source, FakeCluster({"m1-orders": [[]]}), flow_options(mm1_params()), GROUP).read()
    assert status["lag_total"] == 0
    assert unmet_conditions(status, ["lag"], 0, 60) == [
        "MirrorMaker 1's consumer group mirrormaker1 has no member on the source (state Empty): MirrorMaker 1 is not consuming"]


def test_a_missing_target_topic_says_that_mirrormaker_1_blocks_on_it():
    source = SourceWithGroup({"m1-orders": [records(5)], "m1-new": [records(2)]}, {tp("m1-orders", 0): 5})
    status = Mm1FlowStatus(source, FakeCluster({"m1-orders": [[]]}), flow_options(mm1_params()), GROUP).read()
    assert [p["remote_topic_exists"] for p in status["partitions"]] == [False, True]
    (problem,) = status["problems"]
    assert problem.startswith("remote topic m1-new (of m1-new) does not exist on secondary: MirrorMaker 1's producer waits for it")
    assert any("does not exist" in unmet for unmet in unmet_conditions(status, ["lag"], 10, 60))


def test_retention_past_the_committed_offset_counts_from_the_beginning():
    source = SourceWithGroup({"m1-orders": [records(10)]}, {tp("m1-orders", 0): 2})

    class Trimmed(GroupAdmin):
        def list_partition_offsets(self, specs, isolation_level=None):
            found = super().list_partition_offsets(specs, isolation_level)
            return {key: value._replace(offset=max(value.offset, 6)) for key, value in found.items()}

    source.admin = lambda: Trimmed(source)
    status = Mm1FlowStatus(source, FakeCluster({"m1-orders": [[]]}), flow_options(mm1_params()), GROUP).read()
    assert status["partitions"][0]["lag"] == 4  # records 6..9; 2..5 expired before MirrorMaker 1 read them


@pytest.mark.parametrize("release", ["2.4.1", "3.2.0", "3.9.2"])
def test_every_release_of_mirrormaker_1_keeps_the_names(release):
    """MirrorMaker 1 of the runbooks' 2.4.1 too: its flow is not refused for the identity policy that MirrorMaker 2 gets in 3.0."""
    source = SourceWithGroup({"m1-orders": [records(10)]}, {tp("m1-orders", 0): 7})
    status = Mm1FlowStatus(source, FakeCluster({"m1-orders": [records(7)]}), flow_options(mm1_params(mirrormaker_version=release)), GROUP).read()
    assert [(p["topic"], p["remote_topic"], p["lag"]) for p in status["partitions"]] == [("m1-orders", "m1-orders", 3)]


@pytest.mark.parametrize("overrides,message", [
    ({"replication_policy": "default"}, "mirrormaker1_group is MirrorMaker 1's flow, which keeps topic names: set replication_policy to identity"),
    ({"mirrormaker1_group": " "}, "mirrormaker1_group must name MirrorMaker 1's consumer group"),
    ({"wait": True, "wait_for": ["heartbeats", "lag"]}, "wait_for heartbeats: MirrorMaker 1 writes no heartbeats or offset syncs; wait for lag only"),
])
def test_what_mirrormaker_1_cannot_have_fails_before_connecting(overrides, message):
    with pytest.raises(MirrorStatusError) as info:
        run_status(dict(mm1_params(), **overrides), NoConnection)
    assert message in str(info.value)


def test_a_wait_without_wait_for_waits_for_the_lag_alone():
    source = SourceWithGroup({"m1-orders": [records(3)]}, {tp("m1-orders", 0): 3})
    clusters = {"source": source, "target": FakeCluster({"m1-orders": [[]]})}

    class Connection:
        def __init__(self, options):
            self.cluster = clusters["source" if options.get("bootstrap_servers") == ["127.0.0.1:9092"] else "target"]

        def __enter__(self):
            return self.cluster

        def __exit__(self, *_exc):
            return False

    result = run_status(dict(mm1_params(), wait=True, wait_for=None), Connection)
    assert result["healthy"] and result["unmet"] == [] and result["group"]["members"] == 2
    assert result["heartbeats"] == {"emitted_age_s": None, "replicated_age_s": None} and result["checkpoints"] == {}
