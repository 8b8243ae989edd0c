# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirror exporter: what MirrorMaker does not measure, as Prometheus metrics, on the MirrorMaker host (role mirrormaker2,
mirrormaker2_exporter_*).

Every figure comes from the collection's own readers, run as the modules run them: per-partition lag in records, heartbeat
ages, checkpoints per group and the stale offset-sync and checkpoint findings from _mirror.status.FlowStatus
(kafka_mirror_status), topic-settings drift from _mirror.topic_drift (kafka_mirror_topic_drift_info), the last validation's
result from the validation job's own report (roles/mirror_validation: report.json, its "passed"). This file only names them
as metrics (METRICS) and writes them out: node_exporter's textfile format, replaced atomically, and optionally the same text
on a small HTTP endpoint.

It runs without Ansible (the role copies the _mm2, _kafka and _mirror packages beside roles/mirrormaker2/files/
kafka_mirror_exporter.py and runs it with the mirror_host virtualenv's Python, which has kafka-python): `--once` for a
systemd timer, or a loop every `interval` seconds under the supervisor. Each run reads every flow afresh (MirrorMaker's
internal topics are compacted, so a full read stays small), so a topic that was deleted and created again is never judged
with what an earlier run had read.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, HTTPServer
from socketserver import ThreadingMixIn

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import FlowStatus, flow_options, status_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.topic_drift import drift_report
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.findings import SEVERITIES

# name -> (type, help). The names are the interface (README of roles/mirrormaker2, the alerting rules, the dashboard).
METRICS = {
    "kafka_mirror_flow_up": ("gauge", "1 when the exporter read the flow from both clusters in this run, 0 when the read failed."),
    "kafka_mirror_partition_lag_records": ("gauge", "Records of the source partition not yet on the target, from the last offset sync "
                                                    "and the end offsets (kafka_mirror_status)."),
    "kafka_mirror_lag_records": ("gauge", "Records of the flow not yet on the target, all partitions."),
    "kafka_mirror_lag_max_records": ("gauge", "Lag of the flow's most lagging partition, in records."),
    "kafka_mirror_partitions": ("gauge", "Source partitions the flow replicates."),
    "kafka_mirror_partitions_without_offset_sync": ("gauge", "Source partitions with records and no offset sync."),
    "kafka_mirror_heartbeat_age_seconds": ("gauge", "Age of the newest heartbeat: emitted (MirrorMaker's heartbeats topic on the "
                                                    "target) or replicated (the source's heartbeats copied to the target)."),
    "kafka_mirror_checkpoints": ("gauge", "Topic-partitions the group has checkpoints for on the target."),
    "kafka_mirror_checkpoint_age_seconds": ("gauge", "Age of the newest checkpoint MirrorMaker wrote for the group."),
    "kafka_mirror_stale_state_findings": ("gauge", "Offset syncs and checkpoints that cannot belong to the current topics (an earlier "
                                                   "deployment's, a rebuilt target's), by check and severity."),
    "kafka_mirror_problems": ("gauge", "Other problems of the read: missing remote topics, partitions MirrorMaker has not added yet, "
                                       "undecodable records."),
    "kafka_mirror_topic_drift_findings": ("gauge", "Topic-settings differences between source and remote topics, by severity "
                                                   "(kafka_mirror_topic_drift_info)."),
    "kafka_mirror_topic_drift_topics": ("gauge", "Replicated topics by drift status (in_sync, missing, or their worst finding)."),
    "kafka_mirror_validation_report_present": ("gauge", "1 when the validation report exists and could be read."),
    "kafka_mirror_validation_passed": ("gauge", "1 when the last validation found the mirror complete, 0 when it failed."),
    "kafka_mirror_validation_exit_code": ("gauge", "The last validation's exit code: 0 passed, 1 defects, 2 could not validate."),
    "kafka_mirror_validation_timestamp_seconds": ("gauge", "When the last validation started (Unix time)."),
    "kafka_mirror_exporter_last_run_timestamp_seconds": ("gauge", "When this exporter's run ended (Unix time)."),
    "kafka_mirror_exporter_run_seconds": ("gauge", "Wall time of this exporter's run."),
    "kafka_mirror_exporter_run_cpu_seconds": ("gauge", "CPU time (user and system) of this exporter's run."),
}
# A flow's status reads give up after this many seconds rather than kafka_mirror_status' 300: the exporter runs every minute,
# and a run that outlasts its interval only delays the next one.
STATUS_TIMEOUT_S = 30


class ExporterError(Exception):
    """A configuration the exporter cannot run with; the message names the key."""


def load_config(text):
    """The exporter's configuration (JSON, written by the mirrormaker2 role), checked; raises ExporterError."""
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise ExporterError("the configuration is not JSON: %s" % exc) from exc
    problems = []
    flows = config.get("flows")
    if not isinstance(flows, list) or not flows:
        problems.append("flows must list at least one flow")
    for index, flow in enumerate(flows if isinstance(flows, list) else []):
        params = flow_params(flow)
        for key in ("source", "target"):
            if not isinstance(flow.get(key), dict) or not flow[key].get("bootstrap_servers"):
                problems.append("flows[%d].%s needs bootstrap_servers" % (index, key))
        try:
            flow_options(params)
        except Exception as exc:  # pylint: disable=broad-except  # MirrorStatusError, named with the flow
            problems.append("flows[%d]: %s" % (index, exc))
    if not config.get("textfile") and not config.get("listen"):
        problems.append("give textfile, listen or both: the metrics must go somewhere")
    if config.get("listen") and ":" not in str(config["listen"]):
        problems.append("listen must be address:port, got %r" % config["listen"])
    if not isinstance(config.get("interval", 60), (int, float)) or config.get("interval", 60) <= 0:
        problems.append("interval must be a number of seconds > 0")
    if problems:
        raise ExporterError("invalid exporter configuration: " + "; ".join(problems))
    return config


def flow_params(flow):
    """kafka_mirror_status' parameters for one flow of the configuration (its keys are that module's options)."""
    spec = status_argument_spec()
    params = dict(_defaults(spec), timeout=STATUS_TIMEOUT_S)
    params.update({key: value for key, value in flow.items() if key != "target"})
    params.update(_connection(flow.get("target")))
    params["source"] = dict(_defaults(spec["source"]["options"]), **_connection(flow.get("source")))
    return params


def _defaults(spec):
    """What AnsibleModule fills in for options left out: each option's default, else None."""
    return {name: option.get("default") for name, option in spec.items()}


def _connection(options):
    """A cluster's connection options; bootstrap_servers given as one string is split as the modules' argument spec splits it."""
    options = dict(options or {})
    if isinstance(options.get("bootstrap_servers"), str):
        options["bootstrap_servers"] = [part.strip() for part in options["bootstrap_servers"].split(",") if part.strip()]
    return options


class _Opened:
    """A connection already open, handed to code that opens its own with `with factory(params) as connection`."""

    def __init__(self, connection):
        self.connection = connection

    def __enter__(self):
        return self.connection

    def __exit__(self, *exc_info):
        return False


class Samples:
    """The samples of one run: {metric name: [(labels, value)]}, rendered in METRICS order."""

    def __init__(self):
        self.samples = {}

    def add(self, name, value, **labels):
        if name not in METRICS:
            raise KeyError("metric %s is not in METRICS" % name)
        if value is not None:
            self.samples.setdefault(name, []).append((labels, float(value)))

    def text(self):
        """Prometheus' text exposition format (0.0.4), which node_exporter's textfile collector reads too."""
        lines = []
        for name, (kind, help_text) in METRICS.items():
            if name not in self.samples:
                continue
            lines.append("# HELP %s %s" % (name, help_text.replace("\\", "\\\\").replace("\n", "\\n")))
            lines.append("# TYPE %s %s" % (name, kind))
            for labels, value in self.samples[name]:
                rendered = ",".join('%s="%s"' % (key, _escape(val)) for key, val in sorted(labels.items()))
                lines.append("%s%s %s" % (name, "{%s}" % rendered if rendered else "", _number(value)))
        return "\n".join(lines) + "\n"


def _escape(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value):
    return str(int(value)) if value == int(value) and abs(value) < 2 ** 53 else repr(value)


def flow_samples(samples, status, drift):
    """Add one flow's metrics: `status` as FlowStatus.read() returns it, `drift` as drift_report() does (None: not read)."""
    flow = {"flow": status["flow"]}
    for partition in status["partitions"]:
        samples.add("kafka_mirror_partition_lag_records", partition["lag"], topic=partition["topic"], remote_topic=partition["remote_topic"],
                    partition=partition["partition"], **flow)
    samples.add("kafka_mirror_lag_records", status["lag_total"], **flow)
    samples.add("kafka_mirror_lag_max_records", status["lag_max"], **flow)
    samples.add("kafka_mirror_partitions", len(status["partitions"]), **flow)
    samples.add("kafka_mirror_partitions_without_offset_sync",
                sum(1 for p in status["partitions"] if p["has_records"] and not p["last_offset_sync"]), **flow)
    for kind in ("emitted", "replicated"):
        samples.add("kafka_mirror_heartbeat_age_seconds", status["heartbeats"].get(kind + "_age_s"), heartbeat=kind, **flow)
    for group, count in sorted(status["checkpoints"].items()):
        samples.add("kafka_mirror_checkpoints", count, group=group, **flow)
    for group, age in sorted(status.get("checkpoint_age_s", {}).items()):
        samples.add("kafka_mirror_checkpoint_age_seconds", age, group=group, **flow)
    for check in ("stale_offset_syncs", "stale_checkpoints"):
        for severity in SEVERITIES:
            samples.add("kafka_mirror_stale_state_findings",
                        sum(1 for item in status["stale_state"] if item["check"] == check and item["severity"] == severity),
                        check=check, severity=severity, **flow)
    samples.add("kafka_mirror_problems", len(status["problems"]), **flow)
    if drift is not None:
        for severity in SEVERITIES:
            samples.add("kafka_mirror_topic_drift_findings", sum(1 for item in drift["findings"] if item["severity"] == severity),
                        severity=severity, **flow)
        statuses = {}
        for topic in drift["topics"]:
            statuses[topic["status"]] = statuses.get(topic["status"], 0) + 1
        for name in sorted(set(statuses) | {"in_sync", "missing"} | set(SEVERITIES)):
            samples.add("kafka_mirror_topic_drift_topics", statuses.get(name, 0), status=name, **flow)


def validation_samples(samples, path):
    """The validation job's report (report.json as roles/mirror_validation leaves it on the host): passed, exit code, start."""
    if not path:
        return
    try:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
        passed, code = bool(report["passed"]), int(report["exit_code"])
    except (OSError, ValueError, KeyError, TypeError):
        samples.add("kafka_mirror_validation_report_present", 0, report=path)
        return
    samples.add("kafka_mirror_validation_report_present", 1, report=path)
    samples.add("kafka_mirror_validation_passed", int(passed), report=path)
    samples.add("kafka_mirror_validation_exit_code", code, report=path)
    samples.add("kafka_mirror_validation_timestamp_seconds", _timestamp(report.get("started_at")) or os.path.getmtime(path), report=path)


def _timestamp(text):
    try:
        moment = datetime.fromisoformat(str(text))
    except (TypeError, ValueError):
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


def collect(config, connection_factory, log=None):
    """One run over every flow of `config`; returns the Samples. A flow whose read fails gets kafka_mirror_flow_up 0 and
    the error goes to `log` (a callable); the other flows are read all the same."""
    samples = Samples()
    started, cpu = time.monotonic(), time.process_time()
    for flow in config["flows"]:
        params = flow_params(flow)
        name = "%s->%s" % (params["source_alias"], params["target_alias"])
        try:
            options = flow_options(params)
            with connection_factory(params["source"]) as source, connection_factory(params) as target:
                status = FlowStatus(source, target, options).read()

                def opened(wanted, _source=source, _target=target):
                    return _Opened(_source if wanted is params["source"] else _target)

                drift = drift_report(params, opened) if config.get("topic_drift", True) else None
        except Exception as exc:  # pylint: disable=broad-except  # one flow's failure must not hide the others' metrics
            samples.add("kafka_mirror_flow_up", 0, flow=name)
            if log:
                log("flow %s: %s: %s" % (name, exc.__class__.__name__, exc))
            continue
        samples.add("kafka_mirror_flow_up", 1, flow=name)
        flow_samples(samples, status, drift)
    validation_samples(samples, config.get("validation_report"))
    samples.add("kafka_mirror_exporter_run_seconds", round(time.monotonic() - started, 3))
    samples.add("kafka_mirror_exporter_run_cpu_seconds", round(time.process_time() - cpu, 3))
    samples.add("kafka_mirror_exporter_last_run_timestamp_seconds", round(time.time(), 3))
    return samples


def write_textfile(path, text):
    """Replace `path` with `text` atomically (a temporary file in its directory, renamed over it), as node_exporter's
    textfile collector needs: it must never read half a file."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".kafka_mirror.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


class _Server(ThreadingMixIn, HTTPServer):
    daemon_threads = True


def serve(listen, latest):
    """An HTTP endpoint on `listen` (address:port) that answers GET /metrics with latest() (started in a daemon thread)."""
    host, port = listen.rsplit(":", 1)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)  # pylint: disable=invalid-name
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404, "only /metrics")
                return
            body = latest().encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = _Server((host.strip("[]"), int(port)), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run(config, connection_factory, once=False, log=None, stop=None):
    """Collect, write the textfile (and serve it), then, unless `once`, again every config["interval"] seconds until `stop`
    (a threading.Event) is set."""
    latest = [""]
    server = serve(config["listen"], lambda: latest[0]) if config.get("listen") else None
    stop = stop or threading.Event()
    try:
        while True:
            started = time.monotonic()
            latest[0] = collect(config, connection_factory, log).text()
            if config.get("textfile"):
                write_textfile(config["textfile"], latest[0])
            if once or stop.wait(max(0.0, float(config.get("interval", 60)) - (time.monotonic() - started))):
                return latest[0]
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()


def main(argv=None):
    parser = argparse.ArgumentParser(description="Export what MirrorMaker does not measure as Prometheus metrics (kafkaops.mirror).")
    parser.add_argument("--config", required=True, help="the exporter's JSON configuration (written by the mirrormaker2 role)")
    parser.add_argument("--once", action="store_true", help="one run, then exit (a systemd timer starts it)")
    args = parser.parse_args(argv)
    from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection  # pylint: disable=import-outside-toplevel

    try:
        with open(args.config, encoding="utf-8") as handle:
            config = load_config(handle.read())
    except (OSError, ExporterError) as exc:
        sys.stderr.write("kafka-mirror-exporter: %s\n" % exc)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def log(message):
        sys.stderr.write("kafka-mirror-exporter: %s\n" % message)
        sys.stderr.flush()

    run(config, KafkaConnection, once=args.once, log=log, stop=stop)
    return 0
