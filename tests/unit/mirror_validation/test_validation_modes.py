# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The incremental and bounded modes without Kafka or Spark: where an incremental run starts in each partition (state,
retention, stale state), how MirrorMaker's re-copies after the validated offsets are told from unexpected records, the state
file, the partition sample and what the reports say was not checked; and that a failover never validates less than in full."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from mirror_validation import coverage, job, resume_plan, validation_state
from mirror_validation.comparison import compare_all
from mirror_validation.errors import ValidationUnavailable
from mirror_validation.fingerprint import record_fingerprint
from mirror_validation.html_report import render
from mirror_validation.options import job_options
from mirror_validation.partition_sample import sample
from mirror_validation.report import summary_message, topic_entry
from mirror_validation.topic_pairs import TopicPair

from tests.support.mirrors import LetterReaders, ListEngine, _records, topic_pair

CHECKOUT = Path(__file__).resolve().parents[3]
CONNECTION = {"bootstrap_servers": ["a:9092"]}
REQUIRED = {"source": CONNECTION, "target": CONNECTION, "topics": ".*", "source_alias": "primary"}


def stored(source_offset, target_offset, source_last=None, target_last=None):
    return {"source_offset": source_offset, "target_offset": target_offset, "source_last": source_last, "target_last": target_last}


# --- where an incremental run starts -----------------------------------------------------------------------------------

def test_without_state_a_partition_is_checked_in_full():
    plan = resume_plan.plan(None, (0, 500), (3, 503), {})
    assert (plan.how, plan.source_start, plan.target_start, plan.reason) == ("full", 0, 3, resume_plan.NO_STATE)


def test_with_state_only_what_was_written_since_is_checked():
    entry = stored(400, 402, [399, "aa"], [401, "bb"])
    assert resume_plan.last_records_to_check(entry) == [("source", 399), ("target", 401)]
    plan = resume_plan.plan(entry, (0, 500), (0, 503), {("source", 399): "aa", ("target", 401): "bb"})
    assert (plan.how, plan.source_start, plan.target_start, plan.resumed_source, plan.resumed_target, plan.notes) == (
        "resumed", 400, 402, True, True, ())


def test_retention_below_the_validated_offsets_starts_at_the_log_start_and_says_so():
    # Both last records validated are gone with retention: nothing to recognise the log by, the ends still agree.
    plan = resume_plan.plan(stored(400, 402, [399, "aa"], [401, "bb"]), (450, 500), (410, 503), {})
    assert (plan.how, plan.source_start, plan.target_start, plan.resumed_source, plan.resumed_target) == ("resumed", 450, 410, False, False)
    assert plan.notes == ("source offsets 400 to 449 were deleted by retention before they were validated",
                          "target offsets 402 to 409 were deleted by retention before they were validated")


@pytest.mark.parametrize("source_range, target_range, now, reason", [
    ((0, 500), (0, 300), {("source", 399): "aa", ("target", 401): "bb"},
     "the target partition ends at offset 300, below the 402 validated before"),
    ((0, 500), (0, 503), {("source", 399): "aa", ("target", 401): "cc"}, "the target record at offset 401 is not the one validated"),
    ((0, 500), (0, 503), {("source", 399): "aa", ("target", 401): None}, "the target record at offset 401 is gone"),
    ((0, 120), (0, 503), {("source", 399): "aa", ("target", 401): "bb"}, "the source partition ends at offset 120"),
])
def test_a_truncated_or_recreated_log_makes_the_state_stale_and_the_partition_is_checked_in_full(source_range, target_range, now, reason):
    plan = resume_plan.plan(stored(400, 402, [399, "aa"], [401, "bb"]), source_range, target_range, now)
    assert (plan.how, plan.source_start, plan.target_start) == ("full", 0, 0)
    assert plan.reason.startswith("stale state: ") and reason in plan.reason


# --- MirrorMaker's re-copies after the validated offsets ----------------------------------------------------------------

