# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.broker_rejoin import ClusterNotReadable, ClusterView, RejoinWaiter, still_missing
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.restart import (
    Restarter,
    RestartFailed,
    RestartInputError,
    batches,
    restart_components,
    select_targets,
)
from tests.support.fake_clock import FakeClock

PAIRS = [("KAFKA_BROKER", "wn0"), ("KAFKA_BROKER", "wn1"), ("KAFKA_MIRROR", "wn1")]
HOST_COMPONENTS = [(c, h, True, "OFF") for c, h in PAIRS] + [("KAFKA_BROKER", "wn2", False, "OFF")]


@pytest.mark.parametrize(
    "components, hosts, only_stale, expected",
    [
        (None, None, True, PAIRS),
        (None, None, False, PAIRS + [("KAFKA_BROKER", "wn2")]),
        (["KAFKA_BROKER"], None, True, PAIRS[:2]),
        (None, ["wn1"], True, PAIRS[1:]),
        (["KAFKA_MIRROR"], ["wn0"], True, []),
        (None, ["wn2"], True, []),
    ],
)
def test_select_targets(components, hosts, only_stale, expected):
    assert select_targets(HOST_COMPONENTS, components, hosts, only_stale) == (expected, [])


def test_select_targets_refuses_unknown_names():
    with pytest.raises(RestartInputError, match="KAFKA_BROKR, wn9: not among"):
        select_targets(HOST_COMPONENTS, ["KAFKA_BROKR"], ["wn9"])


def test_batches():
    assert batches([], rolling=True) == []
    assert batches(PAIRS, rolling=False) == [{"KAFKA_BROKER": ["wn0", "wn1"], "KAFKA_MIRROR": ["wn1"]}]
    assert batches(PAIRS, rolling=True) == [{"KAFKA_BROKER": ["wn0"]}, {"KAFKA_BROKER": ["wn1"], "KAFKA_MIRROR": ["wn1"]}]


class FakeClient:
    cluster_name = "c"

    def __init__(self, statuses, host_components=HOST_COMPONENTS, states=None, events=None):
        self.statuses = list(statuses)
        self.host_components_list = host_components
        self.restarts = []
        # Answers of host_component_states in turn; the last one repeats. Default: everything STARTED.
        self.states = list(states or [{}])
        self.events = events if events is not None else []

    def host_component_states(self, service):
        answer = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        self.events.append("states")
        return {(c, h): answer.get(h, "STARTED") for c, h, _s, _m in self.host_components_list}

    def host_components(self, service):
        return list(self.host_components_list)

    def restart(self, service, component_hosts, context):
        self.restarts.append(component_hosts)
        self.events.append(f"restart {','.join(sorted({h for hs in component_hosts.values() for h in hs}))}")
        return len(self.restarts)

    def request_status(self, request_id):
        return {"id": request_id, "status": self.statuses.pop(0), "progress": 50, "context": "ctx"}

    def request_tasks(self, request_id):
        return [
            {"role": "KAFKA_BROKER", "host_name": "wn0", "status": "FAILED", "stderr": "boom\n"},
            {"role": "KAFKA_BROKER", "host_name": "wn1", "status": "COMPLETED", "stderr": ""},
        ]


def params(**overrides):
    base = {"service": "KAFKA", "components": None, "hosts": None, "only_stale": True, "rolling": False, "wait": True,
            "wait_timeout": 10, "poll_interval": 1, "context": None}
    base.update(overrides)
    return base


def run(client, rejoin=None, **overrides):
    clock = FakeClock()
    return restart_components(params(**overrides), False, client, Restarter(client, 1, clock, clock.sleep), rejoin)


def view(brokers, partitions):
    """A ClusterView from broker ids and {(topic, partition): (replicas, isr)}."""
    return ClusterView(frozenset(brokers), {tp: frozenset(r) for tp, (r, _isr) in partitions.items()},
                       {tp: frozenset(isr) for tp, (_r, isr) in partitions.items()})


class FakeKafka:
    """Metadata reads in turn: broker 2 is missing for `down_reads` reads after each restart, then back."""

    def __init__(self, events, down_reads=2):
        self.events = events
        self.down_reads = down_reads
        self.down_left = 0
        self.restarts_seen = 0
        self.full = view({1, 2, 3}, {("t", 0): ({1, 2, 3}, {1, 2, 3}), ("t", 1): ({1, 2, 3}, {1, 2, 3})})

    def read(self, _params):
        restarts = sum(1 for e in self.events if e.startswith("restart"))
        if restarts > self.restarts_seen:
            self.restarts_seen, self.down_left = restarts, self.down_reads
        if self.down_left:
            self.down_left -= 1
            self.events.append("kafka: broker 2 missing")
            return view({1, 3}, {("t", 0): ({1, 2, 3}, {1, 3}), ("t", 1): ({1, 2, 3}, {1, 2, 3})})
        self.events.append("kafka: all back")
        return self.full


