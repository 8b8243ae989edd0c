# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topic settings drift of one MirrorMaker 2 flow: each replicated source topic against its remote topic on the target.

MirrorMaker 2 creates remote topics with its own settings (before 2.8 with none, the broker defaults), never copies
min.insync.replicas (config.properties.exclude) nor the replication factor, and syncs the other configs only every
sync.topic.configs.interval.seconds. The remote topic's settings can therefore differ from the source's; some of those
differences stop the mirror or lose records, the rest are worth knowing before a failover.

compare_flow() is pure (hand-made cases in tests/unit); drift_report() reads both clusters; alignment_entries() turns a
report into kafka_topic entries that make the target match the source (grow only, replication factor never changed).
Remote topic names come from the flow's FlowNames (_mm2.naming), never derived here.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnectionError, KafkaError
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_admin import read_topic_configs, read_topics
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topics import canonical_config_value, config_value_text
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.findings import ERROR, INFO, SEVERITIES, WARNING, finding, min_insync_findings
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.flow_options import flow_names
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.selection import MirrorFilter

CLEANUP_POLICY, MIN_INSYNC = "cleanup.policy", "min.insync.replicas"
RETENTION_KEYS = ("retention.ms", "retention.bytes")
MAX_MESSAGE_BYTES, COMPRESSION = "max.message.bytes", "compression.type"
# The topic configs compared, as the effective values DescribeConfigs reports (topic override, else the broker's setting).
COMPARED_CONFIGS = (CLEANUP_POLICY,) + RETENTION_KEYS + (MIN_INSYNC, MAX_MESSAGE_BYTES, COMPRESSION)
# A topic's status is its worst finding; "in_sync" when it has none, "missing" when the remote topic does not exist.
IN_SYNC, MISSING = "in_sync", "missing"
ALIGN_FIX = "align the remote topic with the source (role kafkaops.mirror.kafka_topics, kafka_topics_align_to_source: true)"
_UNLIMITED = -1


def _number(value):
    """An integer config value, or None when it is not one."""
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _policies(value):
    """cleanup.policy as a set: 'compact,delete' == 'delete, compact'."""
    return frozenset(part.strip().lower() for part in str(value).strip("[] ").split(",") if part.strip())