def _fingerprints(letters):
    return frozenset(record_fingerprint(None, letter.encode(), None, None) for letter in letters)


def compare_resumed(validated, new_source, new_target, resumed=(True, True)):
    """Compare a partition resumed at offsets (S, T) = (len(validated), len(validated)): source `validated` + `new_source`,
    target `validated` + `new_target`; MirrorMaker's re-copies come from the source records below S."""
    start = len(validated)
    pair = topic_pair({0: new_source}, {0: new_target}, {0: start}, {0: start})
    bounds = {(row[0], row[1]): row[2:] for row in pair.bounds()}
    reads = []

    def recopies(key, count):
        reads.append((key, count))
        return _fingerprints(validated[max(0, start - count):])

    engine = ListEngine(LetterReaders(_records({0: new_source}, {0: start}), _records({0: new_target}, {0: start})), 10)
    summaries, outcomes, _stats = compare_all(engine, [job.partition_work(pair, 0, (), ())], 10 ** 9, 100000, bounds, 10,
                                              {0: "orders"}, {(0, 0): resumed}, recopies)
    counts, samples, _misplaced, _anchors = job.partition_tables(summaries, outcomes, 10)
    return counts[(0, 0)], samples.get((0, 0), {}), reads


def test_records_copied_again_after_a_restart_are_duplicates_not_unexpected():
    counts, samples, reads = compare_resumed("ABCDE", "FGH", "DEFGH")
    assert (counts.get("duplicates"), counts.get("unexpected", 0), counts.get("missing", 0)) == (2, 0, 0)
    assert samples == {"duplicate": [5, 6]} and reads == [((0, 0), 2)]


def test_records_copied_again_after_new_ones_are_duplicates_too():
    # MirrorMaker copied F and G, then restarted from its last commit below the validated offset (D) and copied D to G again.
    counts, samples, reads = compare_resumed("ABCDE", "FGH", "FGDEFGH")
    assert (counts.get("duplicates"), counts.get("unexpected", 0), counts.get("missing", 0)) == (4, 0, 0)
    assert samples == {"duplicate": [7, 8, 9, 10]} and reads == [((0, 0), 4)]


def test_a_record_after_the_validated_offsets_that_the_source_never_had_is_unexpected():
    counts, samples, _reads = compare_resumed("ABCDE", "FGH", "DXFGH")
    assert (counts.get("duplicates"), counts.get("unexpected")) == (1, 1) and samples["unexpected"] == [6]


def test_a_record_lost_right_after_the_validated_offsets_is_missing_not_expired():
    counts, samples, _reads = compare_resumed("ABCDE", "FGH", "GH")
    assert (counts.get("missing"), counts.get("expired", 0)) == (1, 0) and samples == {"missing": [5]}


def test_only_new_records_with_nothing_copied_again_read_nothing_back():
    counts, _samples, reads = compare_resumed("ABCDE", "FGH", "FGH")
    assert (counts["source_count"], counts["target_count"], counts.get("duplicates", 0)) == (3, 3, 0) and reads == []


def test_after_source_retention_past_the_validated_offset_unmatched_copies_are_expired():
    # resumed_source False: the source range starts at its log start, above the validated offset.
    counts, _samples, reads = compare_resumed("ABCDE", "FGH", "DEFGH", resumed=(False, True))
    assert (counts.get("expired"), counts.get("unexpected", 0)) == (2, 0) and reads == []


# --- the state file ------------------------------------------------------------------------------------------------------

