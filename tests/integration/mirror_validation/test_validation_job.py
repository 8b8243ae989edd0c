# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation job against small mirrors on the sandbox, each broken in one known way.

One job run covers all scenarios (each is its own topic); single-topic runs check the exit codes.
Every expectation is derived from how mirror_copy broke the copy, not from the job's own output.
"""
from __future__ import annotations

import re
import time

import pytest

from tests.support import mirror_copy
from tests.support.mirror_copy import Scenario
from tests.support.validation_runs import COMBINED_ARGUMENTS, comparable, scenario_regex as regex, topic_of

pytestmark = [
    pytest.mark.integration,
    pytest.mark.spark,
    # kafka-python 3.0.12 reads its protocol schemas with importlib.resources.read_text (docs/reference/toolchain.md #9)
    pytest.mark.filterwarnings("ignore:open_text is deprecated:DeprecationWarning"),
]
CLASSES = ("missing", "duplicates", "unexpected", "order_violations", "expired", "anchor_mismatches", "checkpoint_violations")


def defects_of(topic):
    """{(partition, class): count} of every non-zero defect class."""
    return {(p["partition"], name): p[name] for p in topic["partitions"] for name in CLASSES if p[name]}


def test_clean_mirror_passes_with_every_record_matched(combined, mirrors):
    code, report = combined
    topic = topic_of(report, mirrors["clean"]["source_topic"])
    assert topic["status"] == "passed" and defects_of(topic) == {}
    assert [(p["source_count"], p["target_count"], p["anchors_checked"]) for p in topic["partitions"]] == [(100, 100, 1)] * 3
    assert topic["fingerprint_includes_timestamp"] is True
    assert code == 1 and report["passed"] is False  # the other scenarios are broken


@pytest.mark.parametrize("scenario, defects, samples", [
    ("loss", {(1, "missing"): 1}, {1: {"missing": [37]}}),
    ("duplicates", {(2, "duplicates"): 3}, {2: {"duplicates": [51, 62, 73]}}),
    ("reorder", {(0, "order_violations"): 1}, {0: {"order_violations": [11]}}),
    ("corrupt", {(1, "missing"): 1, (1, "unexpected"): 1}, {1: {"missing": [20], "unexpected": [20]}}),
    ("wrong-partition", {(0, "missing"): 1, (2, "unexpected"): 1},
     {0: {"missing": [5], "misplaced": [{"source_offset": 5, "target_partition": 2, "target_offset": 5}]}, 2: {"unexpected": [5]}}),
    ("bad-sync", {(0, "anchor_mismatches"): 1}, {0: {"anchor_mismatches": [{"upstream": 10, "downstream": 11}]}}),
    ("checkpoints", {(1, "checkpoint_violations"): 1, (2, "checkpoint_violations"): 1}, {}),
])
def test_each_injected_defect_is_classified(combined, mirrors, scenario, defects, samples):
    _first, report = combined
    topic = topic_of(report, mirrors[scenario]["source_topic"])
    assert topic["status"] == "defects"
    assert defects_of(topic) == defects
    assert {p["partition"]: p["samples"] for p in topic["partitions"] if p["samples"]} == samples
    assert {(p["partition"], d) for p in topic["partitions"] for d in p["defects"]} == set(defects)


def test_checkpoint_groups_are_reported(combined, mirrors):
    _first, report = combined
    target = mirrors["checkpoints"]["target_topic"]
    groups = [(g["partition"], g["upstream_offset"], g["downstream_offset"], g["ok"], g["violation"])
              for g in report["groups"] if g["target_topic"] == target]
    assert groups == [(0, 40, 40, True, None), (1, 40, 45, False, "skips records on the target"),
                      (2, 100, 101, False, "beyond the target end offset")]


def test_at_least_once_duplicates_within_the_threshold_pass(combined, mirrors):
    _first, report = combined
    topic = topic_of(report, mirrors["at-least-once"]["source_topic"])
    assert topic["status"] == "passed" and topic["totals"]["duplicates"] == 1
    assert topic["totals"]["duplicate_ratio"] == pytest.approx(1 / 300)


def test_records_deleted_by_source_retention_are_expired_not_unexpected(combined, mirrors):
    _first, report = combined
    topic = topic_of(report, mirrors["expired"]["source_topic"])
    assert topic["status"] == "passed" and defects_of(topic) == {(p, "expired"): 20 for p in range(3)}
    assert [(p["source_count"], p["target_count"], p["samples"]["expired"][:3]) for p in topic["partitions"]] == [(80, 100, [0, 1, 2])] * 3


def test_missing_target_topic_is_reported(combined, mirrors):
    _first, report = combined
    topic = topic_of(report, mirrors["missing-target"]["source_topic"])
    assert topic["status"] == "target_missing" and mirrors["missing-target"]["target_topic"] in topic["error"]


def test_a_target_short_of_its_offset_syncs_has_its_tail_pending(combined, mirrors):
    _first, report = combined
    topic = topic_of(report, mirrors["lagging"]["source_topic"])
    assert topic["status"] == "behind" and defects_of(topic) == {}
    assert [(p["partition"], p["target_count"], p["pending"], p["target_behind"]) for p in topic["partitions"]] == [
        (0, 80, 20, True), (1, 100, 0, False), (2, 100, 0, False)]
    assert topic["partitions"][0]["samples"] == {"pending": list(range(80, 90))}
    assert "stopped short of the source snapshot on" in report["checks"]["catch_up"]


@pytest.mark.parametrize("scenarios, code", [
    (("clean",), 0),
    (("loss",), 1),
    (("clean", "missing-target"), 2),
    (("clean", "lagging"), 2),
])
def test_exit_codes(mirrors, run_job, scenarios, code):
    """One run per exit code; how defects, thresholds and missing topics combine is unit-tested (test_report.py)."""
    got, report = run_job(regex(mirrors, *scenarios))
    assert (got, report["exit_code"], report["passed"]) == (code, code, code == 0)
    assert [t["source_topic"] for t in report["topics"]] == sorted(mirrors[name]["source_topic"] for name in scenarios)


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka"])
def test_a_two_record_window_gives_the_same_report_with_either_client(combined, mirrors, run_job, client):
    """Every record may wait for its counterpart only while two more of its side are read, in small tasks: records
    leave their task as residue, and partitions whose records waited longer are read again whole. The combined run
    waited up to 100000 records per side in a few tasks."""
    _first, default_window = combined
    code, report = run_job(regex(mirrors), *COMBINED_ARGUMENTS, "--client", client, "--window-records", "2", "--task-records", "500")
    assert report["client"] == client and default_window["client"] == "confluent-kafka"
    assert report["timings"]["read_tasks"] > default_window["timings"]["read_tasks"]
    assert (code, comparable(report)) == (1, comparable(default_window))


def test_unreachable_cluster_cannot_be_validated(sandbox, mirrors, run_job):
    nobody = "127.%d.0.9:9092" % sandbox["net"]  # in the test's own block, where the sandbox runs nothing
    code, report = run_job(regex(mirrors, "clean"), "--target-bootstrap", nobody, "--read-timeout", "3")
    assert code == 2 and report["passed"] is False
    assert nobody in report["error"]


def test_bad_arguments_fail_before_touching_kafka(mirrors, run_job, capsys):
    from mirror_validation.cli import main

    assert main(["--source-bootstrap", "x", "--target-bootstrap", "y", "--topics", ".*", "--source-alias", "primary",
                 "--max-duplicate-ratio", "-1"]) == 2
    assert "max_duplicate_ratio must be >= 0" in capsys.readouterr().err


def test_an_incremental_run_checks_only_what_was_appended_since_the_last_passed_one(sandbox, run_job, tmp_path):
    """The first incremental run has no state: it checks in full and writes the state. After 20 records appended per
    partition and copied, MirrorMaker having copied the last 3 validated records of partition 0 again first (a restart
    before its commit), and on partition 1 the first 5 new ones, then the last 2 validated ones and all new ones again (a
    restart later, from a commit below the validated offset), the next run checks only the appended ranges, counts the
    re-copies as duplicates, and its ranges end where an independent kafka-python client reads the logs' ends."""
    names = mirror_copy.build_on(sandbox, "mvinc", [Scenario("incremental")])["incremental"]
    source, target = (sandbox["clusters"][alias]["bootstrap_servers"] for alias in (mirror_copy.SOURCE_ALIAS, mirror_copy.TARGET_ALIAS))
    state = tmp_path / "state" / "flow.json"
    incremental = ("--mode", "incremental", "--state-file", str(state), "--max-duplicate-ratio", "0.5")
    code, first = run_job(re.escape(names["source_topic"]), *incremental)
    assert (code, first["coverage"]["full"], first["coverage"]["state_written"]) == (0, 3, True) and state.exists()

    validated = mirror_copy.read_back(source, names["source_topic"])
    stamp = int(time.time() * 1000)
    appended = {p: [mirror_copy.Record(b"new-%d" % i, b"appended p%d #%d" % (p, i), [], stamp + i) for i in range(20)] for p in range(3)}
    mirror_copy.produce(source, names["source_topic"], appended)
    new = {p: records[100:] for p, records in mirror_copy.read_back(source, names["source_topic"]).items()}
    copies = {0: validated[0][-3:] + new[0], 1: new[1][:5] + validated[1][-2:] + new[1], 2: new[2]}
    mirror_copy.produce(target, names["target_topic"], copies)

    code, second = run_job(re.escape(names["source_topic"]), *incremental)
    topic = topic_of(second, names["source_topic"])
    assert code == 0 and second["coverage"]["resumed"] == 3 and second["message"].startswith("incremental: 3 partition(s)")
    source_now, target_now = mirror_copy.read_back(source, names["source_topic"]), mirror_copy.read_back(target, names["target_topic"])
    assert [(p["source_offsets"], p["target_offsets"]) for p in topic["partitions"]] == [
        ([100, len(source_now[p])], [100, len(target_now[p])]) for p in range(3)]
    assert [(p["source_count"], p["target_count"], p["duplicates"], p["unexpected"], p["missing"]) for p in topic["partitions"]] == [
        (20, 23, 3, 0, 0), (20, 27, 7, 0, 0), (20, 20, 0, 0, 0)]
    assert topic["partitions"][0]["checked"]["validated_by"] == first["run"]
