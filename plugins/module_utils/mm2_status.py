# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# Apache License 2.0
"""Health of one MirrorMaker 2 flow, read from the clusters (module kafka_mirror_status).

Lag is counted in records from what real MirrorMaker 2 leaves behind, not from offsets being
equal (they are not: compaction, transaction markers, retention and restarts shift downstream
offsets). The latest offset sync (u, d) of a partition says upstream u was written at downstream d;
every record after d on the target is a later upstream record, so the source is replicated up to
u + (target_end - d) and the lag is source_end - that. Upstream gaps (compaction, markers) can only
make this overestimate the lag, never hide a missing record.
"""
from __future__ import annotations

import time

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.kafkaops.mirror.plugins.module_utils.kafka_client import kafka_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_filters import MirrorFilter
from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_records import (
    Checkpoint,
    Heartbeat,
    MirrorRecordError,
    OffsetSync,
    ReplicationPolicy,
    checkpoints_topic,
    heartbeats_topic,
    offset_syncs_topic,
)

try:
    from kafka import TopicPartition
except ImportError:
    TopicPartition = None  # kafka_client.ensure_kafka_python() reports the missing library

HEARTBEAT_TAIL = 200
CONDITIONS = ("heartbeats", "offset_syncs", "lag")


def partition_lag(source_begin, source_end, target_begin, target_end, last_sync):
    """Records of one source partition not yet on the target (see the module docstring)."""
    if source_end <= source_begin:
        return 0
    if last_sync is None:
        return max(0, (source_end - source_begin) - (target_end - target_begin))
    upstream, downstream = last_sync
    replicated_to = upstream + max(0, target_end - downstream)
    return max(0, source_end - replicated_to)


class TopicReader:
    """Reads whole (small, compacted) internal topics or their tail through one connection's consumer."""

    def __init__(self, connection):
        self.connection = connection
        self._consumer = None

    def consumer(self):
        if self._consumer is None:
            self._consumer = self.connection.consumer()
        return self._consumer

    def partitions(self, topic):
        parts = self.consumer().partitions_for_topic(topic)
        return sorted(parts) if parts else []

    def offsets(self, tps):
        consumer = self.consumer()
        return consumer.beginning_offsets(tps), consumer.end_offsets(tps)

    def records(self, topic, tail=None, timeout_s=30.0):
        parts = self.partitions(topic)
        if not parts:
            return []
        tps = [TopicPartition(topic, p) for p in parts]
        begins, ends = self.offsets(tps)
        consumer = self.consumer()
        consumer.assign(tps)
        remaining = {}
        for tp in tps:
            start = begins[tp] if tail is None else max(begins[tp], ends[tp] - tail)
            consumer.seek(tp, start)
            if ends[tp] > start:
                remaining[tp] = ends[tp]
        out, deadline = [], time.monotonic() + timeout_s
        while remaining and time.monotonic() < deadline:
            for tp, batch in consumer.poll(timeout_ms=500).items():
                out.extend(batch)
                if tp in remaining and consumer.position(tp) >= remaining[tp]:
                    del remaining[tp]
        return out


def _decode_all(records, codec, problems, topic):
    decoded = []
    for record in records:
        try:
            decoded.append((record, codec.decode(record.key, record.value)))
        except MirrorRecordError as exc:
            problems.append("%s offset %d: %s" % (topic, record.offset, exc))
    return decoded


