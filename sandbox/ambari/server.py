# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTP front of the Ambari emulator: basic auth, the CSRF header rule, media types, routing, partial responses.

Media types as Ambari's Jersey 1.x resources handle them: every API method is @Produces(MediaType.TEXT_PLAIN)
(api/services/ClusterService.java, RequestService.java, ...), so an Accept header that admits no text/plain is
406 Not Acceptable, and answers are text/plain. A body sent as application/json fails before 2.7.4: the API
servlet has Jackson's POJOMappingFeature on (controller/AmbariServer.java), so Jackson, not the plain-text
reader, is asked to turn the JSON object into the methods' String parameter; api/ContentTypeOverrideFilter.java,
first in release-2.7.4, rewrites application/json to text/plain. The emulator claims `ambari_version`.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

from . import query
from .cluster import ApiError, Cluster
from .executor import RequestExecutor
from .faults import FaultError, Faults
from .resources import KEYS, Shapes

CSRF_MESSAGE = "CSRF protection is turned on. X-Requested-By HTTP header is required."
JSON_BODY_MESSAGE = (
    "Can not deserialize instance of java.lang.String out of START_OBJECT token (a body sent as application/json; "
    "Ambari before 2.7.4 reads request bodies as text/plain)"
)
CONTENT_TYPE_OVERRIDE_VERSION = (2, 7, 4)


def version_tuple(version: str) -> tuple:
    return tuple(int(part) for part in version.split(".")[:3] if part.isdigit())


def accepts_text_plain(accept: str) -> bool:
    """Whether an Accept header admits text/plain (absent or empty admits everything)."""
    if not accept.strip():
        return True
    for media_range in accept.split(","):
        kind, *params = [part.strip() for part in media_range.split(";")]
        quality = next((p.split("=", 1)[1] for p in params if p.replace(" ", "").startswith("q=")), "1")
        if kind.lower() in ("*/*", "text/*", "text/plain") and float(quality or 1) > 0:
            return True
    return False


REQUEST_DEFAULT_FIELDS = ["Requests/*", "tasks/Tasks/cluster_name", "tasks/Tasks/id", "tasks/Tasks/request_id"]


class AmbariServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, config: dict):
        self.config = config
        self.cluster = Cluster(config)
        self.faults = Faults()
        self.executor = RequestExecutor(self.cluster)
        super().__init__((config.get("host", "127.0.0.1"), int(config.get("port", 8080))), Handler)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/api/v1"

    def server_close(self):
        self.executor.stop()
        super().server_close()


