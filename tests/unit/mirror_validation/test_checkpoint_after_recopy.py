# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A checkpoint that points into the second copy of records MirrorMaker copied again after a restart skips nothing.

MirrorMaker 2 is at least once: Connect's WorkerSourceTask commits the source offsets every offset.flush.interval.ms, so a
MirrorMaker killed with -9 starts again from its last commit and copies those records a second time, after their first
copies. From 3.4.1 its checkpoints translate through the offset syncs emitted since then (OffsetSyncStore clears its history
when the upstream offsets rewind), so a group inside the re-copied range gets a downstream offset in the second copy. Judged
by first copies only (checkpoint_verdict) that looks like skipping records; the job checks the copies after it.
"""
from __future__ import annotations

from mirror_validation import job, mm2_checks
from mirror_validation.job import _Run
from mirror_validation.options import JobOptions
from mirror_validation.kafka_reader import RawRecord
from mirror_validation.topic_pairs import TopicPair

# Source offsets 0..9; the target has them copied to 7, then (restart after a commit at 4) 5..9 again: offsets 8..12.
SOURCE_INDEXES = list(range(10))
TARGET_INDEXES = list(range(8)) + list(range(5, 10))


def record(offset, index):
    return RawRecord(offset, b"k%d" % index, b"v%d" % index, None, 1000 + index)


class Cluster:
    """kafka_reader's read_ranges over one single-partition topic, as a reader context manager."""

    def __init__(self, topic, indexes):
        self.topic, self.records = topic, [record(offset, index) for offset, index in enumerate(indexes)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read_ranges(self, ranges):
        for part in ranges:
            assert part.topic == self.topic
            for offset in range(part.start, part.end):
                yield part, self.records[offset]


def test_copies_after_the_downstream_offset_must_hold_every_record_from_the_upstream_offset():
    sources = [record(offset, offset) for offset in range(7, 10)]
    second_copy = [record(offset, index) for offset, index in enumerate(TARGET_INDEXES)][10:]  # 7, 8, 9
    assert mm2_checks.copied_again(sources, second_copy, with_timestamp=True)
    assert not mm2_checks.copied_again(sources, second_copy[1:], with_timestamp=True)  # 7 only before offset 11


def run_with_clusters(monkeypatch):
    clusters = {"source": Cluster("orders", SOURCE_INDEXES), "target": Cluster("primary.orders", TARGET_INDEXES)}
    monkeypatch.setattr(job, "open_reader", lambda connection, _client, _timeout: clusters[connection])
    run = _Run(JobOptions(source="source", target="target", topics=".*", source_alias="primary"))
    run.pairs = [TopicPair(0, "orders", "primary.orders", 1, 1, with_timestamp=True)]
    return run


def test_a_checkpoint_in_the_second_copy_is_safe_and_one_past_a_record_is_not(monkeypatch):
    run = run_with_clusters(monkeypatch)
    bounds = (0, 10, 0, 13, False)  # source begin, end, target begin, end, behind
    # Group at 7: its first copy is at target offset 7, its second at 10. By first copies, 10 skips records.
    assert mm2_checks.checkpoint_verdict(10, 7, 13) == (7, mm2_checks.SKIPS_RECORDS)
    assert run._copied_again({"pair": 0, "partition": 0, "upstream": 7, "downstream": 10}, bounds)
    # Downstream 11 leaves record 7 behind in both copies: a real skip.
    assert not run._copied_again({"pair": 0, "partition": 0, "upstream": 7, "downstream": 11}, bounds)


def test_ranges_larger_than_a_slice_keep_the_first_copy_verdict(monkeypatch):
    run = run_with_clusters(monkeypatch)
    run.options.slice_records = 5  # 3 source + 3 target offsets
    assert not run._copied_again({"pair": 0, "partition": 0, "upstream": 7, "downstream": 10}, (0, 10, 0, 13, False))