def test_the_state_round_trips_keeps_other_topics_and_leaves_no_partial_file(tmp_path):
    path = str(tmp_path / "state" / "flow.json")
    older = {"payments": validation_state.topic_entry("primary.payments", "run1", "2026-11-28T10:00:00+00:00", {0: (5, 5, None, None)})}
    validation_state.save(path, older, {"orders": validation_state.topic_entry("primary.orders", "run2", "2026-11-29T10:00:00+00:00",
                                                                               {0: (10, 12, [9, "aa"], [11, "bb"])})})
    topics, warning = validation_state.load(path)
    assert warning is None and sorted(topics) == ["orders", "payments"]
    assert validation_state.stored_partition(topics, "orders", "primary.orders", 0) == stored(10, 12, [9, "aa"], [11, "bb"])
    assert validation_state.stored_partition(topics, "orders", "other.orders", 0) is None  # another naming: no state
    assert os.listdir(os.path.dirname(path)) == ["flow.json"]


def test_no_state_file_yet_is_an_empty_state(tmp_path):
    assert validation_state.load(str(tmp_path / "none.json")) == ({}, None)


@pytest.mark.parametrize("text", ["{not json", json.dumps({"format": "other", "topics": {}}),
                                  json.dumps({"format": validation_state.FORMAT, "topics": {"orders": {"target_topic": "x"}}})])
def test_a_corrupt_state_file_means_a_full_run_with_a_warning(tmp_path, text):
    path = tmp_path / "flow.json"
    path.write_text(text)
    topics, warning = validation_state.load(str(path))
    assert topics == {} and "every partition validated in full" in warning and str(path) in warning


def test_an_unreadable_state_file_stops_the_run_naming_it(tmp_path):
    with pytest.raises(ValidationUnavailable, match="state_file .* cannot be read"):
        validation_state.load(str(tmp_path))  # a directory: read fails with IsADirectoryError


# --- options -------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("given, message", [
    (dict(REQUIRED, mode="incremental"), "state_file is required with mode incremental"),
    (dict(REQUIRED, mode="bounded"), "sample_partitions must be >= 1 with mode bounded"),
    (dict(REQUIRED, mode="bounded", sample_partitions=0), "sample_partitions must be >= 1"),
    (dict(REQUIRED, sample_partitions=2), "sample_partitions is used by mode bounded only"),
    (dict(REQUIRED, state_file="/x.json"), "state_file is used by mode incremental only"),
    (dict(REQUIRED, mode="quick"), "mode must be one of full, incremental, bounded"),
])
def test_mode_settings_are_checked_before_anything_runs(given, message):
    with pytest.raises(ValueError, match=message):
        job_options(given, {})


def test_full_is_the_default_mode():
    assert job_options(dict(REQUIRED), {}).mode == "full"


# --- bounded: the sample and what the reports say -----------------------------------------------------------------------

def test_the_sample_spreads_over_the_partitions_and_lists_the_others():
    assert sample(range(6), 2) == ([0, 3], [1, 2, 4, 5])
    assert sample(range(3), 5) == ([0, 1, 2], [])


def test_a_bounded_report_says_what_it_did_not_check():
    pair = TopicPair(0, "orders", "primary.orders", 4, 4, source_offsets={0: (0, 10), 2: (0, 10)}, target_offsets={0: (0, 10), 2: (0, 10)})
    counts = {partition: {"source_count": 10, "target_count": 10} for partition in (0, 2)}
    topics = [topic_entry(pair, counts, {}, {}, {}, {}, 0.0)]
    coverage.annotate_bounded(topics, [pair], {0: [1, 3]})
    covered, lead = coverage.summary("bounded", topics)
    assert covered == {"mode": "bounded", "complete": False, "partitions_checked": 2, "partitions_total": 4,
                       "not_checked": [{"source_topic": "orders", "partitions": [1, 3]}]}
    assert lead.startswith("bounded: 2 of 4 partition(s) checked, NOT a full validation")
    assert topics[0]["coverage"] == ["checked partitions 0, 2; NOT checked: partitions 1, 3"]
    page = render({"passed": True, "message": "%s; %s" % (lead, summary_message(topics)), "topics": topics, "started_at": "t",
                   "duration_s": 1.0, "records_per_s": 1, "coverage": covered})
    assert "NOT checked: partitions 1, 3" in page and "bounded: 2 of 4" in page


