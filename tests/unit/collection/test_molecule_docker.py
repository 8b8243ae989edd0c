# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`molecule syntax -s docker` runs here although no Docker daemon does.

The docker driver pings the daemon before any step, even a syntax check. A stub that answers only
`GET /version` and `GET /_ping` on a unix socket stands in for it; nothing is created, only the scenario's playbooks are
syntax-checked against the scenario's inventory. The scenario's running parts are exercised on the sandbox by
tests/integration/molecule_docker/.
"""
from __future__ import annotations

import socketserver
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import yaml

from tests.support.ansible_play import ansible_env
from tests.support.checkout import REPO


class _PingOnly(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        if self.path.endswith("/_ping"):
            status, body = 200, b"OK"
        elif self.path.endswith("/version"):  # the client negotiates its API version first
            status, body = 200, b'{"ApiVersion": "1.45", "MinAPIVersion": "1.24", "Version": "26.1.0"}'
        else:
            status, body = 404, b"{}"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_HEAD = do_GET

    def log_message(self, *args):  # keep pytest output clean
        pass


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        request, _address = super().get_request()
        return request, ("local", 0)


def test_docker_scenario_passes_molecule_syntax(tmp_path):
    socket_path = tmp_path / "docker.sock"
    server = _UnixHTTPServer(str(socket_path), _PingOnly)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        proc = subprocess.run(
            [str(Path(sys.executable).parent / "molecule"), "syntax", "-s", "docker"],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
            env=ansible_env({"DOCKER_HOST": f"unix://{socket_path}", "MOLECULE_EPHEMERAL_DIRECTORY": str(tmp_path / "ephemeral")}),
        )
    finally:
        server.shutdown()
        server.server_close()
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert "converge.yml" in output


def test_the_mirrormaker_host_unpacks_the_broker_image_release():
    scenario = yaml.safe_load((REPO / "molecule" / "docker" / "molecule.yml").read_text())
    brokers = {p["image"].rsplit(":", 1)[1] for p in scenario["platforms"] if p["image"].startswith("apache/kafka:")}
    assert brokers == {scenario["provisioner"]["inventory"]["group_vars"]["mirrormaker"]["molecule_docker_kafka_version"]}