class _TopicDrift:
    """The findings of one source topic against its remote topic."""

    def __init__(self, source_topic, remote_topic, source, target, target_brokers, target_alias):
        self.source_topic, self.remote_topic = source_topic, remote_topic
        self.source, self.target = source, target
        self.target_brokers = target_brokers
        self.cluster = target_alias or "target"
        self.findings = []

    def add(self, severity, setting, message, fix=None):
        item = finding(severity, setting, self.cluster, "%s -> %s: %s" % (self.source_topic, self.remote_topic, message), fix)
        # The finding's check is the setting compared; the values of both sides travel with it for the reports' tables.
        item.update(topic=self.source_topic, remote_topic=self.remote_topic, source=self._value(self.source, setting),
                    target=self._value(self.target, setting))
        self.findings.append(item)

    @staticmethod
    def _value(side, setting):
        if side is None:
            return None
        return side[setting] if setting in ("partitions", "replication_factor") else side["configs"].get(setting)

    def config_pair(self, key):
        """(source value, target value) of a config both sides report; None when either does not."""
        source, target = self.source["configs"].get(key), self.target["configs"].get(key)
        return None if source is None or target is None else (source, target)

    def compare(self):
        if self.target is None:
            self.add(WARNING, "topic", "the remote topic does not exist: MirrorMaker 2 creates it at its next topic refresh with its own "
                                       "settings (before Kafka 2.8 the target's broker defaults)",
                     "pre-create it with the source's settings: " + ALIGN_FIX)
            return self
        self._partitions()
        self._replication_factor()
        self._cleanup_policy()
        self._retention()
        self._min_insync_replicas()
        self._max_message_bytes()
        self._compression()
        return self

    def _partitions(self):
        source, target = self.source["partitions"], self.target["partitions"]
        if target < source:
            # MirrorSourceTask sends each record to the partition of the same number; the producer cannot write to a partition
            # the remote topic lacks, so those records wait and then fail the task until MirrorMaker's topic refresh (every
            # refresh.topics.interval.seconds, where its ACLs allow CreatePartitions) adds them.
            self.add(ERROR, "partitions", "%d partition(s) on the target, %d on the source: records of source partitions %d-%d have no "
                                          "partition to go to and MirrorMaker 2's writes of them fail" % (target, source, target, source - 1),
                     "add partitions to the remote topic (Kafka can only grow them): " + ALIGN_FIX)
        elif target > source:
            self.add(INFO, "partitions", "%d partition(s) on the target, %d on the source: partitions %d-%d of the remote topic stay empty"
                     % (target, source, source, target - 1))

    def _replication_factor(self):
        source, target = self.source["replication_factor"], self.target["replication_factor"]
        possible = min(source, self.target_brokers)
        reassign = ("raise it with a partition reassignment (kafka-reassign-partitions.sh); kafka_topic and kafka_topics never change "
                    "a replication factor")
        if target > self.target_brokers:
            self.add(WARNING, "replication_factor", "replication factor %d with %d broker(s) in the target's metadata: partitions stay "
                                                    "under-replicated" % (target, self.target_brokers),
                     "bring the missing brokers back, or lower the replication factor with a partition reassignment")
        elif target < possible:
            self.add(WARNING, "replication_factor", "replication factor %d, the source's is %d and the target has %d broker(s): the "
                                                    "copy is less durable than it can be (MirrorMaker 2 does not copy the replication "
                                                    "factor)" % (target, source, self.target_brokers), reassign)
        elif target != source:
            self.add(INFO, "replication_factor", "replication factor %d, the source's is %d (the target has %d broker(s))"
                     % (target, source, self.target_brokers))

    def _cleanup_policy(self):
        pair = self.config_pair(CLEANUP_POLICY)
        if pair is None:
            return
        source, target = (_policies(value) for value in pair)
        added, dropped = sorted(target - source), sorted(source - target)
        if "compact" in added:
            # A compacted log refuses records without a key (InvalidRecordException), so MirrorMaker 2 stops at the first one
            # the source accepted, and compaction removes from the target older records the source keeps.
            self.add(ERROR, CLEANUP_POLICY, "the target compacts a topic the source does not (%s -> %s): records without a key are "
                                            "refused and older records of a key disappear from the target only" % pair, ALIGN_FIX)
        elif "delete" in added:
            # A compacted source topic keeps the latest record of every key for ever (a changelog, a table); a deleting target
            # drops them after retention.ms, so an application that fails over restores an incomplete state.
            self.add(ERROR, CLEANUP_POLICY, "the target deletes by time and size what the source keeps by key (%s -> %s): after "
                                            "retention.ms the target lacks keys the source still has" % pair, ALIGN_FIX)
        elif dropped:
            self.add(INFO, CLEANUP_POLICY, "the target does not %s (%s -> %s): it keeps records the source removes" % (
                " or ".join(dropped), pair[0], pair[1]))

    def _retention(self):
        deletes = "delete" in _policies(self.target["configs"].get(CLEANUP_POLICY, "delete"))
        for key in RETENTION_KEYS:
            pair = self.config_pair(key)
            if pair is None or canonical_config_value(pair[0]) == canonical_config_value(pair[1]):
                continue
            source, target = (_number(value) for value in pair)
            shorter = (source is not None and target is not None and target != _UNLIMITED
                       and (source == _UNLIMITED or target < source))
            if shorter and deletes:
                self.add(WARNING, key, "%s is %s on the target, %s on the source: the target deletes records sooner, so a consumer that "
                                       "fails over finds less history (the validation counts them as expired)" % (key, pair[1], pair[0]),
                         ALIGN_FIX)
            else:
                self.add(INFO, key, "%s is %s on the target, %s on the source" % (key, pair[1], pair[0]))

    def _min_insync_replicas(self):
        target_min_isr = _number(self.target["configs"].get(MIN_INSYNC))
        # The one rule (and severity) of a replication factor against min.insync.replicas, shared with preflight.
        for item in min_insync_findings(self.cluster, "the replication factor of %s" % self.remote_topic, self.target["replication_factor"],
                                        target_min_isr):
            self.add(item["severity"], MIN_INSYNC, item["message"], item["fix"])
        pair = self.config_pair(MIN_INSYNC)
        if pair is not None and canonical_config_value(pair[0]) != canonical_config_value(pair[1]):
            self.add(INFO, MIN_INSYNC, "min.insync.replicas is %s on the target, %s on the source (MirrorMaker 2 never copies it)"
                     % (pair[1], pair[0]))

    def _max_message_bytes(self):
        pair = self.config_pair(MAX_MESSAGE_BYTES)
        if pair is None:
            return
        source, target = (_number(value) for value in pair)
        if source is None or target is None or source == target:
            return
        if target < source:
            # The broker refuses a batch above the topic's max.message.bytes (RecordTooLargeException); the source accepted
            # records up to its own limit, and the first one above the target's stops MirrorMaker 2's task.
            self.add(ERROR, MAX_MESSAGE_BYTES, "max.message.bytes is %d on the target, %d on the source: a record the source accepted "
                                               "above %d bytes is refused by the target and stops MirrorMaker 2" % (target, source, target),
                     ALIGN_FIX + " (MirrorMaker's producer.max.request.size must allow such records too)")
        else:
            self.add(INFO, MAX_MESSAGE_BYTES, "max.message.bytes is %d on the target, %d on the source" % (target, source))

    def _compression(self):
        pair = self.config_pair(COMPRESSION)
        if pair is not None and canonical_config_value(pair[0]) != canonical_config_value(pair[1]):
            self.add(INFO, COMPRESSION, "compression.type is %s on the target, %s on the source: the same records take another size "
                                        "on disk" % (pair[1], pair[0]))

    def entry(self):
        severities = {item["severity"] for item in self.findings}
        worst = next((severity for severity in SEVERITIES if severity in severities), IN_SYNC)
        return dict(topic=self.source_topic, remote_topic=self.remote_topic, source=self.source, target=self.target,
                    status=MISSING if self.target is None else worst, findings=self.findings)


