from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils.ambari_restart import (
    Restarter,
    RestartFailed,
    RestartInputError,
    batches,
    restart_components,
    select_targets,
)

PAIRS = [("KAFKA_BROKER", "wn0"), ("KAFKA_BROKER", "wn1"), ("KAFKA_MIRROR", "wn1")]
HOST_COMPONENTS = [(c, h, True) for c, h in PAIRS] + [("KAFKA_BROKER", "wn2", False)]


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
    assert select_targets(HOST_COMPONENTS, components, hosts, only_stale) == expected


def test_select_targets_refuses_unknown_names():
    with pytest.raises(RestartInputError, match="KAFKA_BROKR, wn9: not among"):
        select_targets(HOST_COMPONENTS, ["KAFKA_BROKR"], ["wn9"])


def test_batches():
    assert batches([], rolling=True) == []
    assert batches(PAIRS, rolling=False) == [{"KAFKA_BROKER": ["wn0", "wn1"], "KAFKA_MIRROR": ["wn1"]}]
    assert batches(PAIRS, rolling=True) == [{"KAFKA_BROKER": ["wn0"]}, {"KAFKA_BROKER": ["wn1"], "KAFKA_MIRROR": ["wn1"]}]


class FakeClient:
    cluster_name = "c"

    def __init__(self, statuses, host_components=HOST_COMPONENTS):
        self.statuses = list(statuses)
        self.host_components_list = host_components
        self.restarts = []

    def host_components(self, service):
        return list(self.host_components_list)

    def restart(self, service, component_hosts, context):
        self.restarts.append(component_hosts)
        return len(self.restarts)

    def request_status(self, request_id):
        return {"id": request_id, "status": self.statuses.pop(0), "progress": 50, "context": "ctx"}

    def request_tasks(self, request_id):
        return [
            {"role": "KAFKA_BROKER", "host_name": "wn0", "status": "FAILED", "stderr": "boom\n"},
            {"role": "KAFKA_BROKER", "host_name": "wn1", "status": "COMPLETED", "stderr": ""},
        ]


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def params(**overrides):
    base = {"service": "KAFKA", "components": None, "hosts": None, "only_stale": True, "rolling": False, "wait": True,
            "wait_timeout": 10, "poll_interval": 1, "context": None}
    base.update(overrides)
    return base


def run(client, **overrides):
    clock = FakeClock()
    return restart_components(params(**overrides), False, client, Restarter(client, 1, clock, clock.sleep))


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
    client = FakeClient([], host_components=[("KAFKA_BROKER", "wn0", False)])
    assert run(client) == {"changed": False, "restarted": [], "requests": [], "diff": {
        "before": "", "after": "", "before_header": "KAFKA components to restart", "after_header": "after restart"}}


def test_no_wait_returns_accepted_requests_without_polling():
    client = FakeClient([])  # any status poll would fail: no statuses scripted
    result = run(client, wait=False, rolling=True)
    assert [r["status"] for r in result["requests"]] == ["Accepted", "Accepted"] and len(client.restarts) == 2