def test_waits_until_completed():
    client = FakeClient(["PENDING", "IN_PROGRESS", "COMPLETED"])
    result = run(client)
    assert result["changed"] and result["requests"][0]["status"] == "COMPLETED" and len(client.restarts) == 1


def test_check_mode_sends_nothing():
    client = FakeClient([])
    result = restart_components(params(), True, client)
    assert result["changed"] and result["requests"] == [] and client.restarts == []


def test_failed_request_names_id_context_and_failed_tasks_only():
    client = FakeClient(["FAILED"])
    with pytest.raises(RestartFailed) as caught:
        run(client)
    message = str(caught.value)
    assert "Ambari request 1 ('ctx') on cluster c ended FAILED" in message
    assert "KAFKA_BROKER on wn0: FAILED (boom)" in message and "wn1" not in message


def test_rolling_stops_at_first_failure():
    client = FakeClient(["ABORTED", "COMPLETED"])
    with pytest.raises(RestartFailed):
        run(client, rolling=True)
    assert len(client.restarts) == 1


def test_timeout():
    client = FakeClient(["IN_PROGRESS"] * 20)
    with pytest.raises(RestartFailed, match="still IN_PROGRESS .* after 3 s"):
        run(client, wait_timeout=3)


def test_unknown_service_is_an_input_error():
    with pytest.raises(RestartInputError, match="service KAFKA has no host components in cluster c"):
        run(FakeClient([], host_components=[]))


def test_nothing_to_restart():
    client = FakeClient([], host_components=[("KAFKA_BROKER", "wn0", False, "OFF")])
    assert run(client) == {"changed": False, "restarted": [], "in_maintenance": [], "requests": [], "diff": {
        "before": "", "after": "", "before_header": "KAFKA components to restart", "after_header": "after restart"}}


def test_no_wait_returns_accepted_requests_without_polling():
    client = FakeClient([])  # any status poll would fail: no statuses scripted
    result = run(client, wait=False, rolling=True)
    assert [r["status"] for r in result["requests"]] == ["Accepted", "Accepted"] and len(client.restarts) == 2


def test_rolling_restart_waits_for_started_and_kafka_back_before_the_next_host():
    """Issue 17: a request COMPLETED when the start script returned; the next host waits for Ambari's STARTED
    (HostRoles/state) and for Kafka's metadata to show the brokers registered and the partitions in sync again."""
    events = []
    kafka = FakeKafka(events)
    clock = FakeClock()
    rejoin = RejoinWaiter({"bootstrap_servers": ["b:9092"]}, poll_interval=1, reader=kafka.read, clock=clock, sleep=clock.sleep)
    client = FakeClient(["COMPLETED", "COMPLETED"], states=[{"wn0": "INSTALLED"}, {}], events=events)
    result = run(client, rejoin=rejoin, rolling=True)
    assert [(r["started"], r["brokers_back"]) for r in result["requests"]] == [(True, True), (True, True)]
    assert events == [
        "kafka: all back", "restart wn0", "states", "states", "kafka: broker 2 missing", "kafka: broker 2 missing", "kafka: all back",
        "kafka: all back", "restart wn1", "states", "kafka: broker 2 missing", "kafka: broker 2 missing", "kafka: all back",
    ]


def test_a_broker_that_does_not_come_back_stops_the_rolling_restart():
    events = []
    kafka = FakeKafka(events, down_reads=1000)
    clock = FakeClock()
    rejoin = RejoinWaiter({"bootstrap_servers": ["b:9092"]}, poll_interval=1, reader=kafka.read, clock=clock, sleep=clock.sleep)
    client = FakeClient(["COMPLETED", "COMPLETED"], events=events)
    with pytest.raises(RestartFailed, match=r"not back .* after 5 s: brokers 2 not registered; 1 partitions not back in sync \(t-0 \(replicas 2\)\)"):
        run(client, rejoin=rejoin, rolling=True, wait_timeout=5)
    assert len(client.restarts) == 1


