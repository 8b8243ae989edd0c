# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Health of one MirrorMaker 2 flow, read from the clusters (module kafka_mirror_status).

Lag is counted in records from what real MirrorMaker 2 leaves behind, not from offsets being
equal (they are not: compaction, transaction markers, retention and restarts shift downstream
offsets). The latest offset sync (u, d) of a partition says upstream u was written at downstream d;
every record after d on the target is a later upstream record, so the source is replicated up to
u + 1 + (records on the target after d) and the lag is source_end - that. Upstream gaps (compaction,
markers) can only make this overestimate the lag, never hide a missing record.

Records on the target after d: MirrorMaker 2 before 3.5 writes every remote partition without gaps, so
they are target_end - d - 1 (offsets). From 3.5 it can write them in transactions
(`<target>.exactly.once.source.support = enabled`, KIP-618): each commit marker takes an offset in
every partition it touched and an aborted attempt leaves records no consumer gets, so offsets would
count records that are not there and read lag 0 while records are still missing. For 3.5+ (and an
unknown release) they are counted by a read_committed consumer (markers and aborted records are not
returned; it reads up to the last stable offset). That read is short: from 3.4.1 PartitionState.update
(MirrorSourceTask; OffsetSyncWriter from 3.7) emits a sync once downstream is offset.lag.max past the last one.
"""
from __future__ import annotations

import time
from collections import Counter

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.internal_topic_reader import InternalTopicReader
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_admin import existing_partitions
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_report import last_stable_offsets, partition_offsets
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.catch_up import CATCHING_UP, classify
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.catch_up import sample as catch_up_sample
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.flow_arguments import flow_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.flow_result import flow_result
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.mm1_status import MM1_CONDITIONS, Mm1FlowStatus
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.stale_state import SyncTrail, stale_state_findings
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.wait import CONDITIONS
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.flow_options import flow_names
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import OFFSET_SYNCS_LOCATIONS
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint, Heartbeat, OffsetSync
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.selection import MirrorFilter
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import FEATURES

try:
    from kafka import TopicPartition
except ImportError:
    TopicPartition = None  # _kafka.client.ensure_kafka_python() reports the missing library

HEARTBEAT_TAIL = 200


def partition_lag(source_begin, source_end, target_begin, target_end, last_sync, target_records=None):
    """Records of one source partition not yet on the target (see the module docstring).

    target_records: the records on the target after the last sync's downstream offset (from target_begin when there is no
    sync), counted; None when the target's offsets stand for records (MirrorMaker 2 before 3.5 leaves no gaps).
    """
    if source_end <= source_begin:
        return 0
    if last_sync is None:
        copied = target_end - target_begin if target_records is None else target_records
        return max(0, (source_end - source_begin) - copied)
    upstream, downstream = last_sync
    if target_records is None:
        replicated_to = upstream + max(0, target_end - downstream)
    else:
        replicated_to = upstream + (1 + target_records if target_end > downstream else 0)
    return max(0, source_end - replicated_to)


def may_write_transactions(version):
    """Whether MirrorMaker 2 of `version` (None: unknown) can write the target in transactions (exactly-once, KIP-618)."""
    return version is None or tuple(version) >= FEATURES["exactly_once"][0]


class RecordCounter:
    """Counts the records of partitions from an offset up to their end as a read_committed consumer sees them (transaction
    markers and aborted records take offsets but are no records). A partition counted again from the same offset reads only
    what was appended since."""

    def __init__(self, connection, timeout_s=30.0):
        self.connection, self.timeout_s = connection, timeout_s
        self._consumer = None
        self._counted = {}  # TopicPartition -> (start, counted up to, count)

    def count(self, starts):
        """{tp: records from starts[tp] up to the last stable offset}; raises MirrorStatusError when the read times out."""
        if not starts:
            return {}
        if self._consumer is None:
            self._consumer = self.connection.consumer(isolation_level="read_committed")
        ends = last_stable_offsets(self.connection.admin(), sorted(starts))
        for tp, start in starts.items():
            if self._counted.get(tp, (None,))[0] != start:
                self._counted[tp] = (start, start, 0)
        remaining = {tp: ends[tp] for tp in starts if self._counted[tp][1] < ends[tp]}
        if remaining:
            self._read(remaining)
        return {tp: self._counted[tp][2] for tp in starts}

    def _read(self, ends):
        self._consumer.assign(sorted(ends))
        for tp in ends:
            self._consumer.seek(tp, self._counted[tp][1])
        deadline = time.monotonic() + self.timeout_s
        while ends:
            if time.monotonic() > deadline:
                raise MirrorStatusError(
                    "counting the records of %s on the target after the last offset sync took more than %d s. Before Kafka 3.4.1 "
                    "MirrorMaker 2 emits about one sync per partition, so that tail is the whole copy: set mirrormaker_version "
                    "(below 3.5 nothing is counted, there are no transactions); otherwise check the target cluster"
                    % (", ".join("%s-%d" % (tp.topic, tp.partition) for tp in sorted(ends)), self.timeout_s))
            batches = self._consumer.poll(timeout_ms=200)
            for tp in list(ends):
                start, _upto, count = self._counted[tp]
                count += sum(1 for record in batches.get(tp, []) if record.offset < ends[tp])
                position = self._consumer.position(tp)
                self._counted[tp] = (start, min(position, ends[tp]), count)
                if position >= ends[tp]:
                    del ends[tp]


class FlowStatus:
    """What MirrorMaker 2 left on both clusters for one flow; read() can be called repeatedly and reads only what is new."""

    def __init__(self, source, target, flow):
        self.source, self.target = source, target
        self.names, self.filter, self.version = flow["names"], flow["filter"], flow.get("version")
        self.source_alias, self.target_alias = self.names.source_alias, self.names.target_alias
        self.syncs_topic = self.names.offset_syncs_topic
        self.checkpoints_topic = self.names.checkpoints_topic
        self.remote_heartbeats = self.names.remote_heartbeats_topic
        self._readers = {}
        self._target_records = RecordCounter(target) if may_write_transactions(self.names.policy.version) else None
        self.sync_trail = SyncTrail()
        self.latest_checkpoints = {}
        self.checkpoint_written_ms = {}  # group -> timestamp of its newest checkpoint record
        self.emitted_heartbeat_ms = None
        self.replicated_heartbeat_ms = None
        self.decode_problems = []

    def _reader(self, side, topic, existing, tail=None):
        """The reader of a topic (_kafka.internal_topic_reader), or None while it does not exist (a metadata request for it could
        auto-create it)."""
        if topic not in existing:
            return None
        key = (side, topic)
        if key not in self._readers:
            self._readers[key] = InternalTopicReader(self.source if side == "source" else self.target, topic, tail)
        return self._readers[key]

    def _decoded(self, side, topic, existing, codec, tail=None):
        """New records of one of MM2's internal topics, decoded (undecodable ones go to decode_problems)."""
        reader = self._reader(side, topic, existing, tail)
        if reader is None:
            return []
        decoded, problems = reader.new_decoded(codec)
        self.decode_problems.extend(problems)
        return decoded

    def _offsets(self, side, tps):
        return partition_offsets((self.source if side == "source" else self.target).admin(), tps)

    def _syncs_side(self, existing_source, existing_target):
        """(side, the topics existing there) of the cluster that holds the offset-syncs topic."""
        if self.names.offset_syncs_location == "source":
            return "source", existing_source
        return "target", existing_target

    def _read_internal_topics(self, existing_source, existing_target):
        side, existing = self._syncs_side(existing_source, existing_target)
        for sync in self._decoded(side, self.syncs_topic, existing, OffsetSync):
            # The topic holds the syncs of every topic of this source and target; the flow's data topics are the ones measured.
            if self.filter.replicates_topic(sync.topic) and not self.filter.is_heartbeats(sync.topic):
                self.sync_trail.add(sync)
        beats = self._decoded("target", self.names.heartbeats_topic, existing_target, Heartbeat, tail=HEARTBEAT_TAIL)
        ours = [beat.timestamp_ms for beat in beats if (beat.source_alias, beat.target_alias) == (self.source_alias, self.target_alias)]
        if ours:
            self.emitted_heartbeat_ms = max(ours + [self.emitted_heartbeat_ms or 0])
        # The replicated heartbeats are a data topic: their record timestamps are what counts, they are not decoded.
        reader = self._reader("target", self.remote_heartbeats, existing_target, tail=HEARTBEAT_TAIL)
        replicated = reader.new_records() if reader else []
        if replicated:
            self.replicated_heartbeat_ms = max([r.timestamp for r in replicated] + [self.replicated_heartbeat_ms or 0])
        reader = self._reader("target", self.checkpoints_topic, existing_target)
        checkpoints, problems = reader.new_decoded_timed(Checkpoint) if reader else ([], [])
        self.decode_problems.extend(problems)
        for checkpoint, written_ms in checkpoints:
            if self.filter.replicates_group(checkpoint.group):
                self.latest_checkpoints[(checkpoint.group, checkpoint.topic, checkpoint.partition)] = checkpoint
                # When MirrorMaker last wrote a checkpoint of the group (the record's timestamp): its checkpoint age.
                self.checkpoint_written_ms[checkpoint.group] = max(written_ms, self.checkpoint_written_ms.get(checkpoint.group, written_ms))

    def _count_target_records(self, syncs, target_begin):
        """{remote tp: records after its last sync (after its beginning without one)} when the target may hold transactions.

        syncs: {remote tp of an existing remote topic: its last offset sync (u, d) or None}."""
        if self._target_records is None:
            return {}
        return self._target_records.count({remote: target_begin[remote] if sync is None else max(target_begin[remote], sync[1] + 1)
                                           for remote, sync in syncs.items()})

    def read(self, now_ms=None):
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        existing_source, existing_target = set(self.source.admin().list_topics()), set(self.target.admin().list_topics())
        # Records first, end offsets after: the stale-state rules rely on no record being newer than the ends it is compared with.
        self._read_internal_topics(existing_source, existing_target)
        topics = self.filter.data_topics(existing_source)
        source_tps = sorted(TopicPartition(topic, partition) for topic, partition in existing_partitions(self.source.admin(), topics))
        remote_tps = [TopicPartition(self.names.remote_topic(tp.topic), tp.partition) for tp in source_tps]
        remote_partitions = existing_partitions(self.target.admin(), {tp.topic for tp in remote_tps} & existing_target)
        present = [tp for tp in remote_tps if (tp.topic, tp.partition) in remote_partitions]
        source_begin, source_end = self._offsets("source", source_tps)
        target_begin, target_end = self._offsets("target", present)
        syncs = {remote: self.sync_trail.latest.get((tp.topic, tp.partition)) for tp, remote in zip(source_tps, remote_tps)}
        counted = self._count_target_records({remote: sync for remote, sync in syncs.items() if remote in target_end}, target_begin)
        problems = list(self.decode_problems)
        partitions = []
        for tp, remote in zip(source_tps, remote_tps):
            sync = syncs[remote]
            exists = remote in target_end
            partitions.append({
                "topic": tp.topic,
                "remote_topic": remote.topic,
                "partition": tp.partition,
                "source_end_offset": source_end[tp],
                "remote_topic_exists": exists,
                "target_end_offset": target_end.get(remote) if exists else None,
                "last_offset_sync": {"upstream": sync[0], "downstream": sync[1]} if sync else None,
                "lag": partition_lag(source_begin[tp], source_end[tp], target_begin.get(remote, 0), target_end.get(remote, 0), sync,
                                     counted.get(remote)),
                "has_records": source_end[tp] > source_begin[tp],
            })
        for topic in sorted({remote.topic for remote in remote_tps if remote.topic not in existing_target}):
            problems.append("remote topic %s (of %s) does not exist on %s" % (topic, self.names.policy.upstream_topic(topic), self.target_alias))
        for topic, source_count in sorted(Counter(remote.topic for remote in remote_tps if remote.topic in existing_target).items()):
            remote_count = sum(1 for name, _partition in remote_partitions if name == topic)
            if remote_count < source_count:
                problems.append("remote topic %s has %d of the %d partitions of %s on %s: MirrorMaker 2 adds the others at its next"
                                " topic refresh (refresh.topics.interval.seconds); their records count as lag until then"
                                % (topic, remote_count, source_count, self.names.policy.upstream_topic(topic), self.target_alias))
        checkpoints = {}
        for group, _topic, _partition in self.latest_checkpoints:
            checkpoints[group] = checkpoints.get(group, 0) + 1

        def age(timestamp_ms):
            return None if timestamp_ms is None else round(max(0, now_ms - timestamp_ms) / 1000.0, 3)

        return flow_result(
            self.source_alias, self.target_alias, partitions, topics,
            heartbeats={"emitted_age_s": age(self.emitted_heartbeat_ms), "replicated_age_s": age(self.replicated_heartbeat_ms)},
            checkpoints=checkpoints,
            checkpoint_age_s={group: age(written_ms) for group, written_ms in sorted(self.checkpoint_written_ms.items())},
            offset_syncs_topic=self.syncs_topic,
            offset_syncs_topic_exists=self.syncs_topic in self._syncs_side(existing_source, existing_target)[1],
            problems=problems,
            stale_state=stale_state_findings(self.filter, self.sync_trail, self.latest_checkpoints.values(), existing_source,
                                             {(tp.topic, tp.partition): end for tp, end in target_end.items()}, self.version),
        )


