# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Ambari client's retry and error rules, with open_url replaced by a scripted fake."""
from __future__ import annotations

import io
import json
from urllib.error import HTTPError, URLError

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari import client as ambari
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.client import AmbariClient, AmbariError


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
    assert client.host_components("KAFKA") == [("KAFKA_BROKER", "wn0", True, "OFF")]
    url = script.calls[0][0]
    assert url.startswith("https://c.example.invalid/api/v1/clusters/c/host_components?")
    assert "HostRoles/service_name=KAFKA" in url and "HostRoles/stale_configs" in url and "HostRoles/maintenance_state" in url


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


def test_headers_are_what_every_ambari_2_7_accepts(client, monkeypatch):
    """Every API method is @Produces(MediaType.TEXT_PLAIN) (api/services/ClusterService.java, RequestService.java): Jersey
    answers 406 to Accept: application/json. Bodies go as text/plain: with Jackson's POJOMappingFeature on
    (controller/AmbariServer.java), an application/json body fails before api/ContentTypeOverrideFilter.java (2.7.4)."""
    script = Script({}, {})
    monkeypatch.setattr(ambari, "open_url", script)
    client.call("GET", "/x")
    client.call("POST", "/x", body={"a": 1})
    get_headers, post_headers = script.calls[0][1]["headers"], script.calls[1][1]["headers"]
    assert get_headers == {"Accept": "*/*"}
    assert post_headers == {"Accept": "*/*", "Content-Type": "text/plain", "X-Requested-By": "kafkaops.mirror"}
    assert json.loads(script.calls[1][1]["data"]) == {"a": 1}


RECENT = {"items": [{"Requests": {"id": 5, "request_context": "Restart [1/2]"}}]}


def recent_with(*entries):
    return {"items": RECENT["items"] + [{"Requests": {"id": i, "request_context": ctx}} for i, ctx in entries]}


def posts(script):
    return [kwargs for _url, kwargs in script.calls if kwargs["method"] == "POST"]


def test_restart_accepted_before_a_gateway_504_is_followed_not_posted_again(client, monkeypatch):
    """Ambari's RequestService.createRequests queues every POST (no de-duplication): a POST retried after a gateway 504
    that hid an accepted request would restart twice. The client finds the request by its context instead."""
    script = Script(RECENT, 504, recent_with((6, "Restart [2/2]")))
    monkeypatch.setattr(ambari, "open_url", script)
    assert client.restart("KAFKA", {"KAFKA_BROKER": ["wn1"]}, "Restart [2/2]") == 6
    assert len(posts(script)) == 1
    assert "to=end" in script.calls[0][0] and "page_size=100" in script.calls[0][0]


@pytest.mark.parametrize("failure", [503, URLError("timed out")])
def test_restart_not_queued_after_a_failure_is_posted_again(client, monkeypatch, failure):
    # An older request with the same context (a previous run) is not taken for this one.
    script = Script(recent_with((6, "Restart [2/2]")), failure, recent_with((6, "Restart [2/2]")), {"Requests": {"id": 7, "status": "Accepted"}})
    monkeypatch.setattr(ambari, "open_url", script)
    assert client.restart("KAFKA", {"KAFKA_BROKER": ["wn1"]}, "Restart [2/2]") == 7
    assert len(posts(script)) == 2 and client.sleeps == [0.5]


def test_restart_gives_up_after_retries_without_queueing_anything(client, monkeypatch):
    script = Script(RECENT, *([502, RECENT] * 5))
    monkeypatch.setattr(ambari, "open_url", script)
    with pytest.raises(AmbariError, match="HTTP 502"):
        client.restart("KAFKA", {"KAFKA_BROKER": ["wn1"]}, "Restart [2/2]")
    assert len(posts(script)) == 5


def test_unknown_service_is_404_and_named(client, monkeypatch):
    """AmbariManagementControllerImpl.getHostComponents throws ServiceNotFoundException for a service the cluster lacks (404)."""
    monkeypatch.setattr(ambari, "open_url", Script(404))
    with pytest.raises(AmbariError, match="cluster c at https://c.example.invalid has no service KAFKA"):
        client.host_components("KAFKA")
