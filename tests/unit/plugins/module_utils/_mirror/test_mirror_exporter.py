# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirror exporter (_mirror/exporter.py): the metrics it names from kafka_mirror_status' and the drift report's results
and from the validation job's report, its text checked by Prometheus' own promtool, the atomic textfile, the endpoint, a
flow whose read fails, bad configurations, and the shipped entry point running without Ansible."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror import exporter
from tests.support.checkout import REPO
from tests.support import prometheus_text

FLOW = {"source": {"bootstrap_servers": ["127.0.0.1:9"]}, "target": {"bootstrap_servers": ["127.0.0.1:9"]},
        "source_alias": "primary", "target_alias": "secondary", "topics": ["orders"]}


def status():
    partition = {"topic": "orders", "remote_topic": "primary.orders", "partition": 0, "lag": 7, "has_records": True,
                 "last_offset_sync": {"upstream": 3, "downstream": 3}}
    return {"flow": "primary->secondary", "partitions": [partition, dict(partition, partition=1, lag=0, last_offset_sync=None)],
            "lag_total": 7, "lag_max": 7, "heartbeats": {"emitted_age_s": 1.5, "replicated_age_s": None},
            "checkpoints": {"orders-app": 2}, "checkpoint_age_s": {"orders-app": 4.25},
            "stale_state": [{"check": "stale_offset_syncs", "severity": "error"}], "problems": []}


def drift():
    return {"findings": [{"severity": "error"}, {"severity": "info"}],
            "topics": [{"status": "error"}, {"status": "in_sync"}, {"status": "in_sync"}]}


def values(text, name, **labels):
    return prometheus_text.values(prometheus_text.parse(text), name, **{key: str(value) for key, value in labels.items()})


def test_flow_metrics_name_what_the_readers_found():
    samples = exporter.Samples()
    exporter.flow_samples(samples, status(), drift())
    text = samples.text()
    flow = "primary->secondary"
    assert values(text, "kafka_mirror_partition_lag_records", flow=flow, partition=0, topic="orders", remote_topic="primary.orders") == [7]
    assert values(text, "kafka_mirror_lag_records", flow=flow) == [7]
    assert values(text, "kafka_mirror_partitions_without_offset_sync", flow=flow) == [1]  # partition 1: records, no sync yet
    assert values(text, "kafka_mirror_heartbeat_age_seconds", heartbeat="emitted") == [1.5]
    assert values(text, "kafka_mirror_heartbeat_age_seconds", heartbeat="replicated") == []  # none yet: no sample, not 0
    assert values(text, "kafka_mirror_checkpoint_age_seconds", group="orders-app") == [4.25]
    assert values(text, "kafka_mirror_stale_state_findings", check="stale_offset_syncs", severity="error") == [1]
    assert values(text, "kafka_mirror_stale_state_findings", check="stale_checkpoints", severity="error") == [0]
    assert values(text, "kafka_mirror_topic_drift_findings", severity="error") == [1]
    assert values(text, "kafka_mirror_topic_drift_topics", status="in_sync") == [2]


def test_partitions_without_a_sync_count_only_with_records():
    found = status()
    found["partitions"][1]["has_records"] = False
    samples = exporter.Samples()
    exporter.flow_samples(samples, found, None)
    assert values(samples.text(), "kafka_mirror_partitions_without_offset_sync") == [0]
    assert "kafka_mirror_topic_drift" not in samples.text()  # drift not read: no metric rather than zeros


def test_promtool_accepts_the_text(tmp_path):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool (Debian package prometheus; make test installs it) is not installed")
    samples = exporter.Samples()
    exporter.flow_samples(samples, dict(status(), flow='we"ird\\flow'), drift())
    exporter.validation_samples(samples, str(tmp_path / "missing.json"))
    text = samples.text()
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    # check metrics lints names too; only errors of the format would be a failure here (it exits 3 on lint advice alone).
    assert "error while linting" not in checked.stderr + checked.stdout and checked.returncode in (0, 3), checked.stderr + checked.stdout
    assert values(text, "kafka_mirror_lag_records", flow='we"ird\\flow') == [7]


@pytest.mark.parametrize("report,expected", [
    ({"passed": True, "exit_code": 0, "started_at": "2026-11-29T07:00:00+00:00"}, {"passed": 1, "exit": 0, "time": 1795935600}),
    ({"passed": False, "exit_code": 1, "started_at": "2026-11-29T07:00:00"}, {"passed": 0, "exit": 1, "time": 1795935600}),
    ({"passed": False}, None),  # no exit code: not a report of the job
    ("not json", None),
])
def test_validation_report(tmp_path, report, expected):
    path = tmp_path / "report.json"
    path.write_text(report if isinstance(report, str) else json.dumps(report))
    samples = exporter.Samples()
    exporter.validation_samples(samples, str(path))
    text = samples.text()
    if expected is None:
        assert values(text, "kafka_mirror_validation_report_present") == [0]
        assert values(text, "kafka_mirror_validation_passed") == []
    else:
        assert values(text, "kafka_mirror_validation_report_present") == [1]
        assert values(text, "kafka_mirror_validation_passed") == [expected["passed"]]
        assert values(text, "kafka_mirror_validation_exit_code") == [expected["exit"]]
        assert values(text, "kafka_mirror_validation_timestamp_seconds") == [expected["time"]]


