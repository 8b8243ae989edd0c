# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters kafkaops.mirror.mm2_cutover_record and kafkaops.mirror.mm2_cutover_hold: a failover's cut-over record on the
MirrorMaker host, written by the failover role and obeyed by the mirrormaker2 role (plugin_utils/mm2_cutover)."""
from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_cutover import add_cutover, hold_plan


def _record(text_or_record):
    """The record as read back: None or '' (no file), its JSON text, or the parsed dict."""
    if text_or_record is None or text_or_record == "":
        return None
    if isinstance(text_or_record, (str, bytes)):
        try:
            text_or_record = json.loads(text_or_record)
        except ValueError as exc:
            raise AnsibleFilterError("the cut-over record is not JSON (%s); look at the file, remove it if it is not the failover "
                                     "role's, and run again" % exc) from None
    if not isinstance(text_or_record, dict):
        raise AnsibleFilterError("the cut-over record is not a JSON object: %r" % (text_or_record,))
    return text_or_record


def mm2_cutover_record(record, source, target, failed_over_at, groups=None, groups_exclude=None, by="failover.yml"):
    try:
        return add_cutover(_record(record), source, target, failed_over_at, groups, groups_exclude, by)
    except ValueError as exc:
        raise AnsibleFilterError("mm2_cutover_record: %s" % exc) from None


def mm2_cutover_hold(record, flows, resume=False, check_mode=False):
    try:
        return hold_plan(_record(record), flows, bool(resume), bool(check_mode))
    except (KeyError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError("mm2_cutover_hold: expected mirrormaker2_flows (source, target): %s" % exc) from None


class FilterModule:
    def filters(self):
        return {"mm2_cutover_record": mm2_cutover_record, "mm2_cutover_hold": mm2_cutover_hold}
