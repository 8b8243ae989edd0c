# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failover's cut-over record and what the mirrormaker2 role does about it."""
import pytest

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_cutover import add_cutover, hold_plan

AT = "2026-11-26T13:00:00Z"
FLOWS = [{"source": "primary", "target": "secondary"}]


def test_first_cutover_makes_a_record():
    record = add_cutover(None, "primary", "secondary", AT, ["d2-.*"], None)
    assert record == {"format": 1, "flows": {"primary->secondary": {
        "source": "primary", "target": "secondary", "failed_over_at": AT, "groups": ["d2-.*"], "groups_exclude": None, "by": "failover.yml"}}}


def test_another_flow_is_added_and_a_repeated_one_replaced():
    record = add_cutover(None, "primary", "secondary", AT, [".*"])
    record = add_cutover(record, "east", "west", AT, ["app"], ["tmp-.*"])
    record = add_cutover(record, "primary", "secondary", "2026-11-27T08:00:00Z", ["orders-.*"])
    assert list(record["flows"]) == ["east->west", "primary->secondary"]
    assert record["flows"]["primary->secondary"]["failed_over_at"] == "2026-11-27T08:00:00Z"
    assert record["flows"]["primary->secondary"]["groups"] == ["orders-.*"]
    assert record["flows"]["east->west"]["groups_exclude"] == ["tmp-.*"]


def test_a_record_that_is_not_one_counts_as_none():
    assert list(add_cutover({"something": "else"}, "a", "b", AT)["flows"]) == ["a->b"]
    assert list(add_cutover({"flows": ["a->b"]}, "c", "d", AT)["flows"]) == ["c->d"]


@pytest.mark.parametrize("source, target, at", [("", "b", AT), ("a", None, AT), ("a", "b", "")])
def test_a_cutover_needs_both_aliases_and_a_time(source, target, at):
    with pytest.raises(ValueError):
        add_cutover(None, source, target, at)


def test_no_record_holds_nothing():
    plan = hold_plan(None, FLOWS)
    assert plan == {"held": [], "hold": False, "lines": [], "flows": {}, "record": None, "remove": False, "resumes": False}


def test_a_failed_over_flow_keeps_mirrormaker_stopped_and_says_why():
    plan = hold_plan(add_cutover(None, "primary", "secondary", AT, [".*"]), FLOWS)
    assert plan["hold"] and plan["held"] == ["primary->secondary"] and not plan["resumes"] and not plan["remove"]
    assert plan["lines"] == ["flow primary->secondary was failed over at %s by failover.yml; MirrorMaker stays stopped so the cut-over "
                             "holds; set mirrormaker2_resume_after_failover: true to mirror again" % AT]
    assert list(plan["flows"]) == ["primary->secondary"] and plan["record"]["flows"] == plan["flows"]


def test_a_record_of_other_flows_holds_nothing_and_stays():
    record = add_cutover(None, "primary", "secondary", AT)
    # Fail-back: the flows now run the other way; the record of the cut-over stays for the flow it names.
    plan = hold_plan(record, [{"source": "secondary", "target": "primary"}, {"source": "primary", "target": "secondary", "enabled": False}])
    assert not plan["hold"] and plan["held"] == [] and not plan["resumes"]
    assert list(plan["flows"]) == ["primary->secondary"]


def test_one_held_flow_of_several_stops_the_whole_mirrormaker():
    record = add_cutover(None, "primary", "secondary", AT)
    plan = hold_plan(record, FLOWS + [{"source": "secondary", "target": "primary"}])
    assert plan["hold"] and plan["held"] == ["primary->secondary"]


def test_resume_removes_the_flow_and_the_file_when_nothing_is_left():
    plan = hold_plan(add_cutover(None, "primary", "secondary", AT), FLOWS, resume=True)
    assert not plan["hold"] and plan["resumes"] and plan["remove"] and plan["record"] is None and plan["flows"] == {}
    assert plan["lines"] == ["flow primary->secondary was failed over at %s by failover.yml; mirrormaker2_resume_after_failover is true, "
                             "so MirrorMaker resumes mirroring it and the cut-over record of the flow is removed" % AT]


def test_resume_keeps_other_flows_in_the_record():
    record = add_cutover(add_cutover(None, "primary", "secondary", AT), "east", "west", AT)
    plan = hold_plan(record, FLOWS, resume=True)
    assert plan["resumes"] and not plan["remove"] and list(plan["record"]["flows"]) == ["east->west"]


def test_resume_in_check_mode_says_what_would_happen():
    plan = hold_plan(add_cutover(None, "primary", "secondary", AT), FLOWS, resume=True, check_mode=True)
    assert "would resume" in plan["lines"][0] and "would be removed" in plan["lines"][0]


def test_resume_without_a_record_changes_nothing():
    plan = hold_plan(None, FLOWS, resume=True)
    assert not plan["resumes"] and not plan["remove"] and not plan["hold"]
