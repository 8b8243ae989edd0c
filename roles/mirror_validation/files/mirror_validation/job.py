# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation job: snapshot, wait, read and compare each partition pair in a Spark task, settle the residue, report.
A MirrorMaker 1 mirror (engine mm1), which does not keep partitions, is compared per topic instead (topic_compare.py).

Only per-partition summaries and the classified residue's counts and samples reach the driver.
"""
from __future__ import annotations

import resource
import time
import uuid
from datetime import datetime, timezone

from pyspark import StorageLevel

from . import coverage, incremental, mirrormaker1, mm2_checks, partition_sample, report, topic_match, validation_state
from .catch_up import wait_for_target
from .errors import ValidationUnavailable
from .kafka_reader import open_reader, resolve_client
from .comparison import compare_all
from .residue import KIND, MISPLACED, settle
from .slices import SOURCE, TARGET, PartitionWork, Slice, slice_partitions, work_size
from .spark_io import RESIDUE, SUMMARY, ReadSettings, compare_partitions
from .topic_compare import compare_topics
from .topic_pairs import keeps_create_time, pair_topics, snapshot_source

_NO_PAIR = -1  # slices of MM2's internal topics belong to no validated pair


def _unavailable_from_spark(error):
    """Errors raised in Spark tasks arrive wrapped by the JVM; keep the reader's own message."""
    text = str(error)
    marker = "ValidationUnavailable: "
    if marker in text:
        return ValidationUnavailable(text.split(marker, 1)[1].splitlines()[0])
    return ValidationUnavailable("a Spark task failed: %s" % text.strip().splitlines()[-1] if text.strip() else repr(error))


