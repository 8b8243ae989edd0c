# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from mirror_validation.html_report import render
from mirror_validation.report import DEFECTS, PASSED, UNAVAILABLE, exit_code, summary_message, topic_entry
from mirror_validation.topic_pairs import TopicPair


def pair(target_exists=True):
    return TopicPair(0, "orders", "primary.orders", 2, 2 if target_exists else None,
                     source_offsets={0: (0, 100), 1: (0, 100)}, target_offsets={0: (0, 100), 1: (0, 101)} if target_exists else {})


def counts(**extra):
    base = {"source_count": 100, "target_count": 100}
    return {0: dict(base), 1: dict(base, **extra)}


def test_clean_topic_passes():
    topic = topic_entry(pair(), counts(), {}, {}, {}, {}, 0.0)
    assert topic["status"] == "passed" and exit_code([topic]) == PASSED
    assert topic["totals"]["source_count"] == 200


def test_loss_is_a_defect_with_samples():
    topic = topic_entry(pair(), counts(missing=1, target_count=99), {1: {"missing": [42]}}, {}, {}, {}, 0.0)
    assert exit_code([topic]) == DEFECTS
    assert topic["partitions"][1]["defects"] == ["missing"]
    assert topic["partitions"][1]["samples"] == {"missing": [42]}
    assert "missing 1" in summary_message([topic])


def test_duplicates_judged_against_the_ratio():
    within = topic_entry(pair(), counts(duplicates=1, target_count=101), {}, {}, {}, {}, 0.01)
    beyond = topic_entry(pair(), counts(duplicates=1, target_count=101), {}, {}, {}, {}, 0.001)
    assert within["status"] == "passed" and within["totals"]["duplicate_ratio"] == 0.005
    assert beyond["status"] == "defects" and beyond["partitions"][1]["defects"] == ["duplicates"]


def test_missing_target_cannot_be_validated_but_defects_win():
    missing = topic_entry(pair(target_exists=False), {}, {}, {}, {}, {}, 0.0)
    assert missing["status"] == "target_missing" and exit_code([missing]) == UNAVAILABLE
    broken = topic_entry(pair(), counts(unexpected=1), {}, {}, {}, {}, 0.0)
    assert exit_code([missing, broken]) == DEFECTS
    assert exit_code([], error="timeout") == UNAVAILABLE


def test_a_target_behind_the_snapshot_cannot_be_validated_but_defects_win():
    lagging = pair()
    lagging.target_behind = {1}
    behind = topic_entry(lagging, counts(pending=7, target_count=93), {1: {"pending": [93, 94]}}, {}, {}, {}, 0.0)
    assert behind["status"] == "behind" and exit_code([behind]) == UNAVAILABLE
    assert behind["partitions"][1]["defects"] == [] and behind["partitions"][1]["target_behind"] is True
    assert behind["totals"]["pending"] == 7 and behind["partitions"][1]["samples"] == {"pending": [93, 94]}
    assert "7 source record(s) not on the target" in summary_message([behind])
    broken = topic_entry(pair(), counts(missing=1), {}, {}, {}, {}, 0.0)
    assert exit_code([behind, broken]) == DEFECTS


def test_html_is_self_contained_and_opens_with_one_summary_of_topics_and_groups():
    broken = topic_entry(pair(), counts(missing=3), {1: {"missing": [5, 50, 95]}}, {}, {}, {}, 0.0)
    clean = topic_entry(TopicPair(1, "payments", "primary.payments", 1, 1, source_offsets={0: (0, 10)}, target_offsets={0: (0, 10)}),
                        {0: {"source_count": 10, "target_count": 10}}, {}, {}, {}, {}, 0.0)
    page = render({"passed": False, "message": "defects <found>", "started_at": "now", "duration_s": 1.0, "records_per_s": 5,
                   "client": "kafka-python", "checks": {"catch_up": "target caught up"}, "topics": [broken, clean],
                   "groups": [{"group": "billing", "source_topic": "orders", "target_topic": "primary.orders", "partition": 0,
                               "upstream_offset": 4, "downstream_offset": 9, "limit": 4, "ok": False, "violation": "skips records on the target"}]})
    assert "defects &lt;found&gt;" in page
    assert "src=" not in page and "href=" not in page and "<script" not in page and "url(" not in page
    summary = page[page.index('<table class="summary">'):page.index("</table>")]
    assert summary.index("orders &rarr; primary.orders") < summary.index("payments &rarr;") < summary.index("group billing")
    assert page.index('<table class="summary">') < page.index("<svg")
    # the strips: every sampled missing offset marked on partition 1's source lane, the clean topic one green band
    assert [page.count("partition 1: missing at source offset %d</title>" % offset) for offset in (5, 50, 95)] == [1, 1, 1]
    assert page.count('fill="#9fd4a8"') == 4  # two lanes of partition 0 of orders and of payments