def compare_flow(names, source_topics, target_topics, target_brokers):
    """The drift report of a flow.

    names: the flow's FlowNames (remote topic names); source_topics: {source topic: side} of the replicated topics;
    target_topics: {remote topic: side} of those that exist; a side is {"partitions", "replication_factor", "configs": {key: value}};
    target_brokers: brokers in the target's metadata.
    """
    topics = [
        _TopicDrift(name, names.remote_topic(name), source_topics[name], target_topics.get(names.remote_topic(name)), target_brokers,
                    names.target_alias).compare().entry()
        for name in sorted(source_topics)
    ]
    findings = [item for topic in topics for item in topic["findings"]]
    counts = {severity: sum(1 for item in findings if item["severity"] == severity) for severity in SEVERITIES}
    summary = dict(topics=len(topics), in_sync=sum(1 for topic in topics if topic["status"] == IN_SYNC),
                   missing=sum(1 for topic in topics if topic["status"] == MISSING), errors=counts[ERROR], warnings=counts[WARNING],
                   infos=counts[INFO])
    report = dict(flow="%s->%s" % (names.source_alias, names.target_alias or "target"), target_brokers=target_brokers, summary=summary,
                  topics=topics, findings=findings)
    report["message"] = summary_text(report)
    return report


def summary_text(report):
    """One line: how many topics, and the errors and warnings by topic and setting."""
    summary = report["summary"]
    text = "%d topic(s) compared, %d in sync, %d missing on the target, %d error(s), %d warning(s), %d other difference(s)" % (
        summary["topics"], summary["in_sync"], summary["missing"], summary["errors"], summary["warnings"], summary["infos"])
    serious = ["%s %s" % (item["remote_topic"], item["check"]) for item in report["findings"] if item["severity"] == ERROR]
    return text + (": errors in " + ", ".join(serious) if serious else "")


