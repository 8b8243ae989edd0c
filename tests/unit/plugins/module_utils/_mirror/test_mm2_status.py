# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lag arithmetic, health conditions and the wait loop of kafka_mirror_status (no Kafka needed)."""
import pytest
from kafka.errors import KafkaTimeoutError, TopicAuthorizationFailedError, UnknownTopicOrPartitionError
from kafka.protocol.consumer import OffsetSpec
from kafka.structs import OffsetAndTimestamp

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import (
    MirrorStatusError,
    flow_options,
    partition_lag,
    run_status,
    unmet_conditions,
    wait_until_healthy,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import FlowNames
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.selection import MirrorFilter
from tests.support.fake_consumer import PositionedConsumer


@pytest.mark.parametrize(
    "source_begin,source_end,target_begin,target_end,sync,lag",
    [
        (0, 0, 0, 0, None, 0),  # empty source partition
        (0, 1000, 0, 0, None, 1000),  # nothing copied, no sync yet
        (0, 1000, 0, 400, None, 600),  # no sync: compare counts
        (0, 1000, 0, 1000, (900, 900), 0),  # identical offsets, caught up
        (0, 1000, 0, 950, (900, 900), 50),
        (500, 1000, 0, 520, (500, 0), 0),  # retention on the source: downstream offsets start at 0
        (0, 1000, 0, 1010, (990, 1000), 0),  # duplicates after a restart put downstream ahead
        (0, 1000, 0, 30, (950, 20), 40),  # downstream shifted by compaction or an older truncation
    ],
)
def test_partition_lag(source_begin, source_end, target_begin, target_end, sync, lag):
    assert partition_lag(source_begin, source_end, target_begin, target_end, sync) == lag


def status(lag=0, sync=True, emitted=1.0, replicated=None, problems=()):
    return {
        "flow": "primary->secondary",
        "partitions": [{"topic": "orders", "partition": 0, "lag": lag, "has_records": True,
                        "last_offset_sync": {"upstream": 0, "downstream": 0} if sync else None}],
        "lag_total": lag,
        "lag_max": lag,
        "heartbeats": {"emitted_age_s": emitted, "replicated_age_s": replicated},
        "problems": list(problems),
    }


def test_healthy_status_has_no_unmet_conditions():
    assert unmet_conditions(status(), ["heartbeats", "offset_syncs", "lag"], 0, 60) == []


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"emitted": None}, "no heartbeat from primary->secondary"),
        ({"emitted": 120.0}, "newest heartbeat is 120.0 s old"),
        ({"sync": False}, "no offset sync yet for 1 partition(s) with records: orders-0"),
        ({"lag": 5}, "lag more than 0 records (worst orders-0: 5)"),
        ({"problems": ["remote topic primary.orders (of orders) does not exist on secondary"]}, "does not exist"),
    ],
)
def test_unmet_conditions_name_the_problem(kwargs, message):
    unmet = unmet_conditions(status(**kwargs), ["heartbeats", "offset_syncs", "lag"], 0, 60)
    assert any(message in item for item in unmet), unmet


def test_wait_for_only_checks_what_is_asked():
    assert unmet_conditions(status(lag=5, emitted=None), ["offset_syncs"], 0, 60) == []


