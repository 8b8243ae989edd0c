# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The comparison per topic of a MirrorMaker 1 mirror (engine mm1) without Kafka or Spark: records matched across partitions
by fingerprint (missing, duplicates, unexpected), order per key and source partition, null keys without order, source and
target with different partition counts; what the options, the pairs and the reports say of an mm1 run."""
from __future__ import annotations

import jinja2
import pytest

from mirror_validation import mirrormaker1
from mirror_validation.html_report import render
from mirror_validation.naming import FlowNames
from mirror_validation.options import job_options
from mirror_validation.report import DEFECTS, PASSED, exit_code, topic_entry
from mirror_validation.topic_pairs import TopicPair, pair_topics

from tests.support.checkout import REPO
from tests.support.topic_mirrors import compare_topic

NAMES = ("missing", "duplicates", "unexpected", "order_violations")
REQUIRED = {"source": {"bootstrap_servers": "a:9092"}, "target": {"bootstrap_servers": "b:9092"}, "topics": ".*", "source_alias": "primary"}


def keyed(key, *values):
    return [(key, value) for value in values]


def defects(counts):
    """{(partition, name): count} of the defect counts that are not 0."""
    return {(partition, name): entry[name] for (_pair, partition), entry in counts.items() for name in NAMES if entry.get(name)}


def test_a_whole_copy_into_fewer_partitions_has_no_defect_and_counts_each_side_per_partition():
    source = {0: keyed("a", "1", "2", "3") + keyed("b", "1"), 1: keyed("c", "1", "2"), 2: keyed("d", "1", "2")}
    # MirrorMaker 1's producer partitions again by key: other partitions, another partition count, keys interleaved.
    target = {0: [("c", "1"), ("a", "1"), ("c", "2"), ("a", "2"), ("a", "3")], 1: [("d", "1"), ("b", "1"), ("d", "2")]}
    counts, samples = compare_topic(source, target)
    assert not defects(counts) and not samples
    assert {partition: (entry.get("source_count", 0), entry.get("target_count", 0)) for (_pair, partition), entry in counts.items()} == {
        0: (4, 5), 1: (2, 3), 2: (2, 0)}


def test_a_copy_into_more_partitions_has_no_defect():
    source = {0: keyed("a", "1", "2") + keyed("b", "1", "2")}
    target = {0: keyed("b", "1", "2"), 3: keyed("a", "1", "2"), 5: []}
    assert not defects(compare_topic(source, target)[0])


def test_a_record_without_a_copy_is_missing_where_it_was_read_on_the_source():
    source = {0: keyed("a", "1", "2", "3"), 1: keyed("b", "1", "2")}
    target = {0: [("a", "1"), ("a", "3"), ("b", "1"), ("b", "2")]}
    counts, samples = compare_topic(source, target)
    assert defects(counts) == {(0, "missing"): 1}
    assert samples == {(0, 0): {"missing": [1]}}


def test_copies_again_after_a_restart_are_duplicates_in_the_target_partition_and_break_no_order():
    source = {0: keyed("a", "1", "2", "3")}
    # At least once: MirrorMaker 1 restarted before committing and copied 2 and 3 again after them.
    target = {1: keyed("a", "1", "2", "3", "2", "3")}
    counts, samples = compare_topic(source, target)
    assert defects(counts) == {(1, "duplicates"): 2}
    assert samples == {(0, 1): {"duplicate": [3, 4]}}


def test_a_record_the_source_never_had_is_unexpected():
    counts, samples = compare_topic({0: keyed("a", "1")}, {0: keyed("a", "1"), 1: keyed("z", "9")})
    assert defects(counts) == {(1, "unexpected"): 1}
    assert samples == {(0, 1): {"unexpected": [0]}}


def test_a_record_the_source_holds_twice_needs_two_copies_and_the_later_one_is_named_missing():
    counts, samples = compare_topic({0: keyed("a", "1", "1")}, {0: keyed("a", "1")})
    assert defects(counts) == {(0, "missing"): 1} and samples == {(0, 0): {"missing": [1]}}


def test_a_key_whose_records_are_copied_out_of_order_is_an_order_violation_at_the_target_offset():
    source = {0: keyed("a", "1", "2", "3") + keyed("b", "1", "2")}
    target = {0: [("a", "1"), ("b", "2"), ("a", "3"), ("b", "1"), ("a", "2")]}
    counts, samples = compare_topic(source, target)
    # b2 before b1, a3 before a2: one break per key, named where the earlier source record landed.
    assert defects(counts) == {(0, "order_violations"): 2}
    assert samples == {(0, 0): {"order_violation": [3, 4]}}


def test_order_is_per_key_and_source_partition_and_null_keys_have_none():
    source = {0: keyed("a", "1", "2") + keyed(None, "x", "y"), 1: keyed("a", "3", "4")}
    # Key a's records of source partitions 0 and 1 interleave (two streams read them); the null-key records are reversed.
    target = {0: [("a", "3"), ("a", "1"), ("a", "4"), ("a", "2")], 1: [(None, "y")], 2: [(None, "x")]}
    assert not defects(compare_topic(source, target)[0])


def test_samples_are_limited_and_counts_exact():
    source = {0: [("k%d" % index, "v") for index in range(30)]}
    counts, samples = compare_topic(source, {0: []}, limit=4)
    assert defects(counts) == {(0, "missing"): 30} and samples[(0, 0)]["missing"] == [0, 1, 2, 3]


def test_duplicates_are_judged_against_the_ratio_per_topic():
    pair = TopicPair(0, "m1-orders", "m1-orders", 2, 3, source_offsets={0: (0, 3), 1: (0, 0)}, target_offsets={0: (0, 0), 2: (0, 5)})
    counts, samples = compare_topic({0: keyed("a", "1", "2", "3")}, {2: keyed("a", "1", "2", "3", "2", "3")})
    per_partition = {partition: entry for (_pair, partition), entry in counts.items()}
    tolerant = topic_entry(pair, per_partition, {partition: kinds for (_pair, partition), kinds in samples.items()}, {}, {}, {}, 1.0)
    strict = topic_entry(pair, per_partition, {}, {}, {}, {}, 0.01)
    assert [entry["partition"] for entry in tolerant["partitions"]] == [0, 1, 2]
    assert exit_code([tolerant]) == PASSED and tolerant["totals"]["duplicates"] == 2
    assert exit_code([strict]) == DEFECTS


def test_mirrormaker_1_pairs_topics_by_name_and_validates_in_full_only():
    names = FlowNames("primary", None, "default", ".")
    pairs = pair_topics({"m1-orders": 3, "other": 1}, {"m1-orders": 8}, "m1-.*", None, names, keep_names=True)
    assert [(pair.source_topic, pair.target_topic, pair.source_partitions, pair.target_partitions) for pair in pairs] == [
        ("m1-orders", "m1-orders", 3, 8)]
    assert job_options(dict(REQUIRED), {}).engine == "mm2"
    assert job_options(dict(REQUIRED, engine="mm1"), {}).engine == "mm1"
    for given, message in ((dict(mode="incremental", state_file="/s.json"), "mode incremental is not implemented for engine mm1"),
                           (dict(mode="bounded", sample_partitions=1), "mode bounded is not implemented for engine mm1"),
                           (dict(topic_drift_file="/d.json"), "topic_drift_file is not used with engine mm1"),
                           (dict(engine="mm3"), "engine must be one of mm2, mm1")):
        with pytest.raises(ValueError, match=message):
            job_options({**REQUIRED, "engine": "mm1", **given}, {})


def mm1_report():
    pair = TopicPair(0, "m1-orders", "m1-orders", 1, 2, source_offsets={0: (0, 2)}, target_offsets={0: (0, 1), 1: (0, 1)})
    topics = [mirrormaker1.without_not_counted(topic_entry(pair, {0: {"source_count": 2, "target_count": 1}, 1: {"target_count": 1}},
                                                           {}, {}, {}, {}, 0.01))]
    checks = dict(mirrormaker1.CHECKED, catch_up="the target's end offsets stopped moving")
    return {"passed": True, "exit_code": 0, "message": mirrormaker1.LEAD + "; no defects", "topics": topics, "records_read": 4,
            "duration_s": 1.0, "records_per_s": 4, "spark_master": "local[2]", "client": "kafka-python", "checks": checks, "run": "abc",
            "coverage": {"mode": "full", "complete": True}, "engine": "mm1", "not_applicable": dict(mirrormaker1.NOT_APPLICABLE),
            "started_at": "2026-11-29T04:00:00+00:00", "groups": []}


def test_the_reports_say_which_checks_apply_to_mirrormaker_1_and_which_are_not_applicable():
    report = mm1_report()
    assert {"anchors", "checkpoints", "offset_syncs", "partitions"} <= set(report["not_applicable"])
    assert not {"anchors", "checkpoints", "offset_syncs"} & set(report["checks"]), "a check MirrorMaker 1 has no data for is not 'skipped'"
    page = render(report)
    assert "MirrorMaker 1 mirror: records matched per topic across partitions" in page
    assert "not applicable, <b>checkpoints</b>: MirrorMaker 1 writes no consumer-group checkpoints" in page
    assert "skipped" not in page.replace("(not skipped)", "")
    # no count of what MirrorMaker 1 gives nothing for: a dash in the tables, not a 0 that reads as checked
    assert not set(mirrormaker1.NOT_COUNTED) & set(report["topics"][0]["totals"]) and "<td>&ndash;</td>" in page
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(REPO / "roles" / "mirror_validation" / "templates")),
                             undefined=jinja2.StrictUndefined, trim_blocks=True)
    lines = env.get_template("summary.j2").render(mirror_validation_report=report, mirror_validation_report_dir="/r",
                                                  inventory_hostname="hn0").splitlines()
    assert lines[1].startswith("MirrorMaker 1 mirror, checked: records compared per topic across partitions by fingerprint")
    assert lines[2] == "Not applicable to MirrorMaker 1 (not skipped):"
    assert "  anchors: offset-sync anchors: MirrorMaker 1 writes no offset syncs" in lines
    assert not [line for line in lines if "skipped" in line and "not skipped" not in line]
    row = next(line for line in lines if line.startswith("m1-orders"))
    assert row.split()[-4:] == ["-", "-", "-", "passed"], row  # expired, anchors, ckpt
