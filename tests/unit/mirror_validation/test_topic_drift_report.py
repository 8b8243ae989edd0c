# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The topic settings drift in the validation report: the job reads what kafka_mirror_topic_drift_info returns (built here
by the module's own compare_flow, so the two cannot drift apart) and counts its errors as defects."""
from __future__ import annotations

import json

import pytest
from mirror_validation import topic_drift
from mirror_validation.html_report import render
from mirror_validation.report import DEFECTS, PASSED, UNAVAILABLE

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.topic_drift import alignment_entries, compare_flow
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import FlowNames

CONFIGS = {"cleanup.policy": "delete", "retention.ms": "604800000", "max.message.bytes": "1048588"}


def module_result(tmp_path, source_configs, target_partitions=3):
    """kafka_mirror_topic_drift_info's result for one topic, saved as the role saves it."""
    source = {"partitions": 3, "replication_factor": 1, "configs": dict(CONFIGS, **source_configs)}
    target = {"partitions": target_partitions, "replication_factor": 1, "configs": dict(CONFIGS)}
    report = compare_flow(FlowNames("primary", "secondary"), {"orders": source}, {"primary.orders": target}, 1)
    path = tmp_path / "topic_drift.json"
    path.write_text(json.dumps(dict(report, alignment=alignment_entries(report), changed=False)))
    return path


def validation(exit_code=PASSED):
    return {"passed": exit_code == PASSED, "exit_code": exit_code, "message": "1 topic(s), 3 partition(s) compared; no defects",
            "topics": [], "groups": [], "started_at": "2026-11-23T08:00:00Z", "duration_s": 1.0, "records_per_s": 1}


def test_an_error_makes_the_validation_fail_as_a_defect(tmp_path):
    drift = topic_drift.load(module_result(tmp_path, {"cleanup.policy": "compact"}, target_partitions=2))
    result = topic_drift.attach(validation(UNAVAILABLE), drift)
    assert (result["exit_code"], result["passed"]) == (DEFECTS, False)
    assert result["message"].endswith("topic settings break the mirror: 1 topic(s) compared, 0 in sync, 0 missing on the target, "
                                      "2 error(s), 0 warning(s), 0 other difference(s): errors in primary.orders partitions, "
                                      "primary.orders cleanup.policy")
    assert sorted(result["topic_drift"]) == sorted(topic_drift.KEPT)
    assert [item["check"] for item in result["topic_drift"]["findings"]] == ["partitions", "cleanup.policy"]


def test_warnings_and_other_differences_stay_in_the_report_without_changing_the_verdict(tmp_path):
    warned = topic_drift.attach(validation(), topic_drift.load(module_result(tmp_path, {"retention.ms": "-1"})))
    assert (warned["exit_code"], warned["message"]) == (PASSED, validation()["message"])
    assert [item["severity"] for item in warned["topic_drift"]["findings"]] == ["warning"]
    listed = topic_drift.attach(validation(), topic_drift.load(module_result(tmp_path, {"max.message.bytes": "1000"})))
    assert listed["exit_code"] == PASSED and listed["topic_drift"]["summary"]["infos"] == 1


def test_a_file_that_is_not_the_modules_result_is_refused(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"flow": "primary->secondary"}))
    with pytest.raises(ValueError, match="not a result of kafka_mirror_topic_drift_info"):
        topic_drift.load(path)
    with pytest.raises(ValueError, match="cannot be read as JSON"):
        topic_drift.load(tmp_path / "absent.json")


def test_the_html_page_has_the_drift_under_its_summary_and_each_difference_at_its_end(tmp_path):
    drift = topic_drift.load(module_result(tmp_path, {"cleanup.policy": "compact"}))
    page = render(topic_drift.attach(validation(), drift))
    assert '<p class="verdict failed">Topic settings (primary-&gt;secondary): 1 topic(s) compared' in page
    assert "<h2>Topic settings, primary-&gt;secondary</h2>" in page
    assert ('<tr class="defect"><td class="status">error</td><td class="name">primary.orders</td><td class="status">cleanup.policy</td>'
            '<td>compact</td><td>delete</td><td class="name">the target deletes by time and size what the source keeps by key '
            '(compact -&gt; delete): after retention.ms the target lacks keys the source still has. Fix: align the remote topic') in page
    assert "Topic settings" not in render(validation())
