# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters kafkaops.mirror.mm2_cutover_record and kafkaops.mirror.mm2_cutover_hold as the roles call them: the record's
text as slurped from the host ('' when there is no file) goes in, its JSON comes out."""
import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.filter import mm2_cutover as plugin

AT = "2026-11-26T13:00:00Z"
FLOWS = [{"source": "primary", "target": "secondary"}]


def test_both_filters_are_registered():
    assert set(plugin.FilterModule().filters()) == {"mm2_cutover_record", "mm2_cutover_hold"}


def test_record_written_by_failover_is_read_back_by_mirrormaker2():
    text = json.dumps(plugin.mm2_cutover_record("", "primary", "secondary", AT, ["d2-.*"], None, "failover.yml"))
    plan = plugin.mm2_cutover_hold(text, FLOWS, False, False)
    assert plan["hold"] and "failed over at %s by failover.yml" % AT in plan["lines"][0]
    # A second failover of another flow keeps the first.
    again = plugin.mm2_cutover_record(text, "east", "west", AT)
    assert list(again["flows"]) == ["east->west", "primary->secondary"]


def test_no_file_holds_nothing():
    assert not plugin.mm2_cutover_hold("", FLOWS)["hold"]
    assert not plugin.mm2_cutover_hold(None, FLOWS)["hold"]


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_a_damaged_record_fails_instead_of_guessing(text):
    with pytest.raises(AnsibleFilterError, match="cut-over record"):
        plugin.mm2_cutover_hold(text, FLOWS)


def test_flows_without_aliases_fail_with_the_variable_named():
    with pytest.raises(AnsibleFilterError, match="mirrormaker2_flows"):
        plugin.mm2_cutover_hold("", [{"target": "secondary"}])


def test_record_without_a_time_fails():
    with pytest.raises(AnsibleFilterError, match="mm2_cutover_record: a cut-over needs its time"):
        plugin.mm2_cutover_record("", "primary", "secondary", "")