def unmet_by_condition(status, wait_for, max_lag, max_heartbeat_age_s):
    """What keeps the flow from being healthy, {kind: message} (empty when healthy). Kinds: heartbeats, offset_syncs (a
    partition without an offset sync that does not lag), offset_syncs_backlog (only partitions that still lag have none), lag,
    remote_topics, consumer_group (MirrorMaker 1's group has no member)."""
    unmet = {}
    if "heartbeats" in wait_for:
        ages = [age for age in status["heartbeats"].values() if age is not None]
        if not ages:
            unmet["heartbeats"] = "no heartbeat from %s on the target yet" % status["flow"]
        elif min(ages) > max_heartbeat_age_s:
            unmet["heartbeats"] = "newest heartbeat is %.1f s old (limit %d s)" % (min(ages), max_heartbeat_age_s)
    if "offset_syncs" in wait_for:
        missing = [p for p in status["partitions"] if p["has_records"] and not p["last_offset_sync"]]
        if missing:
            kind = "offset_syncs_backlog" if all(p["lag"] > max_lag for p in missing) else "offset_syncs"
            unmet[kind] = "no offset sync yet for %d partition(s) with records: %s" % (
                len(missing), ", ".join("%s-%d" % (p["topic"], p["partition"]) for p in missing[:10]))
            # MirrorSourceConnector creates the topic once, when it starts; its tasks' syncs go nowhere without it (unless the
            # cluster auto-creates topics), while the records themselves are copied.
            if status.get("offset_syncs_topic_exists") is False:
                unmet[kind] += ("; the offset-syncs topic %s does not exist: MirrorMaker 2 creates it when its source connector "
                                "starts and writes no offset sync without it (its log says why it could not; restarting MirrorMaker "
                                "creates it again)" % status["offset_syncs_topic"])
    if "lag" in wait_for:
        over = [p for p in status["partitions"] if p["lag"] > max_lag]
        if over:
            worst = max(over, key=lambda p: p["lag"])
            unmet["lag"] = "%d partition(s) lag more than %d records (worst %s-%d: %d)" % (len(over), max_lag, worst["topic"], worst["partition"], worst["lag"])
    missing_remote = [p for p in status["problems"] if "does not exist" in p]
    if missing_remote and "lag" in wait_for:
        unmet["remote_topics"] = missing_remote[0] if len(missing_remote) == 1 else "%d remote topics do not exist yet" % len(missing_remote)
    group = status.get("group")  # MirrorMaker 1's consumer group (_mirror.mm1_status): its only sign of life
    if group is not None and not group["members"] and "lag" in wait_for:
        unmet["consumer_group"] = "MirrorMaker 1's consumer group %s has no member on the source (state %s): MirrorMaker 1 is not consuming" % (
            group["id"], group["state"] or "unknown")
    return unmet