class Handler(BaseHTTPRequestHandler):
    server: AmbariServer
    server_version = "Jetty(9.4.12)"
    protocol_version = "HTTP/1.1"

    # ---- plumbing ----------------------------------------------------------------------------
    def log_message(self, format, *args):  # noqa: A002 - signature of BaseHTTPRequestHandler
        sys.stderr.write(f"ambari-emulator {self.address_string()} {format % args}\n")

    def _send(self, status: int, body) -> None:
        processed_fault = getattr(self, "_processed_fault", None)
        if processed_fault and status < 400:
            # The write went through; the gateway in front of Ambari failed the answer.
            self._processed_fault = None
            status, body = processed_fault, {"status": processed_fault, "message": "Gateway Timeout (sandbox fault: after processing)"}
        data = json.dumps(body, indent=2).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"status": status, "message": message})

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw.strip():
            return {}
        content_type = (self.headers.get("Content-Type") or "").strip().lower()
        # Ambari's own rule, for its API only: the sandbox's /_sandbox control endpoints take JSON as tests send it.
        ambari_api = self.path.startswith("/api/v1")
        if ambari_api and content_type.startswith("application/json") and version_tuple(self.server.cluster.ambari_version) < CONTENT_TYPE_OVERRIDE_VERSION:
            raise ApiError(400, JSON_BODY_MESSAGE)
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise ApiError(400, f"Invalid Request: Malformed Request Body.  An exception occurred parsing the request body: {exc}") from None

    def _user(self):
        """The authenticated user name, or None when the credentials are missing or wrong."""
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None
        try:
            user, _colon, password = base64.b64decode(header[6:]).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        config = self.server.config
        if user == config.get("username", "admin") and password == config.get("password", "admin"):
            return user
        return None

    def do_GET(self):  # noqa: N802 - http.server naming
        self._dispatch("GET")

    def do_PUT(self):  # noqa: N802
        self._dispatch("PUT")

    def do_POST(self):  # noqa: N802
        self._dispatch("POST")

    def do_DELETE(self):  # noqa: N802
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        self._processed_fault = None
        url = urlsplit(self.path)
        path = unquote(url.path).rstrip("/")
        params = dict(parse_qsl(url.query, keep_blank_values=True))
        try:
            if path == "/_sandbox/faults":
                self._faults(method)
                return
            if path == "/_sandbox/restarts":
                self._send(200, {"restarts": self.server.cluster.restarts()})
                return
            if not path.startswith("/api/v1"):
                raise ApiError(404, f"The requested resource doesn't exist: {path}")
            injected = self.server.faults.take_http_error()
            if injected:
                self._body()
                self._error(injected, f"Service Unavailable (sandbox fault: injected HTTP {injected})")
                return
            user = self._user()
            if user is None:
                self._body()
                message = "Authentication required" if "Authorization" not in self.headers else "Unable to sign in. Invalid username/password combination."
                self._error(403, message)
                return
            if method in ("PUT", "POST", "DELETE") and not self.headers.get("X-Requested-By"):
                self._body()
                self._error(400, CSRF_MESSAGE)
                return
            if not accepts_text_plain(self.headers.get("Accept", "")):
                self._body()
                self._error(406, "Not Acceptable")
                return
            if method != "GET":
                self._processed_fault = self.server.faults.take_processed_error()
            self._route(method, path[len("/api/v1"):], params, user)
        except ApiError as exc:
            self._error(exc.status, exc.message)

    def _faults(self, method: str) -> None:
        faults = self.server.faults
        if method == "POST":
            try:
                faults.configure(self._body())
            except (FaultError, TypeError, ValueError) as exc:
                raise ApiError(400, str(exc)) from None
        elif method == "DELETE":
            faults.clear()
        elif method != "GET":
            raise ApiError(405, "Method Not Allowed")
        self._send(200, faults.as_dict())

    # ---- routing -----------------------------------------------------------------------------
    ROUTES = [
        (r"/clusters", "clusters"),
        (r"/clusters/(?P<c>[^/]+)", "cluster"),
        (r"/clusters/(?P<c>[^/]+)/configurations", "configurations"),
        (r"/clusters/(?P<c>[^/]+)/configurations/service_config_versions", "service_config_versions"),
        (r"/clusters/(?P<c>[^/]+)/hosts", "hosts"),
        (r"/clusters/(?P<c>[^/]+)/hosts/(?P<h>[^/]+)", "host"),
        (r"/clusters/(?P<c>[^/]+)/hosts/(?P<h>[^/]+)/host_components", "host_components"),
        (r"/clusters/(?P<c>[^/]+)/hosts/(?P<h>[^/]+)/host_components/(?P<comp>[^/]+)", "host_component"),
        (r"/clusters/(?P<c>[^/]+)/host_components", "host_components"),
        (r"/clusters/(?P<c>[^/]+)/services", "services"),
        (r"/clusters/(?P<c>[^/]+)/services/(?P<s>[^/]+)", "service"),
        (r"/clusters/(?P<c>[^/]+)/services/(?P<s>[^/]+)/components", "components"),
        (r"/clusters/(?P<c>[^/]+)/services/(?P<s>[^/]+)/components/(?P<comp>[^/]+)", "component"),
        (r"/clusters/(?P<c>[^/]+)/requests", "requests"),
        (r"/clusters/(?P<c>[^/]+)/requests/(?P<r>\d+)", "request"),
        (r"/clusters/(?P<c>[^/]+)/requests/(?P<r>\d+)/tasks", "tasks"),
        (r"/clusters/(?P<c>[^/]+)/requests/(?P<r>\d+)/tasks/(?P<t>\d+)", "task"),
    ]

    def _route(self, method: str, path: str, params: dict, user: str) -> None:
        for pattern, name in self.ROUTES:
            match = re.fullmatch(pattern, path)
            if match:
                args = match.groupdict()
                cluster = self.server.cluster
                if "c" in args and args["c"] != cluster.name:
                    raise ApiError(404, f"The requested resource doesn't exist: Cluster not found, clusterName={args['c']}")
                handler = getattr(self, f"_{method.lower()}_{name}", None)
                if handler is None:
                    raise ApiError(405, f"Method {method} is not supported on {path}")
                handler(args, params, user)
                return
        raise ApiError(404, f"The requested resource doesn't exist: {path}")

    @property
    def shapes(self) -> Shapes:
        return Shapes(self.server.cluster, self.server.base_url)

    def _href(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}{self.path}"

    def _collection(self, items: list, kind: str, params: dict, full_by_default: bool = False) -> None:
        wanted = query.predicates(params)
        selected = query.page([item for item in items if query.matches(item, wanted)], params)
        if "fields" in params:
            fields = params["fields"].split(",")
        else:
            fields = ["*"] if full_by_default else []
        self._send(200, {"href": self._href(), "items": [query.project(item, fields, KEYS[kind]) for item in selected]})

    def _single(self, resource: dict, kind: str, params: dict, default_fields=("*",)) -> None:
        fields = params["fields"].split(",") if "fields" in params else list(default_fields)
        body = query.project(resource, fields, KEYS[kind])
        body["href"] = self._href()
        self._send(200, body)

    # ---- GET ---------------------------------------------------------------------------------
    def _get_clusters(self, args, params, user):
        self._collection([self.shapes.cluster_resource()], "cluster", params)

    def _get_cluster(self, args, params, user):
        self._single(self.shapes.cluster_resource(), "cluster", params)

    def _get_configurations(self, args, params, user):
        shapes = self.shapes
        items = [shapes.configuration(t, tag, rec) for t, tag, rec in self.server.cluster.config_versions()]
        # Ambari returns the properties when the query names a tag, otherwise only the keys.
        self._collection(items, "configuration", params, full_by_default="tag" in params)

    def _get_service_config_versions(self, args, params, user):
        shapes = self.shapes
        with self.server.cluster.lock:
            items = [shapes.service_config_version(v) for v in self.server.cluster.state["service_config_versions"]]
        self._collection(items, "service_config_version", params, full_by_default=True)

    def _get_hosts(self, args, params, user):
        self._collection([self.shapes.host(h) for h in self.server.cluster.hosts], "host", params)

    def _known_host(self, host_name: str) -> dict:
        host = self.server.cluster.host(host_name)
        if host is None:
            raise ApiError(404, f"The requested resource doesn't exist: Host not found, cluster={self.server.cluster.name}, hostname={host_name}")
        return host

    def _get_host(self, args, params, user):
        self._single(self.shapes.host(self._known_host(args["h"])), "host", params)

    def _get_host_components(self, args, params, user):
        # AmbariManagementControllerImpl.getHostComponents: a service or component named in the query that the
        # cluster lacks is ServiceNotFoundException / ServiceComponentHostNotFoundException, 404.
        service = params.get("HostRoles/service_name")
        if service is not None:
            self._known_service(service)
        component = params.get("HostRoles/component_name")
        if component is not None and component not in {c for _h, c in self.server.cluster.host_components()}:
            raise ApiError(404, f"The requested resource doesn't exist: ServiceComponentHost not found, clusterName={self.server.cluster.name}, "
                                f"serviceComponentName={component}")
        pairs = self.server.cluster.host_components()
        if "h" in args:
            self._known_host(args["h"])
            pairs = [(h, c) for h, c in pairs if h == args["h"]]
        self._collection([self.shapes.host_component(h, c) for h, c in pairs], "host_component", params)

    def _get_host_component(self, args, params, user):
        host = self._known_host(args["h"])
        if args["comp"] not in host["components"]:
            raise ApiError(404, f"The requested resource doesn't exist: ServiceComponentHost not found, hostName={args['h']}, componentName={args['comp']}")
        self._single(self.shapes.host_component(args["h"], args["comp"]), "host_component", params)

    def _known_service(self, service: str) -> str:
        if service not in self.server.cluster.services():
            raise ApiError(404, f"The requested resource doesn't exist: Service not found, clusterName={self.server.cluster.name}, serviceName={service}")
        return service

    def _get_services(self, args, params, user):
        self._collection([self.shapes.service(s) for s in self.server.cluster.services()], "service", params)

    def _get_service(self, args, params, user):
        self._single(self.shapes.service(self._known_service(args["s"])), "service", params)

    def _components_of(self, service: str) -> list:
        return sorted({c for _host, c in self.server.cluster.host_components(service)})

    def _get_components(self, args, params, user):
        service = self._known_service(args["s"])
        self._collection([self.shapes.component(service, c) for c in self._components_of(service)], "component", params)

    def _get_component(self, args, params, user):
        service = self._known_service(args["s"])
        if args["comp"] not in self._components_of(service):
            raise ApiError(404, f"The requested resource doesn't exist: ServiceComponent not found, serviceName={service}, serviceComponentName={args['comp']}")
        self._single(self.shapes.component(service, args["comp"]), "component", params)

    def _get_requests(self, args, params, user):
        self._collection([self.shapes.request(r) for r in self.server.cluster.requests()], "request", params)

    def _get_request(self, args, params, user):
        request = self.server.cluster.request(args["r"])
        self._single(self.shapes.request(request), "request", params, default_fields=REQUEST_DEFAULT_FIELDS)

    def _get_tasks(self, args, params, user):
        request = self.server.cluster.request(args["r"])
        self._collection([self.shapes.task(request, t) for t in request["tasks"]], "task", params)

    def _get_task(self, args, params, user):
        request = self.server.cluster.request(args["r"])
        task = next((t for t in request["tasks"] if str(t["id"]) == args["t"]), None)
        if task is None:
            raise ApiError(404, f"The requested resource doesn't exist: Task not found, requestId={args['r']}, taskId={args['t']}")
        self._single(self.shapes.task(request, task), "task", params)

    # ---- writes ------------------------------------------------------------------------------
    def _put_cluster(self, args, params, user):
        body = self._body()
        clusters = body.get("Clusters") if isinstance(body, dict) else None
        if not isinstance(clusters, dict) or "desired_config" not in clusters:
            raise ApiError(400, "Invalid Request: this emulator supports PUT /clusters/{name} with Clusters/desired_config only")
        entries = clusters["desired_config"]
        if isinstance(entries, dict):
            entries = [entries]
        versions = self.server.cluster.set_desired_configs(entries, user)
        shapes = self.shapes
        self._send(200, {"resources": [shapes.service_config_version(v) for v in versions]})

    def _post_requests(self, args, params, user):
        body = self._body()
        faults = self.server.faults
        cluster = self.server.cluster
        if not isinstance(body, dict):
            raise ApiError(400, "Invalid Request: the body must be a JSON object with RequestInfo and Requests/resource_filters")
        request = cluster.create_restart_request(body, fail=faults.take_request_failure(), delay_s=faults.request_delay_s,
                                                 early_completion=faults.early_completion, watch_broker=faults.watch_broker)
        self.server.executor.submit(request["id"])
        self._send(202, {"href": f"{self.shapes.cluster_href()}/requests/{request['id']}", "Requests": {"id": request["id"], "status": "Accepted"}})