def alignment_entries(report):
    """kafka_topic entries that make each remote topic match its source topic.

    Partitions only grow (Kafka cannot remove them); an existing topic's replication factor is left alone (a reassignment,
    reported as a finding); a missing remote topic is created with the source's partitions and replication factor capped at
    the target's brokers. min.insync.replicas goes to the source's value but never above the remote topic's replication
    factor, which would stop every write (acks=all).
    """
    entries = []
    for topic in report["topics"]:
        source, target = topic["source"], topic["target"]
        entry = dict(name=topic["remote_topic"])
        if target is None:
            replication_factor = min(source["replication_factor"], report["target_brokers"])
            entry.update(partitions=source["partitions"], replication_factor=replication_factor,
                         configs=_aligned_configs(source["configs"], {}, replication_factor))
        else:
            if target["partitions"] < source["partitions"]:
                entry["partitions"] = source["partitions"]
            configs = _aligned_configs(source["configs"], target["configs"], target["replication_factor"])
            if configs:
                entry["configs"] = configs
        if len(entry) > 1:
            entries.append(entry)
    return entries


def _aligned_configs(source, target, replication_factor):
    wanted = {}
    for key in COMPARED_CONFIGS:
        value = source.get(key)
        if value is None:
            continue
        if key == MIN_INSYNC and _number(value) is not None:
            value = str(min(_number(value), replication_factor))
        if canonical_config_value(target.get(key)) != canonical_config_value(value):
            wanted[key] = config_value_text(value)
    return wanted


def read_side(admin, names):
    """{topic: side} of the named topics that exist (see compare_flow), in one Metadata and one DescribeConfigs request."""
    topics = read_topics(admin, names)
    configs = read_topic_configs(admin, sorted(topics), config_filter="all")
    return {
        name: dict(partitions=topic["partitions"], replication_factor=topic["replication_factor"],
                   configs={key: entry["value"] for key, entry in configs.get(name, {}).items() if key in COMPARED_CONFIGS})
        for name, topic in topics.items()
    }


def flow_filter(params):
    """The flow's MirrorFilter from the module's options; ValueError names every bad option (checked before any connection)."""
    flow = flow_names(params)  # the flow options' one check (_mm2.flow_options); the offset syncs are not read here
    problems = flow.problems
    if not problems:
        try:
            return MirrorFilter(flow.names, params["topics"], params.get("topics_exclude"))
        except ValueError as exc:
            problems.append(str(exc))
    raise ValueError("invalid options, nothing was read: " + "; ".join(problems))


def _read(connection, side, read):
    try:
        return read(connection.admin())
    except KafkaError as exc:
        raise KafkaConnectionError("Reading the %s cluster's topics and configs from %s failed: %s: %s"
                                   % (side, connection.where, exc.__class__.__name__, exc)) from exc


def drift_report(params, connection_factory):
    """compare_flow() of the data topics the flow replicates, read from the source (params["source"]) and the target (params).

    Raises ValueError for bad options (nothing read) and KafkaConnectionError naming the cluster a read failed on.
    """
    mirror_filter = flow_filter(params)
    names = mirror_filter.names
    with connection_factory(params["source"]) as source, connection_factory(params) as target:
        source_topics = _read(source, "source", lambda admin: read_side(admin, mirror_filter.data_topics(admin.list_topics())))
        target_topics = _read(target, "target", lambda admin: read_side(admin, [names.remote_topic(name) for name in source_topics]))
        target_brokers = len(target.cluster()["brokers"])
    return compare_flow(names, source_topics, target_topics, target_brokers)