def unmet_conditions(status, wait_for, max_lag, max_heartbeat_age_s):
    """What keeps the flow from being healthy, as messages (empty when healthy)."""
    return list(unmet_by_condition(status, wait_for, max_lag, max_heartbeat_age_s).values())


def _retriable(exc):
    """Whether the Kafka client calls `exc` passing (kafka-python's KafkaError.retriable: a leader moving, a request timing out,
    a broker restarting), as a rolling restart of either cluster causes while the wait runs."""
    return bool(getattr(exc, "retriable", False))


def wait_until_healthy(read_status, wait_for, max_lag, max_heartbeat_age_s, timeout_s, interval_s, clock=time.monotonic, sleep=time.sleep,
                       samples=None):
    """Poll read_status() until no condition is unmet or the timeout passes; returns (status, unmet, progress). Each read's
    _mirror.catch_up.sample() is appended to `samples` when given.

    A read that fails with an error the client calls retriable is a poll without an answer, not the end of the wait: its
    error goes into progress (`read_error`) and the next poll reads again. At the timeout the last status read stands;
    when no read answered at all, the last error is raised."""
    start = clock()
    progress, status, unmet = [], None, None
    while True:
        try:
            answer = read_status()
        except Exception as exc:  # pylint: disable=broad-except  # only the client's retriable errors are kept
            if not _retriable(exc) or (status is None and clock() - start >= timeout_s):
                raise
            # kafka-python's KafkaError.__str__ names its class already ("KafkaTimeoutError: Failed to get offsets ...").
            progress.append({"elapsed_s": round(clock() - start, 1), "lag_total": None, "lag_max": None, "unmet": [], "read_error": str(exc)})
        else:
            status, unmet = answer, unmet_conditions(answer, wait_for, max_lag, max_heartbeat_age_s)
            elapsed = round(clock() - start, 1)
            progress.append({"elapsed_s": elapsed, "lag_total": status["lag_total"], "lag_max": status["lag_max"], "unmet": unmet})
            if samples is not None:
                samples.append(catch_up_sample(elapsed, status))
            if not unmet:
                return status, unmet, progress
        elapsed = round(clock() - start, 1)
        if elapsed >= timeout_s and status is not None:
            return status, unmet, progress
        sleep(min(interval_s, max(0.0, timeout_s - elapsed)))