def _rejoin(reads, clock, events):
    """A RejoinWaiter whose reads answer `reads` in turn (a view, or an exception to raise)."""
    def read(_params):
        answer = reads.pop(0)
        events.append("kafka: " + ("error" if isinstance(answer, Exception) else f"{len(answer.brokers)} brokers"))
        if isinstance(answer, Exception):
            raise answer
        return answer
    return RejoinWaiter({"bootstrap_servers": ["b:9092"]}, poll_interval=1, reader=read, clock=clock, sleep=clock.sleep)


FULL = view({1, 2}, {("t", 0): ({1, 2}, {1, 2})})
EMPTY_CACHE = view(set(), {})


def test_a_view_before_the_restart_that_lists_no_broker_is_read_again():
    """A broker that has just started answers from an empty cache (no broker at all): a view of nothing before the restart
    would make the wait after it wait for nothing, so it is read again."""
    events, clock = [], FakeClock()
    client = FakeClient(["COMPLETED"], events=events)
    result = run(client, rejoin=_rejoin([EMPTY_CACHE, EMPTY_CACHE, FULL, FULL], clock, events))
    assert result["requests"][0]["brokers_back"] is True
    assert events[:4] == ["kafka: 0 brokers", "kafka: 0 brokers", "kafka: 2 brokers", "restart wn0,wn1"], events


def test_a_view_that_never_lists_a_broker_stops_before_the_first_restart():
    events, clock = [], FakeClock()
    client = FakeClient(["COMPLETED"], events=events)
    with pytest.raises(ClusterNotReadable, match="listed no broker"):
        run(client, rejoin=_rejoin([EMPTY_CACHE] * 100, clock, events), wait_timeout=5)
    assert client.restarts == []


def test_a_cluster_unreadable_between_two_restarts_fails_with_the_restart_made():
    """The read before the second request fails: a RestartFailed that carries the first request (the module reports it
    changed), not the "before restarting anything" error."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnectionError

    events, clock = [], FakeClock()
    client = FakeClient(["COMPLETED", "COMPLETED"], events=events)
    with pytest.raises(RestartFailed, match=r"After 1 of 2 restart requests on cluster c, the Kafka cluster could not be read "
                                            r"before the next one: no broker answered\. No further host was restarted") as failed:
        run(client, rejoin=_rejoin([FULL, FULL, KafkaConnectionError("no broker answered")], clock, events), rolling=True)
    assert len(client.restarts) == 1 and [r["status"] for r in failed.value.result["requests"]] == ["COMPLETED"]
    assert failed.value.result["changed"] is True


def test_a_component_not_started_after_completed_stops_the_rolling_restart():
    client = FakeClient(["COMPLETED", "COMPLETED"], states=[{"wn0": "INSTALLED"}])
    with pytest.raises(RestartFailed, match="KAFKA_BROKER on wn0 is INSTALLED after 3 s"):
        run(client, rolling=True, wait_timeout=3)
    assert len(client.restarts) == 1


def test_rolling_is_the_default():
    from ansible_collections.kafkaops.mirror.plugins.modules.ambari_restart import argument_spec

    assert argument_spec()["rolling"]["default"] is True


def test_a_topic_deleted_during_the_restart_is_not_waited_for():

    before = view({1, 2}, {("gone", 0): ({1, 2}, {1, 2}), ("t", 0): ({1, 2}, {1, 2})})
    assert still_missing(before, view({1, 2}, {("t", 0): ({1, 2}, {1, 2})})) == []
    assert still_missing(before, view({1, 2}, {("t", 0): ({1, 2}, {1})})) == ["1 partitions not back in sync (t-0 (replicas 2))"]


def test_a_replica_reassigned_away_during_the_restart_is_not_waited_for():
    before = view({1, 2, 3}, {("t", 0): ({1, 2}, {1, 2})})
    assert still_missing(before, view({1, 2, 3}, {("t", 0): ({1, 3}, {1})})) == []


def test_replicas_in_sync_before_must_be_back_even_when_the_partition_was_under_replicated_before():
    """Regression (CI, ci32): in a rolling restart the view before wn1's restart came from a broker whose cache had not yet
    learnt that broker 0 (restarted first) was back in the ISR, so every partition read under-replicated before; comparing
    whole partitions ("in sync before, in sync now") then waited for nothing, and wn2 went down 9.7 s after wn1 started, with
    every partition under-replicated. Broker 1's replicas were in sync before, so they are waited for."""
    stale_before = view({0, 1, 2}, {("t", 0): ({0, 1, 2}, {1, 2}), ("t", 1): ({1, 2, 0}, {1, 2})})
    wn1_registered_not_caught_up = view({0, 1, 2}, {("t", 0): ({0, 1, 2}, {0, 2}), ("t", 1): ({1, 2, 0}, {0, 2})})
    assert still_missing(stale_before, wn1_registered_not_caught_up) == [
        "2 partitions not back in sync (t-0 (replicas 1), t-1 (replicas 1))"]
    assert still_missing(stale_before, view({0, 1, 2}, {("t", 0): ({0, 1, 2}, {0, 1, 2}), ("t", 1): ({1, 2, 0}, {2, 1})})) == []
    # Over five partitions the message names five and counts the rest.
    many = view({0, 1}, {("t", i): ({0, 1}, {0, 1}) for i in range(7)})
    assert still_missing(many, view({0, 1}, {("t", i): ({0, 1}, {0}) for i in range(7)})) == [
        "7 partitions not back in sync (t-0 (replicas 1), t-1 (replicas 1), t-2 (replicas 1), t-3 (replicas 1), t-4 (replicas 1) "
        "and 2 more)"]


