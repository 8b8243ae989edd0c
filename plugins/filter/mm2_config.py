# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters kafkaops.mirror.mm2_config (the mirrormaker2 role's model -> rendered MirrorMaker files) and
kafkaops.mirror.mm2_health_wait (what the role's health wait waits for, refused when its timeout cannot be met)."""
from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.wait import health_wait_plan
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_config import MM2_PROPERTIES_FILE, MODEL_DEFAULTS, MirrorConfigError, build_config
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_properties import render

_display = Display()


def mm2_config(model, redact=False):
    try:
        config = build_config(model)
    except MirrorConfigError as exc:
        raise AnsibleFilterError(str(exc)) from None
    if redact:
        config = config.redacted()
    for warning in config.warnings:
        _display.warning("mirrormaker2: %s" % warning)
    result = config.as_dict()
    result["files"] = {name: render(properties) for name, properties in config.files.items()}
    return result


def _enabled(flow):
    return flow.get("enabled") is None or str(flow["enabled"]).strip().lower() == "true"


def mm2_health_wait(model, timeout, max_heartbeat_age):
    """Per enabled flow the conditions to wait for and the intervals they depend on; fails when they cannot be met."""
    try:
        config = build_config(model)
    except MirrorConfigError as exc:
        raise AnsibleFilterError(str(exc)) from None
    flows = [(flow.get("source"), flow.get("target")) for flow in model.get("flows") or [] if _enabled(flow)]
    plan = health_wait_plan(config.files.get(MM2_PROPERTIES_FILE, {}), flows, model.get("engine") or MODEL_DEFAULTS["engine"],
                            model.get("kafka_version") or MODEL_DEFAULTS["kafka_version"], timeout, max_heartbeat_age)
    if plan["errors"]:
        raise AnsibleFilterError("the health wait could never pass with these settings, nothing was changed:\n- " + "\n- ".join(plan["errors"]))
    for warning in plan["warnings"]:
        _display.warning("mirrormaker2: %s" % warning)
    return {"flows": plan["flows"], "warnings": plan["warnings"]}


class FilterModule:
    def filters(self):
        return {"mm2_config": mm2_config, "mm2_health_wait": mm2_health_wait}
