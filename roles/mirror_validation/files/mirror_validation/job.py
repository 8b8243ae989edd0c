"""The validation job: snapshot, wait, read in Spark tasks, compare, report. Only aggregates reach the driver."""
from __future__ import annotations

import resource
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

from pyspark import StorageLevel
from pyspark.sql import functions as F
from pyspark.sql import types as T

from . import compare, mm2_checks, report
from .catch_up import wait_for_target
from .connection import Connection
from .errors import ValidationUnavailable
from .kafka_reader import open_reader, resolve_client
from .naming import FlowNames
from .slices import SOURCE, TARGET, interleave, pack, slice_partitions
from .spark_io import ReadSettings, read_checkpoints, read_fingerprints, read_offset_syncs
from .topic_pairs import keeps_create_time, pair_topics, snapshot_source

BOUNDS_SCHEMA = T.StructType(
    [T.StructField("pair", T.IntegerType(), False), T.StructField("partition", T.IntegerType(), False)]
    + [T.StructField(name, T.LongType(), False) for name in ("source_begin", "source_end", "target_begin", "target_end")]
    + [T.StructField("target_behind", T.BooleanType(), False)]
)
_NO_PAIR = -1  # slices of MM2's internal topics belong to no validated pair
# Rows per shuffle partition when spark.sql.shuffle.partitions was not set: Spark's default of 200 turns every
# step of a small validation into 200 tasks, which cost minutes on two cores for 64k records.
SHUFFLE_PARTITION_RECORDS = 1000000


@dataclass
class JobOptions:
    source: Connection
    target: Connection
    topics: str
    source_alias: str
    exclude: Optional[str] = None
    target_alias: Optional[str] = None
    policy: str = "default"
    separator: str = "."
    offset_syncs_location: str = "source"
    catch_up_timeout_s: float = 300.0
    catch_up_interval_s: float = 5.0
    max_duplicate_ratio: float = 0.01
    slice_records: int = 250000
    task_records: int = 1000000  # offsets per Spark task (slices of different partitions packed together); 0: slice_records
    client: str = "auto"
    read_timeout_s: float = 30.0
    sample_limit: int = 10


def _unavailable_from_spark(error):
    """Errors raised in Spark tasks arrive wrapped by the JVM; keep the reader's own message."""
    text = str(error)
    marker = "ValidationUnavailable: "
    if marker in text:
        return ValidationUnavailable(text.split(marker, 1)[1].splitlines()[0])
    return ValidationUnavailable("a Spark task failed: %s" % text.strip().splitlines()[-1] if text.strip() else repr(error))