@pytest.mark.parametrize("state, skipped", [("ON", True), ("IMPLIED_FROM_HOST", True), ("IMPLIED_FROM_SERVICE_AND_HOST", True),
                                            ("IMPLIED_FROM_SERVICE", False), ("OFF", False)])
def test_components_in_maintenance_are_skipped_as_ambaris_service_level_operations_do(state, skipped):
    """MaintenanceStateHelper.isOperationAllowed, case Service: allowed when OFF or IMPLIED_FROM_SERVICE."""
    components = [("KAFKA_BROKER", "wn0", True, "OFF"), ("KAFKA_BROKER", "wn1", True, state)]
    targets, left = select_targets(components)
    assert (left == [("KAFKA_BROKER", "wn1", state)]) is skipped and (("KAFKA_BROKER", "wn1") in targets) is not skipped
    # Named explicitly, the host component restarts (an operation at HOST_COMPONENT level is always allowed).
    assert select_targets(components, hosts=["wn1"]) == ([("KAFKA_BROKER", "wn1")], [])


def _metadata_answer(brokers, partitions):
    """A Metadata response as kafka-python 3 gives it: {topic: {partition: (replicas, isr)}}."""
    return dict(brokers=[dict(node_id=b, host=f"wn{b}", port=9092, rack=None) for b in brokers],
                topics=[dict(error_code=0, name=name, is_internal=False,
                             partitions=[dict(partition_index=i, leader_id=replicas[0], replica_nodes=replicas, isr_nodes=isr)
                                         for i, (replicas, isr) in parts.items()])
                        for name, parts in partitions.items()])


@pytest.mark.parametrize("answer, missing", [
    # A broker that has just registered, before the controller sent it the partitions: an empty cache.
    (_metadata_answer([], {}), ["brokers 0, 1, 2 not registered", "the broker that answered lists no partitions yet (its metadata cache is not filled)"]),
    # Every broker and no partition: a cache that has the brokers' UpdateMetadata and not yet the partitions'.
    (_metadata_answer([0, 1, 2], {}), ["the broker that answered lists no partitions yet (its metadata cache is not filled)"]),
    (_metadata_answer([0, 1, 2], {"t": {0: ([0, 1, 2], [1, 2])}}), ["1 partitions not back in sync (t-0 (replicas 0))"]),
    (_metadata_answer([0, 1, 2], {"t": {0: ([0, 1, 2], [1, 2, 0])}}), []),
])
def test_the_view_takes_brokers_and_partitions_from_one_answer(monkeypatch, answer, missing):
    """Regression (CI, stop 35): the brokers came from the bootstrap metadata and the partitions from a second request, which
    a just-restarted broker answered with an empty cache; all brokers and no partitions read as 'back', and the next broker
    restarted with 53 partitions under-replicated."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari import broker_rejoin

    answers = []

    class OneAnswerConnection:
        def __init__(self, params):
            self.params = params

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            return None

        def metadata(self):
            answers.append(answer)
            return answer

        def cluster(self):
            raise AssertionError("the brokers must come from the same answer as the partitions")

    monkeypatch.setattr(broker_rejoin, "KafkaConnection", OneAnswerConnection)
    before = view({0, 1, 2}, {("t", 0): ({0, 1, 2}, {0, 1, 2})})
    assert broker_rejoin.still_missing(before, broker_rejoin.read_view({"bootstrap_servers": ["wn0:9092"]})) == missing
    assert len(answers) == 1