def collect(source, target, flow, now_ms=None):
    """Status of one flow; `source`/`target` are KafkaConnection objects, `flow` the module's options."""
    policy, mirror_filter = flow["policy"], flow["filter"]
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    source_reader, target_reader = TopicReader(source), TopicReader(target)
    problems = []
    # Topics are only read after checking they exist: a metadata request for a missing topic could auto-create it.
    existing_source, existing_remote = set(source.admin().list_topics()), set(target.admin().list_topics())
    on_source = flow["offset_syncs_topic_location"] == "source"
    syncs_reader, syncs_existing = (source_reader, existing_source) if on_source else (target_reader, existing_remote)
    syncs_topic = offset_syncs_topic(flow["target_alias"])
    last_sync = {}
    syncs_records = syncs_reader.records(syncs_topic) if syncs_topic in syncs_existing else []
    for _record, sync in _decode_all(syncs_records, OffsetSync, problems, syncs_topic):
        last_sync[(sync.topic, sync.partition)] = (sync.upstream_offset, sync.downstream_offset)

    topics = sorted(t for t in existing_source if mirror_filter.replicates_topic(t) and not mirror_filter.is_heartbeats(t))
    source_tps = [TopicPartition(t, p) for t in topics for p in source_reader.partitions(t)]
    remote_tps = [TopicPartition(policy.remote_topic(flow["source_alias"], tp.topic), tp.partition) for tp in source_tps]
    remote_present = [tp for tp in remote_tps if tp.topic in existing_remote]
    source_begin, source_end = source_reader.offsets(source_tps) if source_tps else ({}, {})
    target_begin, target_end = target_reader.offsets(remote_present) if remote_present else ({}, {})
    partitions = []
    for tp, remote in zip(source_tps, remote_tps):
        sync = last_sync.get((tp.topic, tp.partition))
        t_begin, t_end = target_begin.get(remote, 0), target_end.get(remote, 0)
        entry = {
            "topic": tp.topic,
            "remote_topic": remote.topic,
            "partition": tp.partition,
            "source_end_offset": source_end[tp],
            "target_end_offset": t_end if remote.topic in existing_remote else None,
            "last_offset_sync": {"upstream": sync[0], "downstream": sync[1]} if sync else None,
            "lag": partition_lag(source_begin[tp], source_end[tp], t_begin, t_end, sync),
            "has_records": source_end[tp] > source_begin[tp],
        }
        partitions.append(entry)
        if remote.topic not in existing_remote:
            problems.append("remote topic %s (of %s) does not exist on %s" % (remote.topic, tp.topic, flow["target_alias"]))

    heartbeats = {"emitted_age_s": None, "replicated_age_s": None}
    emitted_records = target_reader.records(heartbeats_topic(), tail=HEARTBEAT_TAIL) if heartbeats_topic() in existing_remote else []
    emitted = _decode_all(emitted_records, Heartbeat, problems, heartbeats_topic())
    ours = [beat.timestamp_ms for _r, beat in emitted if (beat.source_alias, beat.target_alias) == (flow["source_alias"], flow["target_alias"])]
    if ours:
        heartbeats["emitted_age_s"] = round(max(0, now_ms - max(ours)) / 1000.0, 3)
    remote_heartbeats = policy.remote_topic(flow["source_alias"], heartbeats_topic())
    replicated = target_reader.records(remote_heartbeats, tail=HEARTBEAT_TAIL) if remote_heartbeats in existing_remote else []
    if replicated:
        heartbeats["replicated_age_s"] = round(max(0, now_ms - max(r.timestamp for r in replicated)) / 1000.0, 3)

    checkpoints = {}
    cp_topic = checkpoints_topic(flow["source_alias"])
    if cp_topic in existing_remote:
        latest = {}
        for _record, checkpoint in _decode_all(target_reader.records(cp_topic), Checkpoint, problems, cp_topic):
            if mirror_filter.replicates_group(checkpoint.group):
                latest[(checkpoint.group, checkpoint.topic, checkpoint.partition)] = checkpoint
        for group, _topic, _partition in latest:
            checkpoints[group] = checkpoints.get(group, 0) + 1

    lags = [p["lag"] for p in partitions]
    return {
        "flow": "%s->%s" % (flow["source_alias"], flow["target_alias"]),
        "partitions": partitions,
        "topics": sorted({p["topic"] for p in partitions}),
        "lag_total": sum(lags),
        "lag_max": max(lags) if lags else 0,
        "heartbeats": heartbeats,
        "checkpoints": checkpoints,
        "offset_syncs_topic": syncs_topic,
        "problems": problems,
    }


def unmet_conditions(status, wait_for, max_lag, max_heartbeat_age_s):
    """What keeps the flow from being healthy, as messages (empty when healthy)."""
    unmet = []
    if "heartbeats" in wait_for:
        ages = [age for age in status["heartbeats"].values() if age is not None]
        if not ages:
            unmet.append("no heartbeat from %s on the target yet" % status["flow"])
        elif min(ages) > max_heartbeat_age_s:
            unmet.append("newest heartbeat is %.1f s old (limit %d s)" % (min(ages), max_heartbeat_age_s))
    if "offset_syncs" in wait_for:
        missing = ["%s-%d" % (p["topic"], p["partition"]) for p in status["partitions"] if p["has_records"] and not p["last_offset_sync"]]
        if missing:
            unmet.append("no offset sync yet for %d partition(s) with records: %s" % (len(missing), ", ".join(missing[:10])))
    if "lag" in wait_for:
        over = [p for p in status["partitions"] if p["lag"] > max_lag]
        if over:
            worst = max(over, key=lambda p: p["lag"])
            unmet.append("%d partition(s) lag more than %d records (worst %s-%d: %d)" % (len(over), max_lag, worst["topic"], worst["partition"], worst["lag"]))
    missing_remote = [p for p in status["problems"] if "does not exist" in p]
    if missing_remote and "lag" in wait_for:
        unmet.append(missing_remote[0] if len(missing_remote) == 1 else "%d remote topics do not exist yet" % len(missing_remote))
    return unmet


