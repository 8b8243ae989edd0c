# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan and apply a change to one Ambari config type: properties, and a managed block in a text property.

Check mode returns the plan from the same path; a new config version is made only when the plan changes something.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.client import AmbariClient
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.text_block import BlockError, edit_block, marker_lines

SCALARS = (str, int, float, bool)


class ConfigInputError(ValueError):
    pass


def property_text(value):
    """How Ambari stores a value given in YAML: booleans as true/false, numbers as their text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def validate(params):
    """Reject bad input before anything is read or written; the message names every problem."""
    problems = []
    properties = params.get("properties") or {}
    block = params.get("block")
    if not properties and not block:
        problems.append("give properties, block, or both")
    for key, value in properties.items():
        if not isinstance(key, str) or not key.strip():
            problems.append(f"property name {key!r} is empty")
        elif value is not None and not isinstance(value, SCALARS):
            problems.append(f"property {key!r} must be a string, number, boolean or null (null removes it), got {type(value).__name__}")
    if block:
        try:
            marker_lines(block["marker"])
        except BlockError as exc:
            problems.append(str(exc))
        if block["state"] == "present" and block.get("content") is None:
            problems.append("block.content is required when block.state is present")
        if block["property"] in properties:
            problems.append(f"property {block['property']!r} is set both in properties and as the block's property; use one")
    if problems:
        raise ConfigInputError(f"ambari_config for config type {params.get('config_type')!r}: " + "; ".join(problems))


def property_changes(current, wanted):
    """{key: (old, new)} for the keys whose value differs; new None means removed, old None means added."""
    changes = {}
    for key, value in wanted.items():
        new = None if value is None else property_text(value)
        old = current.get(key)
        if old != new:
            changes[key] = (old, new)
    return changes


def plan_config(current_tag, current, params):
    """What the new version would hold: {"properties", "changes", "diff"} from the current properties and the request."""
    config_type = params["config_type"]
    changes = property_changes(current, params.get("properties") or {})
    proposed = dict(current)
    for key, (_old, new) in changes.items():
        if new is None:
            proposed.pop(key, None)
        else:
            proposed[key] = new
    header = f"{config_type} ({current_tag})"
    diff = []
    if changes:
        diff.append(
            {
                "before_header": header,
                "after_header": f"{config_type} (new version)",
                "before": "".join(f"{k}={old}\n" for k, (old, _new) in sorted(changes.items()) if old is not None),
                "after": "".join(f"{k}={new}\n" for k, (_old, new) in sorted(changes.items()) if new is not None),
            }
        )
    block = params.get("block")
    if block:
        name = block["property"]
        old_text = current.get(name, "")
        try:
            new_text, old_lines, new_lines = edit_block(old_text, block.get("content") or "", block["marker"], block["state"])
        except BlockError as exc:
            raise ConfigInputError(f"{config_type} property {name!r} at tag {current_tag}: {exc}") from None
        if new_text != old_text:
            changes[name] = (old_text if name in current else None, new_text)
            proposed[name] = new_text
            diff.append(
                {
                    "before_header": f"{config_type}/{name} ({current_tag})",
                    "after_header": f"{config_type}/{name} (new version)",
                    "before": "".join(line + "\n" for line in old_lines),
                    "after": "".join(line + "\n" for line in new_lines),
                }
            )
    return {"properties": proposed, "changes": changes, "diff": diff}


def default_note(changes):
    return "kafkaops.mirror ambari_config: " + ", ".join(sorted(changes))


def ensure_config(params, check_mode, client=None):
    """Read the current version, plan, and (outside check mode) PUT a new version when the plan changes something."""
    validate(params)
    client = client or AmbariClient.from_params(params)
    config_type = params["config_type"]
    old_tag, current, attributes = client.current_config(config_type)
    plan = plan_config(old_tag, current, params)
    changed = bool(plan["changes"])
    note = (params.get("note") or default_note(plan["changes"])) if changed else None
    new_tag = old_tag
    if changed:
        new_tag = None if check_mode else client.put_config(config_type, plan["properties"], attributes, note)
    return {
        "changed": changed,
        "config_type": config_type,
        "old_tag": old_tag,
        "new_tag": new_tag,
        "changed_properties": sorted(plan["changes"]),
        "note": note,
        "diff": plan["diff"],
    }