class MirrorStatusError(Exception):
    """Bad options, or the flow did not become healthy in time; `result` carries the last status."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result or {}


def status_argument_spec():
    """The options of module kafka_mirror_status. The mirror exporter (exporter.py) runs the same status for each flow of its
    configuration and takes the defaults of the options a flow leaves out from here."""
    spec = flow_argument_spec(require_source=True, require_target=True, filters=("topics", "groups"))
    spec.update(
        offset_syncs_topic_location=dict(type="str", default="source", choices=list(OFFSET_SYNCS_LOCATIONS)),
        wait=dict(type="bool", default=False),
        wait_for=dict(type="list", elements="str", choices=["heartbeats", "offset_syncs", "lag"]),
        mirrormaker1_group=dict(type="str"),
        max_lag=dict(type="int", default=0),
        max_heartbeat_age=dict(type="int", default=60),
        timeout=dict(type="int", default=300),
        poll_interval=dict(type="int", default=5),
        accept_catching_up=dict(type="bool", default=False),
    )
    return spec


def flow_options(params):
    """The flow description FlowStatus needs, validated before any connection is made (the flow options by _mm2.flow_options)."""
    # MirrorMaker 1 keeps every topic name in every release it has (2.4 to 3.9): its flow is named as the identity policy
    # names one, whatever mirrormaker_version says. The release gates MirrorMaker 2's IdentityReplicationPolicy (3.0+) and
    # MirrorMaker 2's topic rules, neither of which a MirrorMaker 1 flow has (the runbooks' MirrorMaker 1 of 2.4.1 was refused
    # here the first time it ran); unknown, the rules are those before 4.0, where MirrorMaker 1 ends.
    mirrormaker1 = params.get("mirrormaker1_group") is not None
    flow = flow_names(dict(params, mirrormaker_version=None) if mirrormaker1 else params, require_target=True)
    errors = list(flow.problems)
    for name in ("max_lag", "max_heartbeat_age"):
        if params[name] < 0:
            errors.append("%s must be >= 0, got %d" % (name, params[name]))
    for name in ("timeout", "poll_interval"):
        if params[name] <= 0:
            errors.append("%s must be > 0, got %d" % (name, params[name]))
    if mirrormaker1:
        if not params["mirrormaker1_group"].strip():
            errors.append("mirrormaker1_group must name MirrorMaker 1's consumer group, got an empty string")
        if params["replication_policy"] != "identity":
            errors.append("mirrormaker1_group is MirrorMaker 1's flow, which keeps topic names: set replication_policy to identity")
        unknown = sorted(set(params["wait_for"] or []) - set(MM1_CONDITIONS)) if params["wait"] else []
        if unknown:
            errors.append("wait_for %s: MirrorMaker 1 writes no heartbeats or offset syncs; wait for %s only" % (", ".join(unknown), ", ".join(MM1_CONDITIONS)))
    mirror_filter = None
    if flow.names is not None:
        try:
            mirror_filter = MirrorFilter(flow.names, params["topics"], params["topics_exclude"], params["groups"], params["groups_exclude"])
        except ValueError as exc:
            errors.append(str(exc))
    if errors:
        raise MirrorStatusError("invalid options, nothing was read: " + "; ".join(errors))
    return {"names": flow.names, "filter": mirror_filter, "version": flow.version}


def run_status(params, connection_factory):
    """What module kafka_mirror_status returns; raises MirrorStatusError when waiting timed out.

    params["source"] is validated by the module's argument spec (nested options, secrets no_log) like the target's options."""
    flow = flow_options(params)
    conditions = CONDITIONS if params.get("mirrormaker1_group") is None else MM1_CONDITIONS
    wait_for = (params["wait_for"] or list(conditions)) if params["wait"] else []
    samples = []
    with connection_factory(params["source"]) as source, connection_factory(params) as target:
        if params.get("mirrormaker1_group") is None:
            read = FlowStatus(source, target, flow).read
        else:
            read = Mm1FlowStatus(source, target, flow, params["mirrormaker1_group"]).read
        if params["wait"]:
            status, unmet, progress = wait_until_healthy(read, wait_for, params["max_lag"], params["max_heartbeat_age"],
                                                         params["timeout"], params["poll_interval"], samples=samples)
        else:
            status = read()
            unmet = unmet_conditions(status, conditions, params["max_lag"], params["max_heartbeat_age"])
            progress = []
    result = dict(status, healthy=not unmet, unmet=unmet, progress=progress, catch_up=None)
    if params["wait"] and unmet:
        catch_up = classify(samples, unmet_by_condition(status, wait_for, params["max_lag"], params["max_heartbeat_age"]), params["max_lag"])
        result["catch_up"] = catch_up
        if catch_up["verdict"] == CATCHING_UP and params.get("accept_catching_up"):
            return result
        raise MirrorStatusError("flow %s not healthy after %d s: %s. %s: %s. Check the MirrorMaker service and its log on this host."
                                % (status["flow"], params["timeout"], "; ".join(unmet),
                                   "Replicating" if catch_up["verdict"] == CATCHING_UP else "Stuck", catch_up["reason"]), result)
    return result
