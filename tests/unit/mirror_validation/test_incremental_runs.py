# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The incremental and bounded modes through the job's driver (job.prepare and job.run) over clusters held in lists:
the first incremental run is a full one that writes the state, the next one starts where it ended, a recreated remote topic
is checked in full again, and the state is written only after a run that passed in incremental mode. The comparison itself
(Spark) is replaced by one that reports what the ranges hold, so what is tested is which ranges the driver chose."""
from __future__ import annotations

import json
from concurrent.futures import Future

import pytest

from mirror_validation import job, report
from mirror_validation.kafka_reader import RawRecord
from mirror_validation.options import JobOptions


def records(prefix, start, count, first_offset=None):
    first_offset = start if first_offset is None else first_offset
    return [RawRecord(first_offset + index, b"k", b"%s-%d" % (prefix, start + index), None, 1000 + start + index) for index in range(count)]


class Cluster:
    """What the job's driver reads of a cluster (kafka_reader's readers): {topic: {partition: [RawRecord]}}, log starts."""

    def __init__(self, topics):
        self.topics_held = topics

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def topics(self):
        return {name: len(partitions) for name, partitions in self.topics_held.items()}

    def offsets(self, topic, partitions):
        held = self.topics_held[topic]
        return {partition: (held[partition][0].offset, held[partition][-1].offset + 1) if held[partition] else (0, 0)
                for partition in partitions}

    @staticmethod
    def timestamp_types(topics):
        return {topic: "CreateTime" for topic in topics}, None

    def read_ranges(self, ranges):
        for part in ranges:
            for record in self.topics_held[part.topic][part.partition]:
                if part.start <= record.offset < part.end:
                    yield part, record


class Mirror:
    """Topic orders (2 partitions) and its remote topic primary.orders, 100 records each, copied faithfully."""

    def __init__(self, monkeypatch):
        self.source = Cluster({"orders": {0: records(b"p0", 0, 100), 1: records(b"p1", 0, 100)}})
        self.target = Cluster({"primary.orders": {0: records(b"p0", 0, 100), 1: records(b"p1", 0, 100)}})
        monkeypatch.setattr(job, "open_reader", lambda connection, _client, _timeout: getattr(self, connection))

    def append(self, partition, count, recopied=0):
        """`count` new records on the source and their copies, after `recopied` copies again of the last ones before."""
        source, target = self.source.topics_held["orders"][partition], self.target.topics_held["primary.orders"][partition]
        start = len(source)
        source.extend(records(b"p%d" % partition, start, count))
        target.extend(records(b"p%d" % partition, start - recopied, recopied + count, first_offset=len(target)))


class Side(str):
    """A connection as the job reads it, and the name of its Cluster in Mirror (what open_reader is given)."""

    @property
    def bootstrap_servers(self):
        return "%s:9092" % self


def options(tmp_path, mode="incremental", **extra):
    given = dict(source=Side("source"), target=Side("target"), topics=".*", source_alias="primary", catch_up_timeout=0, catch_up_interval=0.001,
                 mode=mode, state_file=str(tmp_path / "state.json") if mode == "incremental" else None)
    given.update(extra)
    return JobOptions(**given)


def ranges(state):
    return {partition: (state.pairs[0].source_offsets[partition], state.pairs[0].target_offsets[partition]) for partition in (0, 1)}


class Context:
    master = "local[1]"


def run(monkeypatch, job_options, defect=None):
    """job.run with the comparison replaced: every partition clean, but `defect` (partition) missing one record."""
    def compare(state):
        pair = state.pairs[0]
        counts = {partition: {"source_count": end - start, "target_count": pair.target_offsets[partition][1] - pair.target_offsets[partition][0],
                              "missing": int(partition == defect)}
                  for partition, (start, end) in pair.source_offsets.items()}
        return [report.topic_entry(pair, counts, {}, {}, {}, {}, 1.0)], []

    monkeypatch.setattr(job._Run, "compare", compare)
    prepared = Future()
    prepared.set_result(job.prepare(job_options))
    return job.run(Context(), job_options, prepared)


def test_the_first_incremental_run_is_full_and_the_next_one_checks_what_was_written_since(tmp_path, monkeypatch):
    mirror = Mirror(monkeypatch)
    first = run(monkeypatch, options(tmp_path))
    assert first["passed"] and first["coverage"] == {"mode": "incremental", "complete": True, "partitions_checked": 2, "partitions_total": 2,
                                                     "resumed": 0, "full": 2, "state": "%s: no state yet, every partition validated in"
                                                     " full" % (tmp_path / "state.json"), "state_written": True}
    state = json.loads((tmp_path / "state.json").read_text())["topics"]["orders"]
    assert (state["run"], state["partitions"]["0"]["source_offset"], state["partitions"]["0"]["target_offset"]) == (first["run"], 100, 100)
    assert state["partitions"]["0"]["source_last"][0] == 99 and state["partitions"]["1"]["target_last"][0] == 99

    mirror.append(0, 20, recopied=3)
    mirror.append(1, 5)
    second = job.prepare(options(tmp_path))
    assert second.error is None and ranges(second) == {0: ((100, 120), (100, 123)), 1: ((100, 105), (100, 105))}
    assert {key: plan.how for key, plan in second.plans.items()} == {(0, 0): "resumed", (0, 1): "resumed"}
    result = run(monkeypatch, options(tmp_path))
    assert result["message"].startswith("incremental: 2 partition(s) checked from the offsets validated before, 0 in full")
    assert result["topics"][0]["partitions"][0]["checked"]["validated_by"] == first["run"]
    saved = json.loads((tmp_path / "state.json").read_text())["topics"]["orders"]["partitions"]
    assert [(saved[p]["source_offset"], saved[p]["target_offset"]) for p in ("0", "1")] == [(120, 123), (105, 105)]


def test_a_remote_topic_recreated_with_as_many_records_is_checked_in_full_again(tmp_path, monkeypatch):
    mirror = Mirror(monkeypatch)
    run(monkeypatch, options(tmp_path))
    mirror.target.topics_held["primary.orders"][1] = records(b"other", 0, 100)  # deleted, recreated, refilled: same offsets
    state = job.prepare(options(tmp_path))
    assert ranges(state)[1] == ((0, 100), (0, 100)) and state.plans[(0, 1)].how == "full"
    assert "stale state: the target record at offset 99 is not the one validated" in state.plans[(0, 1)].reason


def test_retention_past_the_validated_offsets_starts_at_the_log_start(tmp_path, monkeypatch):
    mirror = Mirror(monkeypatch)
    run(monkeypatch, options(tmp_path))
    mirror.append(0, 50)
    del mirror.source.topics_held["orders"][0][:120]  # the source log now starts at 120, above the validated 100
    state = job.prepare(options(tmp_path))
    assert ranges(state)[0] == ((120, 150), (100, 150)) and state.plans[(0, 0)].how == "resumed"
    assert state.plans[(0, 0)].notes == ("source offsets 100 to 119 were deleted by retention before they were validated",)


def test_no_state_is_written_after_a_run_with_defects(tmp_path, monkeypatch):
    Mirror(monkeypatch)
    result = run(monkeypatch, options(tmp_path), defect=1)
    assert result["exit_code"] == report.DEFECTS and result["coverage"]["state_written"] is False
    assert not (tmp_path / "state.json").exists()


def test_a_corrupt_state_file_gives_a_full_run_that_replaces_it(tmp_path, monkeypatch):
    Mirror(monkeypatch)
    (tmp_path / "state.json").write_text("{half a file")
    result = run(monkeypatch, options(tmp_path))
    assert result["passed"] and result["coverage"]["full"] == 2 and "is not JSON" in result["checks"]["state"]
    assert json.loads((tmp_path / "state.json").read_text())["topics"]["orders"]["run"] == result["run"]


def test_an_unreadable_state_file_stops_the_run_before_kafka_is_read(tmp_path, monkeypatch):
    (tmp_path / "state.json").mkdir()

    def no_kafka(*_args):
        raise AssertionError("Kafka read before the state was read")

    monkeypatch.setattr(job, "open_reader", no_kafka)
    state = job.prepare(options(tmp_path))
    assert "state_file %s cannot be read" % (tmp_path / "state.json") in state.error


@pytest.mark.parametrize("mode, extra", [("bounded", {"sample_partitions": 1}), ("full", {})])
def test_other_modes_write_no_state_and_a_bounded_run_says_it_is_not_a_full_validation(tmp_path, monkeypatch, mode, extra):
    Mirror(monkeypatch)
    result = run(monkeypatch, options(tmp_path, mode, **extra))
    assert result["passed"] and list(tmp_path.iterdir()) == []
    if mode == "bounded":
        assert result["message"].startswith("bounded: 1 of 2 partition(s) checked, NOT a full validation")
        assert result["coverage"]["not_checked"] == [{"source_topic": "orders", "partitions": [1]}]
        assert [entry["partition"] for entry in result["topics"][0]["partitions"]] == [0]
    else:
        assert result["coverage"] == {"mode": "full", "complete": True, "partitions_checked": 2, "partitions_total": 2}


def test_a_target_emptied_below_the_validated_offset_is_stale_without_reading_past_its_end(tmp_path, monkeypatch):
    mirror = Mirror(monkeypatch)
    run(monkeypatch, options(tmp_path))
    mirror.target.topics_held["primary.orders"][0] = records(b"p0", 0, 40)  # recreated: its end (40) below the 100 validated
    asked = []
    reads = Cluster.read_ranges

    def read_ranges(cluster, ranges):
        ranges = list(ranges)
        asked.extend((part.topic, part.partition, part.start, part.end) for part in ranges)
        return reads(cluster, ranges)

    monkeypatch.setattr(Cluster, "read_ranges", read_ranges)
    state = job.prepare(options(tmp_path))
    assert ranges(state)[0] == ((0, 100), (0, 40)) and state.plans[(0, 0)].how == "full"
    assert "the target partition ends at offset 40, below the 100 validated before" in state.plans[(0, 0)].reason
    assert ("primary.orders", 0, 99, 100) not in asked and ("orders", 0, 99, 100) in asked


def test_a_state_that_cannot_be_written_makes_a_passed_run_exit_2_saying_so(tmp_path, monkeypatch):
    Mirror(monkeypatch)

    def disk_full(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(job.validation_state, "save", disk_full)
    result = run(monkeypatch, options(tmp_path))
    assert (result["exit_code"], result["coverage"]["state_written"]) == (report.UNAVAILABLE, False)
    assert "the mirror passed, but state_file %s could not be written" % (tmp_path / "state.json") in result["error"]