def test_wait_until_healthy_polls_until_lag_drops():
    lags = iter([30, 10, 0])
    now = [0.0]
    result, unmet, progress = wait_until_healthy(lambda: status(lag=next(lags)), ["lag"], 0, 60, timeout_s=60, interval_s=5,
                                                 clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert unmet == [] and result["lag_total"] == 0
    assert [p["lag_total"] for p in progress] == [30, 10, 0]
    assert [p["elapsed_s"] for p in progress] == [0.0, 5.0, 10.0]


def test_wait_until_healthy_gives_up_at_timeout():
    now = [0.0]
    _result, unmet, progress = wait_until_healthy(lambda: status(lag=7), ["lag"], 0, 60, timeout_s=12, interval_s=5,
                                                  clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert unmet and progress[-1]["elapsed_s"] == 12.0


def reads(*answers):
    """read_status() giving each answer in turn: an exception is raised, a status returned."""
    answers = iter(answers)

    def read():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer
    return read


def fake_clock():
    now = [0.0]
    return dict(clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))


LEADER_MOVED = KafkaTimeoutError("Failed to get offsets by timestamps in 30000 ms")


def test_a_read_failing_with_a_retriable_error_is_a_poll_without_an_answer():
    """A leader moving during a rolling restart: that poll records the error and the wait goes on to its healthy read."""
    result, unmet, progress = wait_until_healthy(reads(status(lag=30), LEADER_MOVED, status(lag=0)), ["lag"], 0, 60, timeout_s=60,
                                                 interval_s=5, **fake_clock())
    assert unmet == [] and result["lag_total"] == 0
    assert [p["lag_total"] for p in progress] == [30, None, 0]
    assert progress[1]["read_error"] == "KafkaTimeoutError: Failed to get offsets by timestamps in 30000 ms"


def test_the_last_status_read_stands_when_the_wait_ends_on_a_failed_read():
    _result, unmet, progress = wait_until_healthy(reads(status(lag=7), LEADER_MOVED, LEADER_MOVED, LEADER_MOVED), ["lag"], 0, 60,
                                                  timeout_s=12, interval_s=5, **fake_clock())
    assert unmet == ["1 partition(s) lag more than 0 records (worst orders-0: 7)"] and progress[-1]["elapsed_s"] == 12.0
    assert [p["lag_total"] for p in progress] == [7, None, None, None]


def test_a_wait_where_no_read_answers_fails_with_the_last_error():
    with pytest.raises(KafkaTimeoutError):
        wait_until_healthy(reads(*[LEADER_MOVED] * 4), ["lag"], 0, 60, timeout_s=12, interval_s=5, **fake_clock())


def test_an_error_that_is_not_retriable_ends_the_wait_at_once():
    read = reads(status(lag=30), TopicAuthorizationFailedError("mm2-offset-syncs.secondary.internal"), status(lag=0))
    with pytest.raises(TopicAuthorizationFailedError):
        wait_until_healthy(read, ["lag"], 0, 60, timeout_s=60, interval_s=5, **fake_clock())


def params(**overrides):
    base = {"source": {"bootstrap_servers": ["127.0.0.1:9092"]}, "source_alias": "primary", "target_alias": "secondary",
            "replication_policy": "default", "replication_policy_separator": ".", "offset_syncs_topic_location": "source",
            "topics": [".*"], "topics_exclude": None, "groups": [".*"], "groups_exclude": None, "wait": False,
            "wait_for": ["lag"], "max_lag": 0, "max_heartbeat_age": 60, "timeout": 10, "poll_interval": 1,
            "bootstrap_servers": ["127.0.0.1:9093"]}
    base.update(overrides)
    return base


class NoConnection:
    def __init__(self, _params):
        raise AssertionError("a connection was made although the options are invalid")


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"topics": ["orders("]}, "topics: 'orders(' is not a regular expression"),
        ({"offset_syncs_topic_location": "target", "mirrormaker_version": "2.4.1"}, "needs MirrorMaker 2 of Kafka 3.0 or later"),
        ({"target_alias": "primary"}, "are both 'primary'"),
        ({"max_lag": -1}, "max_lag must be >= 0"),
        ({"timeout": 0}, "timeout must be > 0"),
    ],
)
def test_bad_options_fail_before_connecting(overrides, message):
    with pytest.raises(MirrorStatusError) as info:
        run_status(params(**overrides), NoConnection)
    assert message in str(info.value)


