# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The role's summary lines (templates/summary.j2) for each mode: a bounded run says it is not a full validation and which
partitions it left out, an incremental run what it resumed, a full run nothing more. Rendered with plain Jinja2."""
from __future__ import annotations

import jinja2

from mirror_validation import coverage
from mirror_validation.report import topic_entry
from mirror_validation.topic_pairs import TopicPair

from tests.support.checkout import REPO

TEMPLATES = REPO / "roles" / "mirror_validation" / "templates"


def summary(report):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined, trim_blocks=True)
    return env.get_template("summary.j2").render(mirror_validation_report=report, mirror_validation_report_dir="/reports",
                                                 inventory_hostname="hn0").splitlines()


def report(mode, not_checked=None):
    pair = TopicPair(0, "orders", "primary.orders", 3, 3, source_offsets={0: (0, 10)}, target_offsets={0: (0, 10)})
    topics = [topic_entry(pair, {0: {"source_count": 10, "target_count": 10}}, {}, {}, {}, {}, 0.0)]
    if mode == "bounded":
        coverage.annotate_bounded(topics, [pair], {0: not_checked})
    covered, lead = coverage.summary(mode, topics)
    return {"passed": True, "exit_code": 0, "message": lead or "no defects", "topics": topics, "records_read": 20, "duration_s": 1.0,
            "records_per_s": 20, "spark_master": "local[2]", "client": "kafka-python", "checks": {}, "run": "abc", "coverage": covered}


def test_a_bounded_run_says_it_is_not_a_full_validation_and_lists_what_it_left_out():
    lines = summary(report("bounded", [1, 2]))
    assert lines[0].startswith("Mirror validation PASSED, NOT a full validation (exit code 0): bounded: 1 of 3 partition(s) checked")
    assert "NOT checked (bounded run, 1 of 3 partitions checked):" in lines and "  orders partitions 1, 2" in lines


def test_a_full_run_reads_as_before():
    for full in (report("full"), {key: value for key, value in report("full").items() if key != "coverage"}):
        lines = summary(full)
        assert lines[0] == "Mirror validation PASSED (exit code 0): no defects"
        assert not [line for line in lines if "NOT" in line or "ncremental" in line]
