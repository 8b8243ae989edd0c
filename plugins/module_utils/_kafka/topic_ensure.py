# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kafka_topic module's work: options -> entries -> read cluster -> plan -> broker dry run -> apply (not in check mode)."""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaError
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import kafka_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_admin import (
    TOPIC_OVERRIDE_SOURCE,
    TopicChanges,
    broker_defaults_supported,
    current_topic_state,
    read_topic_configs,
    read_topics,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_copy import (
    DEFAULT_EXCLUDED_CONFIGS,
    config_sync_warnings,
    copied_entries,
    copy_rule_problems,
    merge_entries,
    selected_source_topics,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topics import STATES, plan_topics
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import POLICIES

_TOPIC_FIELDS = ("name", "partitions", "replication_factor", "configs", "state")


class TopicTaskError(Exception):
    """The task failed; `result` holds what was done (created/updated/deleted) and the plan."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result or {}


def kafka_topic_argument_spec():
    topic_options = dict(
        name=dict(type="str", required=True),
        partitions=dict(type="int"),
        replication_factor=dict(type="int"),
        configs=dict(type="dict"),
        state=dict(type="str", choices=list(STATES)),
    )
    copy_options = kafka_connection_argument_spec()
    copy_options.update(
        topics=dict(type="str", default=".*"),
        exclude=dict(type="str"),
        rename_prefix=dict(type="str", default=""),
        source_alias=dict(type="str"),
        replication_policy=dict(type="str", choices=list(POLICIES)),
        replication_policy_separator=dict(type="str"),
        sync_topic_configs=dict(type="bool", default=True),
        mirrormaker_version=dict(type="str"),
        replication_factor=dict(type="int"),
        exclude_configs=dict(type="list", elements="str", default=list(DEFAULT_EXCLUDED_CONFIGS)),
    )
    spec = kafka_connection_argument_spec()
    spec.update(
        topics=dict(type="list", elements="dict", options=topic_options),
        name=dict(type="str"),
        partitions=dict(type="int"),
        replication_factor=dict(type="int"),
        configs=dict(type="dict"),
        state=dict(type="str", default="present", choices=list(STATES)),
        allow_internal=dict(type="bool", default=False),
        copy_from=dict(type="dict", options=copy_options),
        validate_on_broker=dict(type="bool", default=True),
    )
    return dict(
        argument_spec=spec,
        mutually_exclusive=[("name", "topics")],
        required_one_of=[("name", "topics", "copy_from")],
        required_by=dict(partitions="name", replication_factor="name", configs="name"),
        supports_check_mode=True,
    )


def requested_entries(params):
    """The explicit topic entries: the single-topic options (label 'name') or topics[i]; state defaults to the task's."""
    if params.get("name"):
        raw = [dict(name=params["name"], partitions=params.get("partitions"), replication_factor=params.get("replication_factor"),
                    configs=params.get("configs"), state=params.get("state"))]
        labels = ["name"]
    else:
        raw = params.get("topics") or []
        labels = [f"topics[{index}]" for index in range(len(raw))]
    entries = []
    for label, topic in zip(labels, raw):
        entry = {field: topic.get(field) for field in _TOPIC_FIELDS}
        entry["state"] = entry["state"] or params.get("state") or "present"
        entry["configs"] = entry["configs"] or {}
        entry["label"] = label
        entries.append(entry)
    return entries


def _source_entries(rules, target_live_brokers):
    problems = copy_rule_problems(rules)
    if problems:
        raise TopicTaskError("Invalid copy_from, nothing was changed: " + "; ".join(problems))
    with KafkaConnection(rules) as source:
        admin = source.admin()
        try:
            topics = read_topics(admin)
            overrides = read_topic_configs(admin, selected_source_topics(topics, rules), config_filter="modified")
        except KafkaError as exc:
            raise TopicTaskError(f"Reading the copy_from topics from {source.where} failed: {exc.__class__.__name__}: {exc}") from exc
    topic_overrides = {
        name: {key: entry["value"] for key, entry in configs.items() if entry["source"] == TOPIC_OVERRIDE_SOURCE}
        for name, configs in overrides.items()
    }
    return copied_entries(topics, topic_overrides, rules, target_live_brokers)


def ensure_topics(params, check_mode):
    """Plan, dry-run on the brokers, and apply unless check_mode. Returns the module result; raises TopicTaskError."""
    with KafkaConnection(params) as target:
        try:
            return _ensure_topics(target, params, check_mode)
        except KafkaError as exc:
            raise TopicTaskError(f"A Kafka request to {target.where} failed: {exc.__class__.__name__}: {exc}") from exc


def _ensure_topics(target, params, check_mode):
    explicit = requested_entries(params)
    admin = target.admin()
    live_brokers = len(target.cluster()["brokers"])
    copied = _source_entries(params["copy_from"], live_brokers) if params.get("copy_from") else []
    entries = merge_entries(copied, explicit)
    plan = plan_topics(
        entries,
        current_topic_state(admin, entries),
        live_brokers=live_brokers,
        broker_defaults=broker_defaults_supported(admin),
        allow_internal=params.get("allow_internal", False),
    )
    changes = TopicChanges(admin, params["request_timeout_ms"])
    if plan.changed and params.get("validate_on_broker", True):
        # Also when some entries are already invalid, so that one run names every bad entry.
        plan.errors.extend(changes.check_with_brokers(plan))
    warnings = plan.warnings + (config_sync_warnings(copied, explicit, params["copy_from"]) if copied else [])
    result = dict(plan.result(), diff=plan.diff(), warnings=warnings)
    if plan.errors:
        raise TopicTaskError(plan.error_message(), dict(result, changed=False, created=[], updated=[], deleted=[], plan=plan.result()))
    if check_mode or not plan.changed:
        return result
    done, errors = changes.apply(plan)
    result.update(done)
    result["changed"] = any(done.values())
    if errors:
        raise TopicTaskError(
            f"Applying the topic plan failed part way: {' | '.join(errors)}. Done before the failure: created {done['created']}, "
            f"updated {done['updated']}, deleted {done['deleted']}; fix the cause and run the task again (it continues from the cluster's state).",
            dict(result, plan=plan.result()),
        )
    return result