def test_source_is_validated_by_the_modules_nested_spec():
    """Option source has the connection options as nested options= (as kafka_mirror_offsets and kafka_topic), so Ansible
    validates it, fills its defaults and keeps its secrets out of logs (no_log) before the module runs."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import kafka_connection_argument_spec
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import status_argument_spec as argument_spec

    source = argument_spec()["source"]
    assert source["options"] == kafka_connection_argument_spec() and source["required"] is True
    assert {name for name, option in source["options"].items() if option.get("no_log")} == {"sasl_plain_password", "ssl_password"}
    spec = argument_spec()
    bad = ArgumentSpecValidator(spec).validate(params(source={"bootstrap_servers": ["a:1"], "security_protocol": "BOGUS"}))
    assert any("security_protocol" in message and "found in source" in message for message in bad.error_messages)
    good = ArgumentSpecValidator(spec).validate(params(source={"bootstrap_servers": ["a:1"]}))
    assert not good.error_messages
    assert good.validated_parameters["source"]["security_protocol"] == "PLAINTEXT"


def test_flow_options_build_policy_and_filter():
    flow = flow_options(params(replication_policy="identity", topics=["orders.*"], topics_exclude=["orders-tmp"]))
    assert isinstance(flow["names"], FlowNames) and flow["names"].policy.kind == "identity"
    assert isinstance(flow["filter"], MirrorFilter)
    assert flow["filter"].replicates_topic("orders-eu") and not flow["filter"].replicates_topic("orders-tmp")
    assert flow["filter"].replicates_topic("heartbeats")
    default = flow_options(params())["filter"]
    assert default.replicates_topic("tertiary.orders")
    assert not default.replicates_topic("secondary.orders")  # would go back where it came from


# A tiny in-memory cluster behind the KafkaConnection interface FlowStatus uses (admin() and consumer()).
class FakeRecord:
    def __init__(self, offset, key, value, timestamp=0, partition=0):
        self.offset, self.key, self.value, self.timestamp, self.partition = offset, key, value, timestamp, partition


class FakeConsumer(PositionedConsumer):
    def __init__(self, cluster):
        self.cluster, self.positions, self.fetched = cluster, {}, 0

    def partitions_for_topic(self, topic):
        return set(range(len(self.cluster.topics[topic]))) if topic in self.cluster.topics else None

    def end_offsets(self, tps):
        return {tp: len(self.cluster.topics[tp.topic][tp.partition]) for tp in tps}

    def poll(self, timeout_ms=0):
        out = {}
        for tp, position in self.positions.items():
            batch = self.cluster.topics[tp.topic][tp.partition][position:]
            if batch:
                out[tp] = batch
                self.positions[tp] = position + len(batch)
                self.fetched += len(batch)
        return out


class FakeAdmin:
    def __init__(self, cluster):
        self.cluster = cluster

    def list_topics(self):
        return list(self.cluster.topics)

    def describe_topics(self, names):
        return [{"name": n, "error_code": 0, "partitions": [{"partition_index": p} for p in range(len(self.cluster.topics[n]))]} for n in names]

    def list_partition_offsets(self, specs, isolation_level=None):
        """ListOffsets: 0 for EARLIEST, the partition's length for LATEST (no transactions here); kafka-python's admin
        client refuses partitions its metadata does not have."""
        unknown = [tp for tp in specs if tp.topic not in self.cluster.topics or tp.partition >= len(self.cluster.topics[tp.topic])]
        if unknown:
            raise UnknownTopicOrPartitionError("The following partitions are not known: %s" % ", ".join(map(str, unknown)))
        return {tp: OffsetAndTimestamp(0 if spec == OffsetSpec.EARLIEST else len(self.cluster.topics[tp.topic][tp.partition]), -1, None)
                for tp, spec in specs.items()}


class FakeCluster:
    def __init__(self, topics):
        self.topics = topics
        self.consumers = []

    def admin(self):
        return FakeAdmin(self)

    def consumer(self, **_options):
        self.consumers.append(FakeConsumer(self))
        return self.consumers[-1]

    def append(self, topic, partition, key, value, timestamp=0):
        records = self.topics.setdefault(topic, [[]])[partition]
        records.append(FakeRecord(len(records), key, value, timestamp))


def test_flow_status_reads_internal_topics_once_and_then_only_new_records():
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint, Heartbeat, OffsetSync
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import FlowStatus

    source = FakeCluster({"orders": [[FakeRecord(i, b"k", b"v") for i in range(10)]]})
    target = FakeCluster({"primary.orders": [[FakeRecord(i, b"k", b"v") for i in range(7)]]})
    for sync in (OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 5, 5)):
        source.append("mm2-offset-syncs.secondary.internal", 0, sync.encode_key(), sync.encode_value())
    beat = Heartbeat("primary", "secondary", 10_000)
    target.append("heartbeats", 0, beat.encode_key(), beat.encode_value())
    checkpoint = Checkpoint("app", "primary.orders", 0, 5, 5, "")
    target.append("primary.checkpoints.internal", 0, checkpoint.encode_key(), checkpoint.encode_value())
    target.append("primary.checkpoints.internal", 0, checkpoint.encode_key(), checkpoint.encode_value())  # same key again
    target.append("primary.checkpoints.internal", 0, b"\x00", b"\x00")  # garbage is reported, not fatal

    # A release before exactly-once (3.5): the target's offsets stand for records, so its records are never read either
    # (test_mm2_status_lag.py covers the counted target of 3.5+).
    status = FlowStatus(source, target, flow_options(params(mirrormaker_version="3.4.1")))
    first = status.read(now_ms=12_500)
    assert first["partitions"][0]["lag"] == 3 and first["partitions"][0]["last_offset_sync"] == {"upstream": 5, "downstream": 5}
    assert first["heartbeats"] == {"emitted_age_s": 2.5, "replicated_age_s": None}
    assert first["checkpoints"] == {"app": 1}
    assert any("primary.checkpoints.internal[0]@2" in problem for problem in first["problems"])
    fetched = sum(c.fetched for c in source.consumers + target.consumers)

    for offset in range(7, 10):
        target.append("primary.orders", 0, b"k", b"v")
    second = status.read(now_ms=13_000)
    assert second["lag_total"] == 0
    # Nothing of the internal topics was fetched again; only offsets were asked for.
    assert sum(c.fetched for c in source.consumers + target.consumers) == fetched


def test_flow_status_reports_missing_remote_topic_once():
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import FlowStatus

    source = FakeCluster({"orders": [[FakeRecord(0, b"k", b"v")], [FakeRecord(0, b"k", b"v")]]})
    result = FlowStatus(source, FakeCluster({}), flow_options(params())).read()
    assert result["problems"] == ["remote topic primary.orders (of orders) does not exist on secondary"]
    assert [p["lag"] for p in result["partitions"]] == [1, 1]
    assert all(p["target_end_offset"] is None for p in result["partitions"])


def test_flow_status_reports_partitions_the_remote_topic_lacks_yet():
    """A source topic grown by partitions: MirrorMaker 2 grows its remote topic only at its next topic refresh."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import FlowStatus

    source = FakeCluster({"orders": [[FakeRecord(i, b"k", b"v") for i in range(3)] for _partition in range(5)]})
    target = FakeCluster({"primary.orders": [[FakeRecord(i, b"k", b"v") for i in range(3)] for _partition in range(3)]})
    result = FlowStatus(source, target, flow_options(params())).read()
    assert result["problems"] == ["remote topic primary.orders has 3 of the 5 partitions of orders on secondary: MirrorMaker 2 adds"
                                  " the others at its next topic refresh (refresh.topics.interval.seconds); their records count as"
                                  " lag until then"]
    assert [(p["partition"], p["target_end_offset"], p["lag"]) for p in result["partitions"]] == [
        (0, 3, 0), (1, 3, 0), (2, 3, 0), (3, None, 3), (4, None, 3)]


