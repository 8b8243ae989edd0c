# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ambari v1 REST client over Ansible's open_url: basic auth, X-Requested-By on writes, retries on 502/503/504.

Headers follow what every Ambari 2.7.0..HEAD accepts, as its web UI sends them:
- Accept */*: every API method is @Produces(MediaType.TEXT_PLAIN) (api/services/ClusterService.java,
  RequestService.java), and Jersey 1.x answers 406 to an Accept that matches nothing a method produces.
- Content-Type text/plain on bodies: the API servlet has Jackson's POJOMappingFeature on
  (controller/AmbariServer.java), so before 2.7.4 an application/json body is read by Jackson into the
  methods' String parameter and fails; api/ContentTypeOverrideFilter.java (first in 2.7.4) rewrites it.
A restart POST is never retried blindly: Ambari does not de-duplicate requests, so after an ambiguous
failure the client looks for the request it may have queued before posting again.

The connection options are defined once here (ambari_connection_argument_spec) and documented in the
kafkaops.mirror.ambari_connection doc fragment; keep the two in sync.
"""
from __future__ import annotations

import json
import socket
import time
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import SSLValidationError, open_url

RETRYABLE_STATUS = (502, 503, 504)
TERMINAL_REQUEST_STATES = ("COMPLETED", "FAILED", "TIMEDOUT", "ABORTED")
FAILED_REQUEST_STATES = ("FAILED", "TIMEDOUT", "ABORTED")
REQUESTED_BY = "kafkaops.mirror"
ACCEPT = "*/*"
BODY_CONTENT_TYPE = "text/plain"
# How many of the newest requests to search for one this client may have queued (the web UI's Background
# Operations reads the newest 10 the same way: requests?to=end&page_size=10).
RECENT_REQUESTS = 100


