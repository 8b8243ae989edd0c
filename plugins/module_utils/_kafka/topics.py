# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topic planner: desired topics + what the cluster has -> validated plan of creates, increases, config changes, deletions.

Pure logic (no I/O): topic_admin.py reads the cluster and applies the plan; check mode returns the same plan.
"""
from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ReplicationPolicy

TOPIC_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
STATES = ("present", "absent")
# The names kafka_topic works with carry no replication policy: those of MirrorMaker 2's defaults ('.' separator).
_DEFAULT_POLICY = ReplicationPolicy()


def topic_name_problem(name):
    """Why `name` is not a legal Kafka topic name (None when it is)."""
    if not isinstance(name, str) or not name:
        return "name is missing"
    if name in (".", ".."):
        return f"topic name {name!r} is not allowed"
    if not TOPIC_NAME_PATTERN.match(name):
        return f"topic name {name!r} must be 1 to 249 characters of a-z, A-Z, 0-9, '.', '_' and '-'"
    return None


def is_protected_topic(name):
    """Kafka and MirrorMaker 2 internal topics, which state=absent leaves alone unless allow_internal is set.

    Internal by ReplicationPolicy.isInternalTopic, heartbeats topics (`heartbeats`, `A.heartbeats`), and every `mm2-` name:
    with a custom separator MM2's own topics (`mm2-offset-syncs_B_internal`) are recognisable by that prefix only.
    """
    return _DEFAULT_POLICY.is_internal_topic(name) or _DEFAULT_POLICY.is_heartbeats_topic(name) or name.startswith("mm2-")


def config_value_text(value):
    """The string sent to Kafka for a config value given in YAML (booleans lower case, lists comma-joined)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(config_value_text(item) for item in value)
    text = str(value).strip()
    return text.lower() if text.lower() in ("true", "false") else text


def canonical_config_value(value):
    """A value that compares equal for equal settings: '604800000' == 604800000, 'True' == true, '0.50' == 0.5, 'a, b' == 'a,b'."""
    if value is None:
        return None
    text = config_value_text(value)
    if "," in text:
        return tuple(canonical_config_value(part) for part in text.split(","))
    try:
        number = Decimal(text)
    except InvalidOperation:
        return text
    return number.normalize() if number.is_finite() else text


def config_values_equal(current, desired):
    return canonical_config_value(current) == canonical_config_value(desired)


def _entry_shape_problems(entry):
    """Problems of one entry that need no knowledge of the cluster."""
    problems = []
    name_problem = topic_name_problem(entry.get("name"))
    if name_problem:
        problems.append(name_problem)
    if entry.get("state") not in STATES:
        problems.append(f"state must be one of {', '.join(STATES)}, got {entry.get('state')!r}")
    for key in ("partitions", "replication_factor"):
        value = entry.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            problems.append(f"{key} must be an integer >= 1, got {value!r}")
    configs = entry.get("configs") or {}
    if not isinstance(configs, dict):
        problems.append(f"configs must be a mapping of Kafka topic config keys to values, got {type(configs).__name__}")
    else:
        for key, value in configs.items():
            if not isinstance(key, str) or not key.strip():
                problems.append(f"config key {key!r} is not a config name")
            elif value is None or isinstance(value, dict):
                problems.append(f"config {key} needs a value (string, number, boolean or list), got {value!r}")
    return problems


class TopicPlan:
    """What has to change, per topic, and every reason the batch must not be applied."""

    def __init__(self):
        self.creates = {}  # name -> {"partitions", "replication_factor", "configs"} (None = broker default)
        self.partition_increases = {}  # name -> new total partition count
        self.config_updates = {}  # name -> {key: value text}, only keys whose value differs
        self.deletions = []
        self.changes = {}  # name -> {"action", "before", "after"}
        self.errors = []
        self.warnings = []
        self.replication_factor_mismatches = {}  # name -> {"current", "requested"}

    @property
    def changed(self):
        return bool(self.creates or self.partition_increases or self.config_updates or self.deletions)

    @property
    def updated(self):
        return sorted(set(self.partition_increases) | set(self.config_updates))

    def error_message(self):
        """All problems in one message (the module fails with it before changing anything)."""
        return f"{len(self.errors)} problem(s) with the requested topics, nothing was changed: " + " | ".join(self.errors)

    def diff(self):
        """Ansible diff entries, one per changed topic, before/after as sorted JSON text."""
        return [
            dict(
                before_header=f"topic {name}",
                after_header=f"topic {name}",
                before=_diff_text(change["before"]),
                after=_diff_text(change["after"]),
            )
            for name, change in sorted(self.changes.items())
        ]

    def result(self):
        return dict(
            changed=self.changed,
            created=sorted(self.creates),
            updated=self.updated,
            deleted=sorted(self.deletions),
            changes=self.changes,
            replication_factor_mismatches=self.replication_factor_mismatches,
        )


