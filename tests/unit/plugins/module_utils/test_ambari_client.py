"""The Ambari client's retry and error rules, with open_url replaced by a scripted fake."""
from __future__ import annotations

import io
import json
from urllib.error import HTTPError, URLError

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils import ambari
from ansible_collections.kafkaops.mirror.plugins.module_utils.ambari import AmbariClient, AmbariError


class Script:
    """Answers open_url calls in order: an int is an HTTP error status, an exception is raised, a dict is a JSON body."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []

    def __call__(self, url, **kwargs):
        self.calls.append((url, kwargs))
        answer = self.answers.pop(0)
        if isinstance(answer, int):
            raise HTTPError(url, answer, "reason", {}, io.BytesIO(json.dumps({"status": answer, "message": f"msg {answer}"}).encode()))
        if isinstance(answer, Exception):
            raise answer
        return io.BytesIO(json.dumps(answer).encode())


@pytest.fixture
def client():
    sleeps = []
    c = AmbariClient("https://c.example.invalid/api/v1/", "admin", "pw", "c", sleep=sleeps.append)
    c.sleeps = sleeps
    return c


def test_url_is_normalized_and_scheme_required(client):
    assert client.url == "https://c.example.invalid"
    with pytest.raises(AmbariError, match="must start with http"):
        AmbariClient("c.example.invalid", "a", "b", "c")


def test_retries_503_with_backoff_then_succeeds(client, monkeypatch):
    script = Script(503, 502, {"ok": 1})
    monkeypatch.setattr(ambari, "open_url", script)
    assert client.call("GET", "/x") == {"ok": 1}
    assert len(script.calls) == 3 and client.sleeps == [0.5, 1.0]


def test_gives_up_after_retries(client, monkeypatch):
    monkeypatch.setattr(ambari, "open_url", Script(*([504] * 5)))
    with pytest.raises(AmbariError, match="failed after 5 attempts: HTTP 504: msg 504"):
        client.call("GET", "/x")


def test_connection_errors_are_retried(client, monkeypatch):
    monkeypatch.setattr(ambari, "open_url", Script(*([URLError("refused")] * 5)))
    with pytest.raises(AmbariError, match="unreachable .*5 times: refused"):
        client.call("GET", "/x")


@pytest.mark.parametrize("status", [400, 404, 409, 500])
def test_other_errors_are_not_retried(client, monkeypatch, status):
    script = Script(status)
    monkeypatch.setattr(ambari, "open_url", script)
    with pytest.raises(AmbariError, match=f"HTTP {status}: msg {status}") as caught:
        client.call("GET", "/x")
    assert caught.value.status == status and len(script.calls) == 1


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_say_wrong_credentials(client, monkeypatch, status):
    monkeypatch.setattr(ambari, "open_url", Script(status))
    with pytest.raises(AmbariError, match="wrong Ambari credentials for https://c.example.invalid"):
        client.call("GET", "/x")


def test_writes_carry_x_requested_by_and_basic_auth(client, monkeypatch):
    script = Script({}, {})
    monkeypatch.setattr(ambari, "open_url", script)
    client.call("GET", "/x")
    client.call("PUT", "/x", body={"a": 1})
    get_kwargs, put_kwargs = script.calls[0][1], script.calls[1][1]
    assert "X-Requested-By" not in get_kwargs["headers"] and put_kwargs["headers"]["X-Requested-By"]
    assert put_kwargs["force_basic_auth"] and put_kwargs["url_password"] == "pw" and put_kwargs["validate_certs"] is True


def test_query_keeps_ambari_paths_readable(client, monkeypatch):
    script = Script({"items": [{"HostRoles": {"component_name": "KAFKA_BROKER", "host_name": "wn0", "stale_configs": True}}]})
    monkeypatch.setattr(ambari, "open_url", script)
    assert client.host_components("KAFKA") == [("KAFKA_BROKER", "wn0", True)]
    url = script.calls[0][0]
    assert url.startswith("https://c.example.invalid/api/v1/clusters/c/host_components?")
    assert "HostRoles/service_name=KAFKA" in url and "HostRoles/stale_configs" in url


def test_put_config_whose_answer_was_lost_counts_when_the_tag_is_desired(client, monkeypatch):
    class Recorder(Script):
        def __call__(self, url, **kwargs):
            if kwargs.get("method") == "GET":
                return io.BytesIO(json.dumps({"Clusters": {"desired_configs": {"kafka-env": {"tag": self.put_tag}}}}).encode())
            self.put_tag = json.loads(kwargs["data"])["Clusters"]["desired_config"][0]["tag"]
            return super().__call__(url, **kwargs)

    monkeypatch.setattr(ambari, "open_url", Recorder(*([504] * 5)))
    assert client.put_config("kafka-env", {"content": "x"}, {}, "note").startswith("version")


def test_put_config_failure_that_did_not_apply_is_raised(client, monkeypatch):
    answers = Script(400, {"Clusters": {"desired_configs": {"kafka-env": {"tag": "version1"}}}})
    monkeypatch.setattr(ambari, "open_url", answers)
    with pytest.raises(AmbariError, match="HTTP 400"):
        client.put_config("kafka-env", {"content": "x"}, {}, "note")


def test_certificate_errors_are_not_retried_and_name_validate_certs(client, monkeypatch):
    script = Script(ambari.SSLValidationError("self-signed certificate"))
    monkeypatch.setattr(ambari, "open_url", script)
    with pytest.raises(AmbariError, match="could not be verified .*validate_certs=false"):
        client.call("GET", "/x")
    assert len(script.calls) == 1