@pytest.mark.parametrize("version, location, separator, syncs_topic, checkpoints_topic", [
    ("2.4.1", "source", "_", "mm2-offset-syncs.secondary.internal", "primary.checkpoints.internal"),
    ("3.9.0", "source", "_", "mm2-offset-syncs_secondary_internal", "primary_checkpoints_internal"),
    ("3.9.0", "target", ".", "mm2-offset-syncs.primary.internal", "primary.checkpoints.internal"),
])
def test_flow_status_reads_the_internal_topics_real_mm2_writes(version, location, separator, syncs_topic, checkpoints_topic):
    """MirrorConnectorConfig.offsetSyncsTopic (named after the other cluster, 3.0+) and DefaultReplicationPolicy's KIP-690
    names (3.1+): the status reads the topics MirrorMaker 2 of that release writes, where it writes them."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import OffsetSync
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import FlowStatus

    remote = "primary%sorders" % separator
    source = FakeCluster({"orders": [[FakeRecord(i, b"k", b"v") for i in range(4)]]})
    target = FakeCluster({remote: [[FakeRecord(i, b"k", b"v") for i in range(4)]]})
    sync = OffsetSync("orders", 0, 3, 3)
    (source if location == "source" else target).append(syncs_topic, 0, sync.encode_key(), sync.encode_value())
    (source if location == "source" else target).append(syncs_topic, 0, sync.encode_key(), None)  # a tombstone is skipped
    flow = flow_options(params(mirrormaker_version=version, offset_syncs_topic_location=location, replication_policy_separator=separator))
    status = FlowStatus(source, target, flow)
    assert status.checkpoints_topic == checkpoints_topic
    result = status.read(now_ms=0)
    assert result["offset_syncs_topic"] == syncs_topic
    assert result["partitions"][0]["last_offset_sync"] == {"upstream": 3, "downstream": 3}
    assert result["problems"] == []


def test_identity_flow_finds_app_heartbeats_under_its_prefixed_name():
    """IdentityReplicationPolicy.formatRemoteTopic prefixes any name ending in `heartbeats` (looksLikeHeartbeat), while
    isHeartbeatsTopic (originalTopic == heartbeats) says app-heartbeats is data: it is measured, on primary.app-heartbeats."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import FlowStatus

    source = FakeCluster({"orders": [[FakeRecord(i, b"k", b"v") for i in range(3)]],
                          "app-heartbeats": [[FakeRecord(i, b"k", b"v") for i in range(5)]],
                          "heartbeats": [[FakeRecord(0, b"k", b"v")]]})
    target = FakeCluster({"orders": [[FakeRecord(i, b"k", b"v") for i in range(3)]],
                          "primary.app-heartbeats": [[FakeRecord(i, b"k", b"v") for i in range(4)]]})
    result = FlowStatus(source, target, flow_options(params(replication_policy="identity"))).read(now_ms=0)
    assert result["topics"] == ["app-heartbeats", "orders"]
    by_topic = {p["topic"]: p for p in result["partitions"]}
    assert by_topic["app-heartbeats"]["remote_topic"] == "primary.app-heartbeats" and by_topic["app-heartbeats"]["lag"] == 1
    assert by_topic["orders"]["remote_topic"] == "orders" and by_topic["orders"]["lag"] == 0
    assert result["problems"] == []


