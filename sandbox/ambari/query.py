# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ambari's query string: `fields=` partial responses and property predicates (`HostRoles/stale_configs=true`)."""
from __future__ import annotations

import copy

# Query parameters that are not predicates on resource properties.
RESERVED = {"fields", "sortBy", "page_size", "from", "to", "minimal_response", "_"}


def predicates(query: dict) -> dict:
    return {key: value for key, value in query.items() if key not in RESERVED}


def lookup(resource: dict, path: str):
    node = resource
    for part in path.split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def matches(resource: dict, wanted: dict) -> bool:
    """Equality predicates; booleans compare as Ambari prints them (true/false)."""
    for path, expected in wanted.items():
        actual = lookup(resource, path)
        if isinstance(actual, bool):
            actual = "true" if actual else "false"
        if actual is None or str(actual) != expected:
            return False
    return True


def _field_tree(paths) -> dict:
    tree: dict = {}
    for path in paths:
        node = tree
        parts = [p for p in path.strip().split("/") if p]
        for index, part in enumerate(parts):
            if part == "*":
                node["*"] = True
                break
            last = index == len(parts) - 1
            if last:
                node[part] = True
            elif node.get(part) is not True:
                node = node.setdefault(part, {})
    return tree


def _project(value, tree):
    if tree is True or tree.get("*") is True:
        return copy.deepcopy(value)
    if isinstance(value, list):
        return [_project(item, tree) for item in value]
    if not isinstance(value, dict):
        return copy.deepcopy(value)
    out = {}
    for key, sub in tree.items():
        if key in value:
            out[key] = _project(value[key], sub)
    return out


def page(items: list, query: dict) -> list:
    """Ambari's pagination for what the web UI uses: `page_size=N` with `to=end` (the last N) or from the start."""
    if "page_size" not in query:
        return items
    size = int(query["page_size"])
    return items[-size:] if query.get("to") == "end" else items[:size]


def project(resource: dict, fields, always) -> dict:
    """Keep `fields` plus the resource's key properties (`always`), as Ambari's partial response does."""
    tree = _field_tree(list(fields) + list(always) + ["href"])
    return _project(resource, tree)