class Broken:
    def __init__(self, params):
        raise OSError("no route to %s" % params["bootstrap_servers"][0])


def test_a_flow_that_cannot_be_read_is_down_and_the_others_still_export(tmp_path):
    logged = []
    config = {"flows": [FLOW], "validation_report": str(tmp_path / "none.json"), "textfile": "x"}
    text = exporter.collect(config, Broken, logged.append).text()
    assert values(text, "kafka_mirror_flow_up", flow="primary->secondary") == [0]
    assert values(text, "kafka_mirror_validation_report_present") == [0]
    assert values(text, "kafka_mirror_exporter_run_seconds") and values(text, "kafka_mirror_exporter_run_cpu_seconds")
    assert logged == ["flow primary->secondary: OSError: no route to 127.0.0.1:9"]


@pytest.mark.parametrize("config,message", [
    ("{", "not JSON"),
    ({"flows": [], "textfile": "/x"}, "flows must list at least one flow"),
    ({"flows": [dict(FLOW, source={})], "textfile": "/x"}, "flows[0].source needs bootstrap_servers"),
    ({"flows": [dict(FLOW, replication_policy="identity", target_alias="primary")], "textfile": "/x"}, "flows[0]: invalid options"),
    ({"flows": [FLOW]}, "give textfile, listen or both"),
    ({"flows": [FLOW], "listen": "9406"}, "listen must be address:port"),
    ({"flows": [FLOW], "textfile": "/x", "interval": 0}, "interval must be a number of seconds > 0"),
])
def test_bad_configuration_is_refused_naming_the_key(config, message):
    with pytest.raises(exporter.ExporterError, match="invalid exporter configuration|not JSON") as raised:
        exporter.load_config(config if isinstance(config, str) else json.dumps(config))
    assert message in str(raised.value)


def test_textfile_is_replaced_atomically(tmp_path):
    path = tmp_path / "kafka_mirror.prom"
    path.write_text("old\n")
    inode = path.stat().st_ino
    exporter.write_textfile(str(path), "new 1\n")
    assert path.read_text() == "new 1\n" and path.stat().st_ino != inode  # renamed over, never written in place
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kafka_mirror.prom"]


def test_loop_writes_every_interval_and_serves_the_latest_text(tmp_path, monkeypatch):
    runs = []

    def fake_collect(config, factory, log=None):
        runs.append(1)
        samples = exporter.Samples()
        samples.add("kafka_mirror_lag_records", len(runs), flow="a->b")
        if len(runs) == 3:
            stop.set()
        return samples

    monkeypatch.setattr(exporter, "collect", fake_collect)
    stop = threading.Event()
    config = {"flows": [FLOW], "textfile": str(tmp_path / "m.prom"), "listen": "127.0.0.1:0", "interval": 0.01}
    servers = []
    serve = exporter.serve
    monkeypatch.setattr(exporter, "serve", lambda listen, latest: servers.append(serve(listen, latest)) or servers[-1])
    last = exporter.run(config, None, stop=stop)
    assert len(runs) == 3 and values(last, "kafka_mirror_lag_records") == [3]
    assert (tmp_path / "m.prom").read_text() == last
    with pytest.raises(OSError):  # the endpoint closes with the loop
        urllib.request.urlopen("http://127.0.0.1:%d/metrics" % servers[0].server_address[1], timeout=2)


def test_endpoint_serves_metrics_only():
    server = exporter.serve("127.0.0.1:0", lambda: "kafka_mirror_lag_records 1\n")
    try:
        port = server.server_address[1]
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as reply:
            assert reply.read() == b"kafka_mirror_lag_records 1\n"
            assert reply.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5)
        assert missing.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


def test_shipped_entry_point_runs_without_ansible(tmp_path):
    """As the role installs it: the entry point and its archive of the three packages, packed twice to the same bytes; the
    exporter's imports need nothing else of the collection, and no Ansible (which cannot be imported here)."""
    script = REPO / "roles" / "mirrormaker2" / "files" / "kafka_mirror_exporter.py"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    module_utils = str(REPO / "plugins" / "module_utils")
    for name in ("first.zip", "module_utils.zip"):
        subprocess.run([sys.executable, str(script), "--pack", module_utils, str(tmp_path / name)], env=env, check=True, timeout=60)
    assert (tmp_path / "first.zip").read_bytes() == (tmp_path / "module_utils.zip").read_bytes()
    shutil.copy(script, tmp_path / script.name)
    (tmp_path / "config.json").write_text(json.dumps({"flows": [FLOW]}))
    blocked = "import sys, runpy; sys.modules['ansible'] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    proc = subprocess.run([sys.executable, "-c", blocked, str(tmp_path / script.name), "--config", str(tmp_path / "config.json")],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "give textfile, listen or both" in proc.stderr, proc.stderr