def _diff_text(state):
    return "" if state is None else json.dumps(state, indent=2, sort_keys=True) + "\n"


def plan_topics(entries, current, live_brokers, broker_defaults=True, allow_internal=False):
    """Validate every entry and plan the changes.

    entries: [{"label", "name", "state", "partitions", "replication_factor", "configs"}] (label names the entry in messages).
    current: {name: {"partitions": int, "replication_factor": int, "configs": {key: value}}} for topics that exist;
        "configs" holds the current values of (at least) the keys the entries give.
    live_brokers: brokers in the cluster metadata; broker_defaults: CreateTopics takes -1 (Kafka 2.4+, KIP-464).
    """
    plan = TopicPlan()
    first_label = {}
    for entry in entries:
        label = f"{entry['label']} ({entry.get('name')!r})" if entry.get("name") else entry["label"]
        problems = _entry_shape_problems(entry)
        name = entry.get("name")
        if name in first_label:
            problems.append(f"topic is listed more than once (also {first_label[name]})")
        elif isinstance(name, str):
            first_label[name] = entry["label"]
        if problems:
            plan.errors.extend(f"{label}: {problem}" for problem in problems)
            continue
        if entry["state"] == "absent":
            _plan_absent(plan, entry, label, current, allow_internal)
        else:
            _plan_present(plan, entry, label, current.get(name), live_brokers, broker_defaults)
    return plan


def _plan_absent(plan, entry, label, current, allow_internal):
    name = entry["name"]
    if is_protected_topic(name) and not allow_internal:
        plan.errors.append(f"{label}: is a Kafka or MirrorMaker 2 internal topic; set allow_internal=true to delete it")
        return
    if name in current:
        plan.deletions.append(name)
        before = dict(partitions=current[name]["partitions"], replication_factor=current[name]["replication_factor"])
        plan.changes[name] = dict(action="delete", before=before, after=None)


def _plan_present(plan, entry, label, existing, live_brokers, broker_defaults):
    name = entry["name"]
    partitions, replication_factor = entry.get("partitions"), entry.get("replication_factor")
    configs = {key: config_value_text(value) for key, value in (entry.get("configs") or {}).items()}
    if replication_factor is not None and replication_factor > live_brokers:
        plan.errors.append(f"{label}: replication_factor {replication_factor} is more than the {live_brokers} live broker(s) of the cluster")
        return
    if existing is None:
        if not broker_defaults and (partitions is None or replication_factor is None):
            plan.errors.append(f"{label}: this Kafka version (< 2.4) has no broker defaults for new topics; set partitions and replication_factor")
            return
        plan.creates[name] = dict(partitions=partitions, replication_factor=replication_factor, configs=configs)
        plan.changes[name] = dict(action="create", before=None, after=dict(plan.creates[name]))
        return
    if partitions is not None and partitions < existing["partitions"]:
        if not entry.get("keep_more_partitions"):
            plan.errors.append(
                f"{label}: has {existing['partitions']} partitions and Kafka cannot remove partitions; ask for {existing['partitions']} or more "
                f"(or delete and recreate the topic)"
            )
            return
        # A copy of a source topic whose target has more partitions: made by hand, or by MirrorMaker 1 through the target's
        # auto-create (the broker's num.partitions) before this run. Both MirrorMakers write into it as it is.
        plan.warnings.append(
            f"{label}: has {existing['partitions']} partitions, more than the {partitions} of its source; left as it is (Kafka cannot "
            f"remove partitions): MirrorMaker 1 spreads the records over them by key, MirrorMaker 2 leaves the extra ones empty"
        )
        partitions = None
    if replication_factor is not None and replication_factor != existing["replication_factor"]:
        plan.replication_factor_mismatches[name] = dict(current=existing["replication_factor"], requested=replication_factor)
        plan.warnings.append(
            f"{label}: replication_factor is {existing['replication_factor']}, {replication_factor} was requested; not changed "
            f"(changing it needs a partition reassignment, which this module does not do)"
        )
    changed_configs = {key: value for key, value in configs.items() if not config_values_equal(existing["configs"].get(key), value)}
    grows = partitions is not None and partitions > existing["partitions"]
    if not grows and not changed_configs:
        return
    if grows:
        plan.partition_increases[name] = partitions
    if changed_configs:
        plan.config_updates[name] = changed_configs
    before, after = {}, {}
    if grows:
        before["partitions"], after["partitions"] = existing["partitions"], partitions
    if changed_configs:
        before["configs"] = {key: existing["configs"].get(key) for key in changed_configs}
        after["configs"] = changed_configs
    plan.changes[name] = dict(action="update", before=before, after=after)