class AmbiguousFailure(Exception):
    """A write whose fate is unknown: the gateway failed or the connection dropped after the body was sent."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def ambari_connection_argument_spec():
    """Options shared by every Ambari module (doc fragment kafkaops.mirror.ambari_connection)."""
    return dict(
        url=dict(type="str", required=True),
        username=dict(type="str", default="admin"),
        password=dict(type="str", required=True, no_log=True),
        cluster_name=dict(type="str", required=True),
        validate_certs=dict(type="bool", default=True),
        timeout=dict(type="int", default=30),
    )


class AmbariError(Exception):
    """Ambari refused or failed a call; the message says which call and what to check."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class AmbariClient:
    def __init__(self, url, username, password, cluster_name, validate_certs=True, timeout=30, retries=4, backoff=0.5, sleep=time.sleep):
        base = url.rstrip("/")
        if base.endswith("/api/v1"):
            base = base[: -len("/api/v1")]
        if not base.startswith(("http://", "https://")):
            raise AmbariError(f"Ambari url {url!r} must start with http:// or https:// (for example https://<cluster>.azurehdinsight.net)")
        self.url = base
        self.username = username
        self.password = password
        self.cluster_name = cluster_name
        self.validate_certs = validate_certs
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep

    @classmethod
    def from_params(cls, params):
        return cls(
            params["url"], params["username"], params["password"], params["cluster_name"],
            validate_certs=params["validate_certs"], timeout=params["timeout"],
        )

    @property
    def cluster_path(self):
        return "/api/v1/clusters/" + quote(self.cluster_name, safe="")

    # ---- transport ---------------------------------------------------------------------------
    def call(self, method, path, body=None, query=None, retry=True):
        """Send one API call and return the parsed JSON body.

        Connection errors and 502/503/504 are retried unless `retry` is false; then the first such failure raises
        AmbiguousFailure, for callers whose write must not be repeated without checking whether it was applied.
        """
        url = self.url + path + ("?" + urlencode(query, safe="/,*()") if query else "")
        headers = {"Accept": ACCEPT}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = BODY_CONTENT_TYPE
        if method != "GET":
            # Ambari's CSRF filter rejects writes without it (400).
            headers["X-Requested-By"] = REQUESTED_BY
        attempt = 0
        while True:
            attempt += 1
            try:
                response = open_url(
                    url, data=data, headers=headers, method=method, url_username=self.username, url_password=self.password,
                    force_basic_auth=True, validate_certs=self.validate_certs, timeout=self.timeout,
                )
                raw = response.read()
                return json.loads(raw) if raw.strip() else {}
            except HTTPError as exc:
                if exc.code in RETRYABLE_STATUS:
                    if not retry:
                        raise AmbiguousFailure(self._http_error(method, url, exc, attempt)) from None
                    if attempt <= self.retries:
                        self._sleep(self.backoff * 2 ** (attempt - 1))
                        continue
                raise self._http_error(method, url, exc, attempt) from None
            except SSLValidationError as exc:
                raise AmbariError(
                    f"TLS certificate of {self.url} could not be verified ({exc}); install the CA that signed it, "
                    f"or set validate_certs=false for a test cluster"
                ) from None
            except (URLError, socket.timeout, ConnectionError, UrlsConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                unreachable = AmbariError(
                    f"Ambari at {self.url} is unreachable ({method} {url} failed {attempt} times: {reason}); "
                    f"check the url, that Ambari is running and that this host can reach it"
                )
                if not retry:
                    raise AmbiguousFailure(unreachable) from None
                if attempt <= self.retries:
                    self._sleep(self.backoff * 2 ** (attempt - 1))
                    continue
                raise unreachable from None
            except ValueError as exc:
                raise AmbariError(f"Ambari answered {method} {url} with something that is not JSON ({exc}); is {self.url} an Ambari server?") from None

    def _http_error(self, method, url, exc, attempt):
        try:
            detail = json.loads(exc.read() or b"{}").get("message", "")
        except (ValueError, AttributeError):
            detail = ""
        detail = detail or exc.reason
        if exc.code in (401, 403):
            return AmbariError(f"wrong Ambari credentials for {self.url} (HTTP {exc.code}: {detail}); check username and password", exc.code)
        tried = f" after {attempt} attempts" if attempt > 1 else ""
        return AmbariError(f"Ambari {method} {url} failed{tried}: HTTP {exc.code}: {detail}", exc.code)

    # ---- configurations ----------------------------------------------------------------------
    def desired_tags(self):
        body = self.call("GET", self.cluster_path, query={"fields": "Clusters/desired_configs"})
        desired = body.get("Clusters", {}).get("desired_configs", {})
        return {config_type: entry["tag"] for config_type, entry in desired.items()}

    def current_config(self, config_type):
        """(tag, properties, properties_attributes) of the config type's desired version."""
        tags = self.desired_tags()
        if config_type not in tags:
            raise AmbariError(
                f"cluster {self.cluster_name} at {self.url} has no config type {config_type!r}; it has: {', '.join(sorted(tags))}"
            )
        tag = tags[config_type]
        body = self.call("GET", self.cluster_path + "/configurations", query={"type": config_type, "tag": tag})
        items = body.get("items") or []
        if not items:
            raise AmbariError(f"Ambari lists {config_type} tag {tag} as desired but returns no such configuration")
        return tag, dict(items[0].get("properties") or {}), dict(items[0].get("properties_attributes") or {})

    def put_config(self, config_type, properties, properties_attributes, note):
        """Make a new version of the config type (Ambari wants the full property set) and return its tag."""
        tag = "version%d" % int(time.time() * 1000)
        entry = {"type": config_type, "tag": tag, "properties": properties, "service_config_version_note": note}
        if properties_attributes:
            entry["properties_attributes"] = properties_attributes
        try:
            self.call("PUT", self.cluster_path, body={"Clusters": {"desired_config": [entry]}})
        except AmbariError:
            # A gateway can time out (502/504) after Ambari stored the version; the retry then finds the tag taken.
            if self.desired_tags().get(config_type) == tag:
                return tag
            raise
        return tag

    # ---- hosts and components ----------------------------------------------------------------
    def hosts(self):
        """[{host_name, ip, components}] for every host of the cluster."""
        body = self.call(
            "GET", self.cluster_path + "/hosts", query={"fields": "Hosts/host_name,Hosts/ip,host_components/HostRoles/component_name"},
        )
        hosts = []
        for item in body.get("items", []):
            components = sorted(hc["HostRoles"]["component_name"] for hc in item.get("host_components", []))
            hosts.append({"host_name": item["Hosts"]["host_name"], "ip": item["Hosts"].get("ip"), "components": components})
        return sorted(hosts, key=lambda h: h["host_name"])

    def host_components(self, service):
        """[(component, host, stale, effective maintenance state)] for every host component of a service."""
        query = {
            "HostRoles/service_name": service,
            "fields": "HostRoles/component_name,HostRoles/host_name,HostRoles/stale_configs,HostRoles/maintenance_state",
        }
        try:
            body = self.call("GET", self.cluster_path + "/host_components", query=query)
        except AmbariError as exc:
            # AmbariManagementControllerImpl.getHostComponents: an unknown service is ServiceNotFoundException, HTTP 404.
            if exc.status == 404:
                raise AmbariError(f"cluster {self.cluster_name} at {self.url} has no service {service} ({exc}); check the service name", 404) from None
            raise
        roles = [i["HostRoles"] for i in body.get("items", [])]
        return sorted((r["component_name"], r["host_name"], bool(r.get("stale_configs")), r.get("maintenance_state") or "OFF") for r in roles)

    def host_component_states(self, service):
        """{(component, host): state} of a service's host components (STARTED, INSTALLED, STARTING, ...)."""
        query = {"HostRoles/service_name": service, "fields": "HostRoles/component_name,HostRoles/host_name,HostRoles/state"}
        body = self.call("GET", self.cluster_path + "/host_components", query=query)
        return {(i["HostRoles"]["component_name"], i["HostRoles"]["host_name"]): i["HostRoles"].get("state") for i in body.get("items", [])}

    # ---- requests ----------------------------------------------------------------------------
    def restart(self, service, component_hosts, context):
        """Start one RESTART request for {component: [hosts]}; return its id."""
        filters = [
            {"service_name": service, "component_name": component, "hosts": ",".join(hosts)}
            for component, hosts in sorted(component_hosts.items())
        ]
        body = {
            "RequestInfo": {
                "command": "RESTART",
                "context": context,
                "operation_level": {"level": "HOST_COMPONENT", "cluster_name": self.cluster_name},
            },
            "Requests/resource_filters": filters,
        }
        newest_before = max((r["id"] for r in self.recent_requests()), default=0)
        attempt = 0
        while True:
            attempt += 1
            try:
                answer = self.call("POST", self.cluster_path + "/requests", body=body, retry=False)
                break
            except AmbiguousFailure as failure:
                # The gateway may have failed after Ambari queued the request: adopt it rather than queue a second restart.
                self._sleep(self.backoff * 2 ** (attempt - 1))
                queued = [r["id"] for r in self.recent_requests() if r["id"] > newest_before and r["context"] == context]
                if queued:
                    return min(queued)
                if attempt > self.retries:
                    raise failure.error from None
        try:
            return int(answer["Requests"]["id"])
        except (KeyError, TypeError, ValueError):
            raise AmbariError(f"Ambari accepted the restart but returned no request id: {answer}") from None

    def recent_requests(self):
        """[{id, context}] of the cluster's newest requests (Ambari numbers requests in order)."""
        body = self.call(
            "GET", self.cluster_path + "/requests",
            query={"fields": "Requests/id,Requests/request_context", "to": "end", "page_size": RECENT_REQUESTS},
        )
        return [
            {"id": int(item["Requests"]["id"]), "context": item["Requests"].get("request_context")}
            for item in body.get("items", []) if "id" in item.get("Requests", {})
        ]

    def request_status(self, request_id):
        body = self.call(
            "GET", self.cluster_path + "/requests/%d" % request_id,
            query={"fields": "Requests/request_status,Requests/progress_percent,Requests/request_context"},
        )
        info = body.get("Requests", {})
        return {"id": request_id, "status": info.get("request_status"), "progress": info.get("progress_percent"), "context": info.get("request_context")}

    def request_tasks(self, request_id):
        body = self.call(
            "GET", self.cluster_path + "/requests/%d" % request_id,
            query={"fields": "tasks/Tasks/status,tasks/Tasks/host_name,tasks/Tasks/role,tasks/Tasks/stderr,tasks/Tasks/command_detail"},
        )
        return [t.get("Tasks", {}) for t in body.get("tasks", [])]