class _Run:
    """State of one validation run, built step by step by prepare() and run()."""

    def __init__(self, options):
        self.started_at = datetime.now(timezone.utc)
        self.context = None  # the SparkContext, given by run(): the steps before compare() need no Spark
        self.error = None
        self.options = options
        self.settings = ReadSettings({SOURCE: options.source, TARGET: options.target}, options.client, options.read_timeout)
        self.pairs = []
        self.checks = {}
        self.syncs = None
        self.checkpoints = None
        self.timings = {}
        self.run_id = uuid.uuid4().hex[:12]  # names this run in the incremental state: "validated by run X at T"
        self.stored_topics = {}  # the incremental state read at the start (validation_state.load)
        self.plans = {}  # incremental: {(pair, partition): resume_plan.PartitionPlan}
        self.not_checked = {}  # bounded: {pair: [partitions the sample left out]}
        self.log_starts = {}  # {(side, pair, partition): log start offset at the snapshot}

    def load_state(self):
        """The incremental state, read before any Kafka read: a file that cannot be read stops the run here."""
        if self.options.mode != coverage.INCREMENTAL:
            return
        self.stored_topics, warning = validation_state.load(self.options.state_file)
        self.checks["state"] = warning or (
            "%s: offsets validated before for %d topic(s)" % (self.options.state_file, len(self.stored_topics)) if self.stored_topics
            else "%s: no state yet, every partition validated in full" % self.options.state_file)

    def _choose_ranges(self, live, source_reader, target_reader):
        """Narrow the ranges to what the mode checks: since the offsets validated before (incremental), a sample of the
        partitions (bounded)."""
        for pair in live:
            for side, offsets in ((SOURCE, pair.source_offsets), (TARGET, pair.target_offsets)):
                for partition, (start, _end) in offsets.items():
                    self.log_starts[(side, pair.index, partition)] = start
        if self.options.mode == coverage.INCREMENTAL:
            self.plans = incremental.plan_pairs(live, self.stored_topics, {SOURCE: source_reader, TARGET: target_reader})
            incremental.apply(live, self.plans)
        elif self.options.mode == coverage.BOUNDED:
            for pair in live:
                checked, self.not_checked[pair.index] = partition_sample.sample(set(pair.source_offsets) | set(pair.target_offsets),
                                                                                self.options.sample_partitions)
                pair.source_offsets = {partition: offsets for partition, offsets in pair.source_offsets.items() if partition in checked}
                pair.target_offsets = {partition: offsets for partition, offsets in pair.target_offsets.items() if partition in checked}
                pair.target_behind &= set(checked)

    def _recopies(self, key, count):
        """comparison.compare_all's recopies: the fingerprints of the source records below a resumed partition's range."""
        pair = next(pair for pair in self.pairs if pair.index == key[0])
        options = self.options
        with open_reader(options.source, options.client, options.read_timeout) as reader:
            return incremental.recopy_fingerprints(reader, pair, key[1], self.log_starts[(SOURCE, key[0], key[1])],
                                                   self.plans[key].stored["source_offset"], count, options.slice_records)

    def save_state(self):
        """Replace the incremental state with this passed run's ends; ValidationUnavailable when it cannot be written."""
        options = self.options
        live = [pair for pair in self.pairs if pair.target_exists]
        try:
            with open_reader(options.source, options.client, options.read_timeout) as source_reader, \
                    open_reader(options.target, options.client, options.read_timeout) as target_reader:
                validated = incremental.validated_topics(live, self.log_starts, {SOURCE: source_reader, TARGET: target_reader},
                                                         self.run_id, self.started_at.isoformat(timespec="seconds"))
            validation_state.save(options.state_file, self.stored_topics, validated)
        except OSError as error:
            raise ValidationUnavailable("the mirror passed, but state_file %s could not be written (%s): the next incremental run"
                                        " would validate in full" % (options.state_file, error)) from None

    def conclude(self, topics, error):
        """(exit code, error, the report's coverage entry, the verdict's first words) of the compared `topics`: what the
        mode checked, and the incremental state replaced when the run passed."""
        mode = self.options.mode
        if mode == coverage.INCREMENTAL and self.plans:
            coverage.annotate_incremental(topics, self.pairs, self.plans, self.stored_topics)
        elif mode == coverage.BOUNDED:
            coverage.annotate_bounded(topics, self.pairs, self.not_checked)
        code = report.exit_code(topics, error)
        state_written = False
        if mode == coverage.INCREMENTAL and code == report.PASSED:
            try:
                self.save_state()
                state_written = True
            except ValidationUnavailable as unavailable:
                error = str(unavailable)
                code = report.exit_code(topics, error)
        covered, lead = coverage.summary(mode, topics, self.checks.get("state"))
        if mode == coverage.INCREMENTAL:
            covered["state_written"] = state_written
        return code, error, covered, lead

    def _budget(self, offsets):
        """Offsets per Spark task for `offsets` to read: task_records, or fewer so that every core is busy however small the mirror."""
        return min(self.options.task_records or self.options.slice_records, max(1, -(-offsets // self.context.defaultParallelism)))

    def _internal_topic(self, reader, side, topic, topic_partitions):
        """The records ((range, RawRecord)) of a whole MM2 internal topic, or None when the topic does not exist."""
        if topic not in topic_partitions:
            return None
        offsets = reader.offsets(topic, range(topic_partitions[topic]))
        return reader.read_ranges(slice_partitions(side, _NO_PAIR, topic, offsets, self.options.slice_records))

    def prepare(self, source_reader, target_reader):
        options = self.options
        source_topics, target_topics = source_reader.topics(), target_reader.topics()
        mirrormaker_1 = options.engine == mirrormaker1.MM1
        if mirrormaker_1:
            self.checks.update(mirrormaker1.CHECKED)
        else:
            self.checks["naming"] = options.naming_rules()
        self.pairs = pair_topics(source_topics, target_topics, options.topics, options.exclude, options.flow_names(with_target=False),
                                 keep_names=mirrormaker_1)
        snapshot_source(source_reader, self.pairs)
        live = [pair for pair in self.pairs if pair.target_exists]
        timestamp_types, problem = target_reader.timestamp_types([pair.target_topic for pair in live])
        for pair in live:
            pair.with_timestamp = keeps_create_time(timestamp_types.get(pair.target_topic))
        if problem:
            self.checks["timestamps"] = "left out of fingerprints (target topic configs unreadable: %s)" % problem
        latest_syncs = {} if mirrormaker_1 else self._load_offset_syncs(source_reader, target_reader, source_topics, target_topics)

        def target_offsets():
            return {pair.index: target_reader.offsets(pair.target_topic, range(pair.target_partitions)) for pair in live}

        caught_up, behind = wait_for_target(target_offsets, live, latest_syncs, options.catch_up_timeout, options.catch_up_interval)
        for pair in live:
            pair.target_offsets = dict(caught_up[pair.index])
            pair.target_behind = {partition for index, partition in behind if index == pair.index}
        self.checks["catch_up"] = (
            "the target stopped short of the source snapshot on %d partition(s) after %.0f s; records after the last copied one"
            " there are reported as pending" % (len(behind), options.catch_up_timeout) if behind
            else "the target's end offsets stopped moving (MirrorMaker 1 writes no offset syncs that say how far it is)" if mirrormaker_1
            else "target caught up")
        if not mirrormaker_1:
            self._load_checkpoints(target_reader, target_topics)
        self._choose_ranges(live, source_reader, target_reader)

    def _load_offset_syncs(self, source_reader, target_reader, source_topics, target_topics):
        options = self.options
        if not options.target_alias:
            self.checks["offset_syncs"] = "skipped (no --target-alias)"
            return {}
        topic = options.flow_names().offset_syncs_topic
        on_source = options.offset_syncs_topic_location == "source"
        records = self._internal_topic(source_reader if on_source else target_reader, SOURCE if on_source else TARGET,
                                       topic, source_topics if on_source else target_topics)
        if records is None:
            self.checks["offset_syncs"] = "skipped (%s not found on the %s)" % (topic, options.offset_syncs_topic_location)
            return {}
        self.syncs, undecodable = mm2_checks.offset_syncs(records, {pair.source_topic: pair.index for pair in self.pairs if pair.target_exists})
        self.checks["offset_syncs"] = "checked (%s)%s" % (topic, mm2_checks.undecodable_note(undecodable))
        return mm2_checks.latest_syncs(self.syncs)

    def _load_checkpoints(self, target_reader, target_topics):
        topic = self.options.flow_names(with_target=False).checkpoints_topic
        records = self._internal_topic(target_reader, TARGET, topic, target_topics)
        if records is None:
            self.checks["checkpoints"] = "skipped (%s not found on the target)" % topic
            return
        self.checkpoints, undecodable = mm2_checks.latest_checkpoints(records, {pair.target_topic: pair.index for pair in self.pairs if pair.target_exists})
        self.checks["checkpoints"] = "checked (%s)%s" % (topic, mm2_checks.undecodable_note(undecodable))

    def compare(self):
        """Per-pair report entries and checkpoint results: each partition pair is compared in the task that reads it."""
        if self.options.engine == mirrormaker1.MM1:
            return self._compare_per_topic(), []
        live = [pair for pair in self.pairs if pair.target_exists]
        bounds = {(row[0], row[1]): row[2:] for pair in live for row in pair.bounds()}
        syncs = syncs_in_range(self.syncs or (), bounds)
        checkpoints = [row for row in self.checkpoints or () if (row["pair"], row["partition"]) in bounds]
        works = [partition_work(pair, partition, syncs.get((pair.index, partition), ()),
                                [row["upstream"] for row in checkpoints if (row["pair"], row["partition"]) == (pair.index, partition)])
                 for pair in live for partition in sorted(set(pair.source_offsets) | set(pair.target_offsets))]
        parallelism = self.context.defaultParallelism
        budget = self._budget(sum(work_size(work) for work in works))
        started = time.monotonic()
        engine = _SparkEngine(self.context, self.settings, self.options.sample_limit, parallelism)
        try:
            resumed = {key: (plan.resumed_source, plan.resumed_target) for key, plan in self.plans.items() if plan.how == "resumed"}
            summaries, outcomes, stats = compare_all(engine, works, budget, self.options.window_records, bounds,
                                                     self.options.sample_limit, {pair.index: pair.source_topic for pair in live},
                                                     resumed, self._recopies)
        finally:
            engine.close()
        self.timings["compare_s"] = round(time.monotonic() - started, 3)
        self.timings["read_and_match_s"] = engine.read_and_match_s
        self.timings.update(stats)
        counts, samples, misplaced, anchors = partition_tables(summaries, outcomes, self.options.sample_limit)
        checkpoint_rows = []
        for row in checkpoints:
            key = (row["pair"], row["partition"])
            limit, violation = mm2_checks.checkpoint_verdict(row["downstream"], summaries[key]["first_copies_after"].get(row["upstream"]),
                                                             bounds[key][3])
            if violation == mm2_checks.SKIPS_RECORDS and self._copied_again(row, bounds[key]):
                limit, violation = row["downstream"], None
                row = dict(row, copied_again=True)
            checkpoint_rows.append(dict(row, limit=limit, violation=violation))
        return self._entries(counts, samples, misplaced, anchors, checkpoint_rows)

    def _compare_per_topic(self):
        """Per-pair report entries of a MirrorMaker 1 mirror: each topic's records matched across its partitions (topic_compare.py),
        counted per partition where each record was read."""
        live = [pair for pair in self.pairs if pair.target_exists]
        started = time.monotonic()
        offsets = sum(end - start for pair in live for offsets in (pair.source_offsets, pair.target_offsets) for start, end in offsets.values())
        records_read, found, tasks = compare_topics(self.context, self.settings, live, self._budget(offsets), self.options.sample_limit)
        self.timings["compare_s"] = round(time.monotonic() - started, 3)
        self.timings["read_tasks"] = tasks
        counts, samples = topic_match.partition_tables(records_read, found)
        return [mirrormaker1.without_not_counted(report.topic_entry(pair, _of_pair(pair, counts), _of_pair(pair, samples), {}, {}, {},
                                                                    self.options.max_duplicate_ratio))
                for pair in self.pairs]

    def _copied_again(self, row, bounds):
        """Whether a checkpoint that skips the first copies of records is safe because MirrorMaker copied them again after
        its downstream offset (mm2_checks.copied_again): both ranges read on the driver, when they hold at most
        --slice-records offsets together (a group near the end of its partition, as after a restart); larger ones keep the
        first-copy verdict."""
        source_begin, source_end, target_begin, target_end, _behind = bounds
        pair = next(pair for pair in self.pairs if pair.index == row["pair"])
        source_range = Slice(SOURCE, pair.index, pair.source_topic, row["partition"], max(row["upstream"], source_begin), source_end, False)
        target_range = Slice(TARGET, pair.index, pair.target_topic, row["partition"], max(row["downstream"], target_begin), target_end, False)
        options = self.options
        if work_size(source_range) + work_size(target_range) > options.slice_records:
            return False
        with open_reader(options.source, options.client, options.read_timeout) as source_reader, \
                open_reader(options.target, options.client, options.read_timeout) as target_reader:
            sources = [record for _part, record in source_reader.read_ranges([source_range])]
            targets = [record for _part, record in target_reader.read_ranges([target_range])]
        return mm2_checks.copied_again(sources, targets, pair.with_timestamp)

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
                           "limit": row["limit"], "ok": row["violation"] is None, "violation": row["violation"],
                           # the records after the upstream offset were copied again after their first copies (a restart)
                           "copied_again": row.get("copied_again", False)})
        topics = [report.topic_entry(pair, _of_pair(pair, counts), _of_pair(pair, samples), _of_pair(pair, misplaced), _of_pair(pair, anchors),
                                     _of_pair(pair, violations), self.options.max_duplicate_ratio)
                  for pair in self.pairs]
        return topics, groups


def _of_pair(pair, table):
    """{partition: value} of `pair` in `table`, keyed by (pair index, partition)."""
    return {partition: value for (index, partition), value in table.items() if index == pair.index}


class _SparkEngine:
    """comparison.compare_all's engine: tasks run in Spark, the residue stays an RDD (only its grouping shuffles
    records), the task results are cached until close()."""

    def __init__(self, context, settings, sample_limit, parallelism):
        self.context, self.settings, self.sample_limit, self.parallelism = context, settings, sample_limit, parallelism
        self.cached = []
        self.read_and_match_s = 0.0

    def compare(self, tasks, window):
        started = time.monotonic()
        results = compare_partitions(self.context, self.settings, tasks, window, self.sample_limit).persist(StorageLevel.MEMORY_AND_DISK)
        self.cached.append(results)
        summaries = results.filter(lambda item: item[0] == SUMMARY).map(lambda item: item[1]).collect()
        self.read_and_match_s = round(self.read_and_match_s + time.monotonic() - started, 3)
        return summaries, results.filter(lambda item: item[0] == RESIDUE).map(lambda item: item[1])

    def settle(self, residue, bounds_of):
        return settle(residue, bounds_of, self.sample_limit, self.parallelism)

    @staticmethod
    def fingerprints(residue, keys):
        return (residue.filter(lambda row: (row[0], row[1]) in keys).map(lambda row: ((row[0], row[1]), row[4]))
                .groupByKey().mapValues(frozenset).collectAsMap())

    @staticmethod
    def without(residue, keys):
        return residue.filter(lambda row: (row[0], row[1]) not in keys)

    @staticmethod
    def union(residue, more):
        return residue.union(more)

    def close(self):
        for frame in self.cached:
            frame.unpersist()


def partition_work(pair, partition, syncs, checkpoint_upstreams):
    """The PartitionWork of one partition of a TopicPair, with its in-range `syncs` and its checkpoints' upstream offsets."""
    source_begin, source_end = pair.source_offsets.get(partition, (0, 0))
    target_begin, target_end = pair.target_offsets.get(partition, (0, 0))
    # Where reading both sides in step starts: MM2's first offset sync in range, else the ends aligned.
    shift = syncs[0][1] - syncs[0][0] if syncs else target_end - source_end
    return PartitionWork(Slice(SOURCE, pair.index, pair.source_topic, partition, source_begin, source_end, pair.with_timestamp),
                         Slice(TARGET, pair.index, pair.target_topic, partition, target_begin, target_end, pair.with_timestamp),
                         shift, tuple(syncs), tuple(checkpoint_upstreams))


def syncs_in_range(syncs, bounds):
    """{(pair, partition): sorted distinct (upstream, downstream)} of the `syncs` (pair, partition, upstream, downstream)
    whose offsets are both still readable; `bounds`: {(pair, partition): (source begin, end, target begin, end, behind)}."""
    result = {}
    for pair, partition, upstream, downstream in syncs:
        if (pair, partition) in bounds:
            source_begin, source_end, target_begin, target_end, _behind = bounds[(pair, partition)]
            if source_begin <= upstream < source_end and target_begin <= downstream < target_end:
                result.setdefault((pair, partition), set()).add((upstream, downstream))
    return {key: sorted(values) for key, values in result.items()}


# The report's count of each residue kind: records deleted by retention on either side count as expired.
COUNTED_AS = {"missing": "missing", "pending": "pending", "duplicate": "duplicates", "unexpected": "unexpected",
              "expired": "expired", "expired_on_target": "expired"}


def partition_tables(summaries, outcomes, sample_limit):
    """The report's per-partition tables from the task summaries and the settled residue."""
    counts, samples, misplaced, anchors = {}, {}, {}, {}
    for key, summary in summaries.items():
        counts[key] = {"source_count": summary["source_count"], "target_count": summary["target_count"],
                       "order_violations": summary["order_violations"]}
        if summary["order_violation_samples"]:
            samples.setdefault(key, {})["order_violation"] = summary["order_violation_samples"]
        if summary["anchors_checked"]:
            anchors[key] = {"anchors_checked": summary["anchors_checked"], "anchor_mismatches": summary["anchor_mismatches"],
                            "mismatch_samples": [{"upstream": upstream, "downstream": downstream}
                                                 for upstream, downstream in summary["anchor_mismatch_samples"]]}
    for outcome, (count, first) in outcomes.items():
        if outcome[0] == KIND:
            _tag, pair, partition, kind = outcome
            entry = counts[(pair, partition)]
            entry[COUNTED_AS[kind]] = entry.get(COUNTED_AS[kind], 0) + count
            samples.setdefault((pair, partition), {})[kind] = first
        elif outcome[0] == MISPLACED:
            misplaced[outcome[1:]] = [{"source_offset": source_offset, "target_partition": target_partition, "target_offset": target_offset}
                                      for source_offset, target_partition, target_offset in first[:sample_limit]]
    return counts, samples, misplaced, anchors


def prepare(options):
    """The run's state after the steps that need no Spark: source snapshot, the wait for the target, MM2's bookkeeping.
    It can run while Spark starts (cli.py)."""
    clock = time.monotonic()
    state = _Run(options)
    try:
        state.load_state()
        with open_reader(options.source, options.client, options.read_timeout) as source_reader, \
                open_reader(options.target, options.client, options.read_timeout) as target_reader:
            state.prepare(source_reader, target_reader)
    except ValidationUnavailable as unavailable:
        state.error = str(unavailable)
    state.timings["prepare_s"] = round(time.monotonic() - clock, 3)
    return state


def run(context, options, prepared=None):
    """Validate the mirror and return the report dict (report["exit_code"] is the process exit code).

    `prepared`: a future of prepare(options) started earlier, else it runs here. duration_s and records_per_s count
    from this call on, when Spark is up.
    """
    clock = time.monotonic()
    state = prepare(options) if prepared is None else prepared.result()
    state.context = context
    topics, groups, error = [], [], state.error
    if error is None:
        try:
            topics, groups = state.compare()
        except ValidationUnavailable as unavailable:
            error = str(unavailable)
        except Exception as spark_error:  # pylint: disable=broad-except  # task failures arrive as Py4J/PySpark errors
            error = str(_unavailable_from_spark(spark_error))
    if error and not topics:
        topics = [report.topic_entry(pair, {}, {}, {}, {}, {}, options.max_duplicate_ratio)
                  for pair in state.pairs if not pair.target_exists]
    code, error, covered, lead = state.conclude(topics, error)
    if options.engine == mirrormaker1.MM1:
        lead = mirrormaker1.LEAD
    duration = time.monotonic() - clock
    records = sum(topic["totals"].get("source_count", 0) + topic["totals"].get("target_count", 0) for topic in topics)
    message = report.summary_message(topics, error)
    return {
        "passed": code == report.PASSED,
        "exit_code": code,
        "message": "%s; %s" % (lead, message) if lead else message,
        "mode": options.mode,
        "engine": options.engine,
        # {check: reason} of the checks that do not exist for this MirrorMaker: not skipped, there is nothing to check
        "not_applicable": dict(mirrormaker1.NOT_APPLICABLE) if options.engine == mirrormaker1.MM1 else {},
        "run": state.run_id,
        "coverage": covered,
        "error": error,
        "started_at": state.started_at.isoformat(timespec="seconds"),
        "duration_s": round(duration, 3),
        "records_read": records,
        "records_per_s": int(records / duration) if duration > 0 else 0,
        "client": resolve_client(options.client, (options.source, options.target)),
        "spark_master": context.master,
        "source_bootstrap": options.source.bootstrap_servers,
        "target_bootstrap": options.target.bootstrap_servers,
        "thresholds": {"max_duplicate_ratio": options.max_duplicate_ratio},
        "mirrormaker_version": options.mirrormaker_version,
        "checks": state.checks,
        "timings": state.timings,
        # ru_maxrss is in KiB on Linux: the driver's Python process, which never holds records.
        "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        "topics": topics,
        "groups": groups,
    }