def wait_until_healthy(read_status, wait_for, max_lag, max_heartbeat_age_s, timeout_s, interval_s, clock=time.monotonic, sleep=time.sleep):
    """Poll read_status() until no condition is unmet or the timeout passes; returns (status, unmet, progress)."""
    start = clock()
    progress = []
    while True:
        status = read_status()
        unmet = unmet_conditions(status, wait_for, max_lag, max_heartbeat_age_s)
        elapsed = round(clock() - start, 1)
        progress.append({"elapsed_s": elapsed, "lag_total": status["lag_total"], "lag_max": status["lag_max"], "unmet": unmet})
        if not unmet or elapsed >= timeout_s:
            return status, unmet, progress
        sleep(min(interval_s, max(0.0, timeout_s - elapsed)))


class MirrorStatusError(Exception):
    """Bad options, or the flow did not become healthy in time; `result` carries the last status."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result or {}


def _validated_source(params, no_log_values):
    validator = ArgumentSpecValidator(kafka_connection_argument_spec())
    validated = validator.validate(params["source"] or {})
    no_log_values.update(validated._no_log_values)  # pylint: disable=protected-access
    if validated.error_messages:
        raise MirrorStatusError("option source (connection to cluster %s): %s" % (params["source_alias"], "; ".join(validated.error_messages)))
    return validated.validated_parameters


def flow_options(params):
    """The flow description collect() needs, validated before any connection is made."""
    errors = []
    for name in ("source_alias", "target_alias"):
        if not params[name].strip():
            errors.append("%s must not be empty" % name)
    if params["source_alias"] == params["target_alias"]:
        errors.append("source_alias and target_alias are both %r" % params["source_alias"])
    for name in ("max_lag", "max_heartbeat_age"):
        if params[name] < 0:
            errors.append("%s must be >= 0, got %d" % (name, params[name]))
    for name in ("timeout", "poll_interval"):
        if params[name] <= 0:
            errors.append("%s must be > 0, got %d" % (name, params[name]))
    try:
        policy = ReplicationPolicy(params["replication_policy"], params["replication_policy_separator"])
        mirror_filter = MirrorFilter(policy, params["target_alias"], params["topics"], params["topics_exclude"],
                                     params["groups"], params["groups_exclude"])
    except ValueError as exc:
        errors.append(str(exc))
    if errors:
        raise MirrorStatusError("invalid options, nothing was read: " + "; ".join(errors))
    return {"source_alias": params["source_alias"], "target_alias": params["target_alias"], "policy": policy, "filter": mirror_filter,
            "offset_syncs_topic_location": params["offset_syncs_topic_location"]}


def run_status(params, connection_factory, no_log_values):
    """What module kafka_mirror_status returns; raises MirrorStatusError when waiting timed out."""
    source_params = _validated_source(params, no_log_values)
    flow = flow_options(params)
    wait_for = params["wait_for"] if params["wait"] else []
    with connection_factory(source_params) as source, connection_factory(params) as target:
        def read():
            return collect(source, target, flow)

        if params["wait"]:
            status, unmet, progress = wait_until_healthy(read, wait_for, params["max_lag"], params["max_heartbeat_age"],
                                                         params["timeout"], params["poll_interval"])
        else:
            status = read()
            unmet = unmet_conditions(status, CONDITIONS, params["max_lag"], params["max_heartbeat_age"])
            progress = []
    result = dict(status, healthy=not unmet, unmet=unmet, progress=progress)
    if params["wait"] and unmet:
        raise MirrorStatusError("flow %s not healthy after %d s: %s. Check the MirrorMaker 2 service and its log on this host."
                                % (status["flow"], params["timeout"], "; ".join(unmet)), result)
    return result