def test_flow_status_reports_state_left_for_an_earlier_remote_topic():
    """The target's primary.orders was deleted and created again (empty): the syncs and the checkpoint of the old one are
    stale (mm2_stale_state); the heartbeats' syncs and the syncs of a topic outside the flow are not looked at."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint, OffsetSync
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import FlowStatus

    source = FakeCluster({"orders": [[FakeRecord(i, b"k", b"v") for i in range(10)]], "heartbeats": [[FakeRecord(0, b"k", b"v")]]})
    target = FakeCluster({"primary.orders": [[]], "primary.heartbeats": [[]]})
    for sync in (OffsetSync("orders", 0, 9, 9), OffsetSync("heartbeats", 0, 0, 0), OffsetSync("other", 0, 5, 5)):
        source.append("mm2-offset-syncs.secondary.internal", 0, sync.encode_key(), sync.encode_value())
    checkpoint = Checkpoint("app", "primary.orders", 0, 10, 10, "")
    target.append("primary.checkpoints.internal", 0, checkpoint.encode_key(), checkpoint.encode_value())

    result = FlowStatus(source, target, flow_options(params(topics=["orders", "heartbeats"]))).read(now_ms=0)
    assert [(f["check"], f["severity"], f["cluster"]) for f in result["stale_state"]] == [
        ("stale_offset_syncs", "error", "primary"), ("stale_checkpoints", "error", "secondary")]
    assert "orders[0]: sync 9 -> 9, but primary.orders[0] ends at 0" in result["stale_state"][0]["message"]
    assert "heartbeats" not in result["stale_state"][0]["message"] and "other" not in result["stale_state"][0]["message"]
    assert "group app primary.orders[0]: checkpoint 10 -> 10, the partition ends at 0" in result["stale_state"][1]["message"]