class _Run:
    """State of one validation run, built step by step by run()."""

    def __init__(self, spark, options):
        self.spark = spark
        self.options = options
        self.settings = ReadSettings({SOURCE: options.source, TARGET: options.target}, options.client, options.read_timeout_s)
        self.pairs = []
        self.checks = {}
        self.syncs = None
        self.checkpoints = None
        self.timings = {}

    def _task_budget(self):
        return self.options.task_records or self.options.slice_records

    def _internal_topic(self, reader, side, topic, topic_partitions):
        """Tasks over a whole MM2 internal topic, or None when the topic does not exist."""
        if topic not in topic_partitions:
            return None
        offsets = reader.offsets(topic, range(topic_partitions[topic]))
        return pack(interleave(slice_partitions(side, _NO_PAIR, topic, offsets, self.options.slice_records)), self._task_budget())

    def prepare(self, source_reader, target_reader):
        options = self.options
        source_topics, target_topics = source_reader.topics(), target_reader.topics()
        self.pairs = pair_topics(source_topics, target_topics, options.topics, options.exclude, options.source_alias,
                                 options.policy, options.separator)
        snapshot_source(source_reader, self.pairs)
        live = [pair for pair in self.pairs if pair.target_exists]
        timestamp_types, problem = target_reader.timestamp_types([pair.target_topic for pair in live])
        for pair in live:
            pair.with_timestamp = keeps_create_time(timestamp_types.get(pair.target_topic))
        if problem:
            self.checks["timestamps"] = "left out of fingerprints (target topic configs unreadable: %s)" % problem
        latest_syncs = self._load_offset_syncs(source_reader, target_reader, source_topics, target_topics)

        def target_offsets():
            return {pair.index: target_reader.offsets(pair.target_topic, range(pair.target_partitions)) for pair in live}

        caught_up, behind = wait_for_target(target_offsets, live, latest_syncs, options.catch_up_timeout_s, options.catch_up_interval_s)
        for pair in live:
            pair.target_offsets = dict(caught_up[pair.index])
            pair.target_behind = {partition for index, partition in behind if index == pair.index}
        self.checks["catch_up"] = (
            "the target stopped short of the source snapshot on %d partition(s) after %.0f s; records after the last copied one"
            " there are reported as pending" % (len(behind), options.catch_up_timeout_s) if behind else "target caught up")
        self._load_checkpoints(target_reader, target_topics)

    def _load_offset_syncs(self, source_reader, target_reader, source_topics, target_topics):
        options = self.options
        if not options.target_alias:
            self.checks["offset_syncs"] = "skipped (no --target-alias)"
            return {}
        topic = FlowNames(options.source_alias, options.target_alias, options.policy, options.separator,
                          options.offset_syncs_location).offset_syncs_topic
        on_source = options.offset_syncs_location == "source"
        slices = self._internal_topic(source_reader if on_source else target_reader, SOURCE if on_source else TARGET,
                                      topic, source_topics if on_source else target_topics)
        if slices is None:
            self.checks["offset_syncs"] = "skipped (%s not found on the %s)" % (topic, options.offset_syncs_location)
            return {}
        pair_of_topic = {pair.source_topic: pair.index for pair in self.pairs if pair.target_exists}
        self.syncs = read_offset_syncs(self.spark, self.settings, slices, pair_of_topic).persist(StorageLevel.MEMORY_AND_DISK)
        latest = self.syncs.groupBy("pair", "partition").agg(F.max(F.struct("upstream", "downstream")).alias("sync")).collect()
        self.checks["offset_syncs"] = "checked (%s)" % topic
        return {(row["pair"], row["partition"]): (row["sync"]["upstream"], row["sync"]["downstream"]) for row in latest}

    def _load_checkpoints(self, target_reader, target_topics):
        topic = FlowNames(self.options.source_alias, None, self.options.policy, self.options.separator).checkpoints_topic
        slices = self._internal_topic(target_reader, TARGET, topic, target_topics)
        if slices is None:
            self.checks["checkpoints"] = "skipped (%s not found on the target)" % topic
            return
        pair_of_topic = {pair.target_topic: pair.index for pair in self.pairs if pair.target_exists}
        self.checkpoints = read_checkpoints(self.spark, self.settings, slices, pair_of_topic)
        self.checks["checkpoints"] = "checked (%s)" % topic

    def compare(self):
        """Per-pair report entries and checkpoint results; every heavy step runs in Spark."""
        live = [pair for pair in self.pairs if pair.target_exists]
        slices = []
        for pair in live:
            slices += slice_partitions(SOURCE, pair.index, pair.source_topic, pair.source_offsets, self.options.slice_records, pair.with_timestamp)
            slices += slice_partitions(TARGET, pair.index, pair.target_topic, pair.target_offsets, self.options.slice_records, pair.with_timestamp)
        bounds = self.spark.createDataFrame([row for pair in live for row in pair.bounds()], BOUNDS_SCHEMA)
        offsets = sum(part.end - part.start for part in slices)
        parallelism = self.spark.sparkContext.defaultParallelism
        self._size_shuffles(offsets, parallelism)
        # Enough tasks to keep every core busy, however small the mirror.
        tasks = pack(interleave(slices), min(self._task_budget(), max(1, -(-offsets // parallelism))))
        started = time.monotonic()
        records = read_fingerprints(self.spark, self.settings, tasks)
        matched = compare.match_copies(records).persist(StorageLevel.MEMORY_AND_DISK)
        classified = compare.classify(matched, bounds)
        violations = compare.order_violations(classified).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            matched.count()  # reads Kafka once: every later step works on this cache
            self.timings["read_and_match_s"] = round(time.monotonic() - started, 3)
            self.timings["read_tasks"] = len(tasks)
            started = time.monotonic()
            counts = _by_partition(compare.partition_counts(classified, violations, bounds).collect())
            samples, misplaced = self._samples(classified, violations, counts)
            anchors = self._anchors(classified, bounds)
            checkpoint_rows = []
            if self.checkpoints is not None:
                checkpoint_rows = [row.asDict() for row in mm2_checks.checkpoint_results(classified, self.checkpoints, bounds).collect()]
        finally:
            self.timings["compare_s"] = round(time.monotonic() - started, 3)
            for frame in (violations, matched) + ((self.syncs,) if self.syncs is not None else ()):
                frame.unpersist()
        return self._entries(counts, samples, misplaced, anchors, checkpoint_rows)

    def _size_shuffles(self, offsets, parallelism):
        if self.spark.sparkContext.getConf().contains("spark.sql.shuffle.partitions"):
            self.checks["shuffle_partitions"] = "%s (set by the Spark configuration)" % self.spark.conf.get("spark.sql.shuffle.partitions")
            return
        partitions = max(parallelism, offsets // SHUFFLE_PARTITION_RECORDS)
        self.spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
        self.checks["shuffle_partitions"] = "%d (one per %d records, at least one per core)" % (partitions, SHUFFLE_PARTITION_RECORDS)

    def _samples(self, classified, violations, counts):
        """First offsets per defect kind, and misplaced records; each costs Spark jobs, so only when the counts show defects."""
        limit = self.options.sample_limit
        samples, misplaced = {}, {}

        def total(name):
            return sum(row[name] for row in counts.values())

        if any(total(name) for name in ("missing", "pending", "duplicates", "unexpected", "order_violations", "expired")):
            for row in compare.defect_samples(classified, violations, limit).collect():
                samples.setdefault((row["pair"], row["partition"]), {})[row["kind"]] = list(row["offsets"])
        if total("missing") and total("unexpected"):
            for row in compare.misplaced_samples(classified, limit).collect():
                misplaced.setdefault((row["pair"], row["source_partition"]), []).append(
                    {"source_offset": row["source_offset"], "target_partition": row["target_partition"], "target_offset": row["target_offset"]})
        return samples, misplaced

    def _anchors(self, classified, bounds):
        anchors = {}
        if self.syncs is None:
            return anchors
        for row in mm2_checks.anchor_counts(mm2_checks.anchor_results(classified, self.syncs, bounds), self.options.sample_limit).collect():
            entry = row.asDict()
            entry["mismatch_samples"] = [sample.asDict() for sample in (row["mismatch_samples"] or [])]
            anchors[(row["pair"], row["partition"])] = entry
        return anchors

    def _entries(self, counts, samples, misplaced, anchors, checkpoint_rows):
        names = {pair.index: pair for pair in self.pairs}
        violations = {}
        groups = []
        for row in sorted(checkpoint_rows, key=lambda r: (r["group"], r["pair"], r["partition"])):
            if row["violation"]:
                key = (row["pair"], row["partition"])
                violations[key] = violations.get(key, 0) + 1
            pair = names[row["pair"]]
            groups.append({"group": row["group"], "source_topic": pair.source_topic, "target_topic": pair.target_topic,
                           "partition": row["partition"], "upstream_offset": row["upstream"], "downstream_offset": row["downstream"],
                           "limit": row["limit"], "ok": row["violation"] is None, "violation": row["violation"]})

        def of(pair, table):
            return {partition: value for (index, partition), value in table.items() if index == pair.index}

        topics = [report.topic_entry(pair, of(pair, counts), of(pair, samples), of(pair, misplaced), of(pair, anchors),
                                     of(pair, violations), self.options.max_duplicate_ratio)
                  for pair in self.pairs]
        return topics, groups


def _by_partition(rows):
    return {(row["pair"], row["partition"]): row.asDict() for row in rows}


def run(spark, options):
    """Validate the mirror and return the report dict (report["exit_code"] is the process exit code)."""
    started = datetime.now(timezone.utc)
    clock = time.monotonic()
    state = _Run(spark, options)
    topics, groups, error = [], [], None
    try:
        with open_reader(options.source, options.client, options.read_timeout_s) as source_reader, \
                open_reader(options.target, options.client, options.read_timeout_s) as target_reader:
            state.prepare(source_reader, target_reader)
        state.timings["prepare_s"] = round(time.monotonic() - clock, 3)
        try:
            topics, groups = state.compare()
        except ValidationUnavailable:
            raise
        except Exception as spark_error:  # pylint: disable=broad-except  # task failures arrive as Py4J/PySpark errors
            raise _unavailable_from_spark(spark_error) from spark_error
    except ValidationUnavailable as unavailable:
        error = str(unavailable)
        if not topics:
            topics = [report.topic_entry(pair, {}, {}, {}, {}, {}, options.max_duplicate_ratio)
                      for pair in state.pairs if not pair.target_exists]
    duration = time.monotonic() - clock
    records = sum(topic["totals"].get("source_count", 0) + topic["totals"].get("target_count", 0) for topic in topics)
    code = report.exit_code(topics, error)
    return {
        "passed": code == report.PASSED,
        "exit_code": code,
        "message": report.summary_message(topics, error),
        "error": error,
        "started_at": started.isoformat(timespec="seconds"),
        "duration_s": round(duration, 3),
        "records_read": records,
        "records_per_s": int(records / duration) if duration > 0 else 0,
        "client": resolve_client(options.client),
        "spark_master": spark.sparkContext.master,
        "source_bootstrap": options.source.bootstrap_servers,
        "target_bootstrap": options.target.bootstrap_servers,
        "thresholds": {"max_duplicate_ratio": options.max_duplicate_ratio},
        "checks": state.checks,
        "timings": state.timings,
        # ru_maxrss is in KiB on Linux: the driver's Python process, which never holds records.
        "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        "topics": topics,
        "groups": groups,
    }
