# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Group reads of kafka_mirror_offsets (plugins/module_utils/mm2_offsets.py) against admin clients that answer oddly."""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils import mm2_offsets


class Admin:
    """The two admin calls group_activity makes, answering as a broker with members in `stable` would."""

    def __init__(self, describe_error=None):
        self.describe_error = describe_error

    def describe_groups(self, groups):
        if self.describe_error:
            raise self.describe_error
        return {"stable": {"group_state": "Stable", "members": [{"member_id": "m"}]}, "empty": {"group_state": "Empty", "members": []}}

    @staticmethod
    def list_groups():
        return [{"group_id": "stable", "protocol_type": "consumer", "group_state": "Stable"},
                {"group_id": "empty", "protocol_type": "consumer", "group_state": "Empty"},
                {"group_id": "simple", "protocol_type": ""}]


def test_group_activity_from_describe_groups():
    warnings = []
    activity = mm2_offsets.group_activity(Admin(), ["stable", "empty"], warnings)
    assert activity == {"stable": (True, "Stable", 1), "empty": (False, "Empty", 0)} and warnings == []


def test_an_undecodable_describe_groups_reply_falls_back_to_list_groups():
    """kafka-python raises ValueError for a DescribeGroups reply it cannot decode (e.g. authorized_operations bits it does
    not know); the states then come from ListGroups (v4+), member counts are unknown, and the run goes on with a warning."""
    warnings = []
    activity = mm2_offsets.group_activity(Admin(ValueError("8 is not a valid AclOperation")), ["stable", "empty", "simple"], warnings)
    assert activity == {"stable": (True, "Stable", None), "empty": (False, "Empty", None), "simple": (False, "unknown", None)}
    assert len(warnings) == 1 and "DescribeGroups failed" in warnings[0] and "ValueError" in warnings[0]


def test_listed_groups_marks_simple_groups():
    listed = mm2_offsets.listed_groups(Admin())
    assert {name for name, entry in listed.items() if not entry.get("protocol_type")} == {"simple"}
