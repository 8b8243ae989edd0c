# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real Prometheus (Debian's package, /usr/bin/prometheus; `make test` installs it) as a child process of the test: its own
configuration and storage in a temporary directory, listening on a 127.x address, stopped by its PID. Never the system
service the package ships. Its HTTP API is read as an operator's tools read it: /api/v1/alerts, /api/v1/query, /api/v1/targets."""
from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import yaml

BINARY = shutil.which("prometheus") or "/usr/bin/prometheus"


def available() -> bool:
    return Path(BINARY).is_file()


@contextmanager
def running(directory: Path, listen: str, scrape_targets: dict, rules: Path, interval: str = "1s"):
    """A Prometheus scraping {job: [host:port]} and evaluating `rules` every `interval`; yields its base URL."""
    directory.mkdir(parents=True, exist_ok=True)
    config = {"global": {"scrape_interval": interval, "evaluation_interval": interval, "scrape_timeout": interval},
              "rule_files": [str(rules)],
              "scrape_configs": [{"job_name": job, "static_configs": [{"targets": targets}]} for job, targets in scrape_targets.items()]}
    (directory / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = (directory / "prometheus.log").open("w")
    process = subprocess.Popen([BINARY, f"--config.file={directory / 'prometheus.yml'}", f"--storage.tsdb.path={directory / 'data'}",
                                f"--web.listen-address={listen}", "--storage.tsdb.retention.time=1h", "--log.level=warn"],
                               stdout=log, stderr=subprocess.STDOUT)
    url = f"http://{listen}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"prometheus did not start: {(directory / 'prometheus.log').read_text()[-2000:]}")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def api(url: str, path: str, **params) -> dict:
    query = ("?" + urllib.parse.urlencode(params)) if params else ""
    with urllib.request.urlopen(f"{url}/api/v1/{path}{query}", timeout=10) as reply:
        answer = json.loads(reply.read())
    assert answer["status"] == "success", answer
    return answer["data"]


def firing(url: str) -> dict:
    """{alert name: [labels of each firing instance]} as Prometheus' /api/v1/alerts has them now."""
    found = {}
    for alert in api(url, "alerts")["alerts"]:
        if alert["state"] == "firing":
            found.setdefault(alert["labels"]["alertname"], []).append(alert["labels"])
    return found


def query(url: str, expr: str) -> list:
    """[(labels, float value)] of an instant query."""
    return [(item["metric"], float(item["value"][1])) for item in api(url, "query", query=expr)["result"]]