def test_an_incremental_report_says_which_ranges_were_checked_and_who_validated_the_rest():
    pair = TopicPair(0, "orders", "primary.orders", 2, 2, source_offsets={0: (400, 500), 1: (0, 50)}, target_offsets={0: (402, 503), 1: (0, 50)})
    topics = [topic_entry(pair, {0: {"source_count": 100, "target_count": 101}, 1: {"source_count": 50, "target_count": 50}},
                          {}, {}, {}, {}, 0.1)]
    entry = stored(400, 402, [399, "aa"], [401, "bb"])
    plans = {(0, 0): resume_plan.plan(entry, (0, 500), (0, 503), {("source", 399): "aa", ("target", 401): "bb"}),
             (0, 1): resume_plan.full((0, 50), (0, 50), resume_plan.NO_STATE)}
    state = {"orders": validation_state.topic_entry("primary.orders", "run7", "2026-11-28T10:00:00+00:00", {0: (400, 402, None, None)})}
    coverage.annotate_incremental(topics, [pair], plans, state)
    assert topics[0]["coverage"] == [
        "p0: source 400-499, target 402-502 checked; offsets below source 400 and target 402 were validated before, last by run run7 at"
        " 2026-11-28T10:00:00+00:00",
        "p1: source 0-49, target 0-49 checked in full (%s)" % resume_plan.NO_STATE]
    covered, lead = coverage.summary("incremental", topics)
    assert (covered["resumed"], covered["full"], covered["complete"]) == (1, 1, True)
    assert lead == "incremental: 1 partition(s) checked from the offsets validated before, 1 in full"


# --- failover ------------------------------------------------------------------------------------------------------------

_INCLUDES = ("include_role", "import_role", "ansible.builtin.include_role", "ansible.builtin.import_role")


def _runs_validation(node):
    role = node.get("role")
    included = [node[key].get("name") for key in _INCLUDES if isinstance(node.get(key), dict)]
    return any(isinstance(name, str) and name.endswith("mirror_validation") for name in [role] + included)


def _role_uses(node):
    """Every mapping of a playbook or task file that runs role mirror_validation (a play's roles, include/import_role)."""
    if isinstance(node, list):
        for item in node:
            yield from _role_uses(item)
    elif isinstance(node, dict):
        if _runs_validation(node):
            yield node
        for key, value in node.items():
            if key == "roles" and isinstance(value, list):  # a role named by a bare string runs with no vars
                yield from ({"role": item} for item in value if isinstance(item, str) and item.endswith("mirror_validation"))
            yield from _role_uses(value)


def test_a_failover_never_validates_in_another_mode_than_full():
    """A failover moves consumers onto the target: any validation it runs must be the full one, whatever
    mirror_validation_mode the inventory sets for scheduled runs. Today failover.yml runs none; a play or task added to it
    (or to the failover role) that runs mirror_validation must pin mirror_validation_mode to full."""
    files = [CHECKOUT / "playbooks" / "failover.yml"] + sorted((CHECKOUT / "roles" / "failover").rglob("*.yml"))
    assert (CHECKOUT / "playbooks" / "failover.yml").exists()
    for path in files:
        for use in _role_uses(yaml.safe_load(path.read_text())):
            variables = use.get("vars") or {}
            assert variables.get("mirror_validation_mode") == "full", "%s runs mirror_validation without mirror_validation_mode: full" % path


def test_the_failover_guard_finds_a_validation_without_full():
    play = [{"hosts": "mirrormaker", "roles": [{"role": "kafkaops.mirror.mirror_validation"}, "kafkaops.mirror.mirror_validation"]},
            {"tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirror.mirror_validation"}, "vars": {"mirror_validation_mode": "full"}}]}]
    uses = list(_role_uses(play))
    assert [(use.get("vars") or {}).get("mirror_validation_mode") for use in uses] == [None, None, "full"]
