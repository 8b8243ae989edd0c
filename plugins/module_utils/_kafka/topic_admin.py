# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topic reads and writes through the Kafka admin API, batched: one request per kind of change for the whole plan.

Kafka version notes (the collection supports 2.4 to 4.x):
- CreateTopics with broker-default partitions/replication factor (-1) needs v4 (2.4, KIP-464); checked through ApiVersions.
- Config changes use IncrementalAlterConfigs (2.3+, KIP-339): only the given keys change. kafka-python falls back to
  AlterConfigs (which replaces the whole set) only on brokers without it, and then resends every current override.
- CreatePartitions is 1.0+, DescribeConfigs with config sources 1.1+, validate_only on CreateTopics 0.10.2+.
"""
from __future__ import annotations

import time

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaError
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topics import topic_name_problem

try:
    import kafka.errors as kafka_errors
    from kafka.admin import ConfigFilterType, ConfigResource, ConfigSourceType
    from kafka.protocol.admin import CreateTopicsRequest
except ImportError:
    # _kafka.client.ensure_kafka_python() reports the missing library before any of this is used.
    kafka_errors = ConfigFilterType = ConfigResource = ConfigSourceType = CreateTopicsRequest = None

# CreateTopics v4 (Kafka 2.4, KIP-464) lets the broker pick partitions and replication factor.
_CREATE_TOPICS_BROKER_DEFAULTS_VERSION = 4
# Source of per-topic overrides in DescribeConfigs; other "modified" sources are broker-wide settings.
TOPIC_OVERRIDE_SOURCE = "DYNAMIC_TOPIC_CONFIG"
# How often a topic DescribeConfigs answered with no key is asked (read_topic_configs): a broker learns a new topic within
# a second or so of its creation.
DESCRIBE_CONFIGS_ATTEMPTS = 4
DESCRIBE_CONFIGS_PAUSE_S = 0.5


def _error_text(code, message):
    error = kafka_errors.for_code(code)
    return f"{error.__name__}: {message}" if message else error.__name__


def broker_defaults_supported(admin):
    """True when CreateTopics accepts -1 partitions/replication factor (Kafka 2.4+)."""
    versions = {int(key): value for key, value in admin.api_versions().items()}
    supported = versions.get(int(CreateTopicsRequest.API_KEY))
    return bool(supported) and supported[1] >= _CREATE_TOPICS_BROKER_DEFAULTS_VERSION


def read_topics(admin, names=None):
    """{name: {"partitions", "replication_factor", "internal", "partition_details": [...]}} for the named topics that exist
    (every topic when names is None)."""
    if names is not None and not names:
        return {}
    return topics_from_metadata(admin.describe_topics(None if names is None else sorted(set(names))))


def topics_from_metadata(metadata_topics):
    """read_topics' shape of the topics of a Metadata response (kafka-python's dicts), leaving out those answered with an
    error."""
    topics = {}
    for topic in metadata_topics:
        if topic.get("error_code"):
            continue
        partitions = sorted(topic["partitions"], key=lambda partition: partition["partition_index"])
        topics[topic["name"]] = dict(
            partitions=len(partitions),
            replication_factor=max((len(p["replica_nodes"]) for p in partitions), default=0),
            internal=bool(topic.get("is_internal")),
            partition_details=[
                dict(
                    partition=p["partition_index"],
                    leader=p["leader_id"],
                    replicas=list(p["replica_nodes"]),
                    isr=list(p["isr_nodes"]),
                    offline_replicas=list(p.get("offline_replicas") or []),
                )
                for p in partitions
            ],
        )
    return topics


def existing_partitions(admin, names):
    """{(topic, partition)} of the named topics as the cluster's metadata has them now: a topic grown by partitions on one
    cluster may not have them yet on another (MirrorMaker 2 grows a remote topic at its next topic refresh), and
    ListOffsets fails for a partition that does not exist."""
    if not names:
        return set()
    return {(topic["name"], partition["partition_index"]) for topic in admin.describe_topics(sorted(set(names)))
            if not topic.get("error_code") for partition in topic["partitions"]}


def read_topic_configs(admin, names, config_filter="all"):
    """{topic: {key: {"value", "source"}}} of the named (existing) topics, filtered as DescribeConfigs' `config_filter`.

    Every key is requested and callers pick theirs: key-filtered DescribeConfigs saves little here, and not every
    Kafka-protocol broker implements the filter (tansu 0.6 drops the connection). kafka-python filters by source on the
    client too, so asking for "all" and filtering here costs nothing and lets unanswered topics be seen (below).
    """
    if not names:
        return {}
    described = _describe_all_topic_configs(admin, names)
    kept = ConfigFilterType.build_from(config_filter)
    return {
        name: {
            key: dict(value=entry.get("value"), source=entry.get("config_source"))
            for key, entry in described.get(name, {}).items()
            if not kept.should_skip(ConfigSourceType[entry.get("config_source")])
        }
        for name in names
    }


def _describe_all_topic_configs(admin, names):
    """DescribeConfigs (every key) of `names`, asked again for topics that came back with no key at all.

    kafka-python 3.0.12 drops each resource's error code from DescribeConfigs, so a broker's "unknown topic" (a topic just
    created, on a cluster whose brokers apply new metadata one by one: KRaft brokers, or ZooKeeper brokers waiting for the
    controller's UpdateMetadata) reads as a topic without configs, and "no overrides" could not be told from "not known
    here yet". Real brokers describe every topic config under filter "all", so an empty answer is that error. After
    DESCRIBE_CONFIGS_ATTEMPTS the empty answer stands: a broker that only lists the keys set on a topic (tansu) means it.
    """
    described = {}
    unanswered = sorted(set(names))
    for attempt in range(DESCRIBE_CONFIGS_ATTEMPTS):
        if attempt:
            time.sleep(DESCRIBE_CONFIGS_PAUSE_S)
        answer = admin.describe_configs([ConfigResource("TOPIC", name) for name in unanswered], config_filter="all").get("topic", {})
        described.update({name: answer[name] for name in unanswered if answer.get(name)})
        unanswered = [name for name in unanswered if name not in described]
        if not unanswered:
            break
    return described


def current_topic_state(admin, entries):
    """What plan_topics needs: existing topics with partitions, replication factor and the current values of the given config keys."""
    # Only legal names go into the Metadata request; the planner reports the others.
    topics = read_topics(admin, [entry["name"] for entry in entries if topic_name_problem(entry.get("name")) is None])
    keys_by_topic = {
        entry["name"]: set(entry["configs"])
        for entry in entries
        if entry.get("state") == "present" and entry.get("configs") and entry.get("name") in topics
    }
    configs = read_topic_configs(admin, sorted(keys_by_topic))
    return {
        name: dict(
            partitions=topic["partitions"],
            replication_factor=topic["replication_factor"],
            configs={key: entry["value"] for key, entry in configs.get(name, {}).items() if key in keys_by_topic[name]},
        )
        for name, topic in topics.items()
    }


class TopicChanges:
    """Sends a TopicPlan to the cluster, as a dry run (validate_only) or for real; collects per-topic errors."""

    def __init__(self, admin, timeout_ms):
        self.admin = admin
        self.timeout_ms = timeout_ms

    def check_with_brokers(self, plan):
        """Per-topic reasons the brokers would refuse the plan (unknown config keys, bad values, policies), changing nothing."""
        return self._creates(plan, validate_only=True) + self._partitions(plan, validate_only=True) + self._configs(plan, validate_only=True)

    def apply(self, plan):
        """Apply creates, partition increases, config changes and deletions; returns (done, errors)."""
        done = dict(created=[], updated=[], deleted=[])
        errors = self._creates(plan, done=done["created"])
        if errors:
            return done, errors
        updated = set()
        errors = self._partitions(plan, done=updated) + self._configs(plan, done=updated)
        done["updated"] = sorted(updated)
        if errors:
            return done, errors
        errors = self._deletions(plan, done=done["deleted"])
        return done, errors

    def _creates(self, plan, validate_only=False, done=None):
        if not plan.creates:
            return []
        request = {
            name: dict(
                num_partitions=spec["partitions"] if spec["partitions"] is not None else -1,
                replication_factor=spec["replication_factor"] if spec["replication_factor"] is not None else -1,
                configs=spec["configs"],
            )
            for name, spec in plan.creates.items()
        }
        response = self._call("CreateTopics", self.admin.create_topics, request, timeout_ms=self.timeout_ms,
                              validate_only=validate_only, raise_errors=False)
        if isinstance(response, str):
            return [response]
        errors, created = [], []
        for topic in response["topics"]:
            if topic["error_code"]:
                errors.append(f"creating topic {topic['name']!r}: {_error_text(topic['error_code'], topic.get('error_message'))}")
            else:
                created.append(topic["name"])
        if done is not None and created:
            done.extend(sorted(created))
            waited = self._call("Metadata", self.admin.wait_for_topics, created, timeout_ms=self.timeout_ms)
            if isinstance(waited, str):
                errors.append(f"created topics did not get leaders in time: {waited}")
        return errors

    def _partitions(self, plan, validate_only=False, done=None):
        if not plan.partition_increases:
            return []
        response = self._call("CreatePartitions", self.admin.create_partitions, dict(plan.partition_increases),
                              timeout_ms=self.timeout_ms, validate_only=validate_only, raise_errors=False)
        if isinstance(response, str):
            return [response]
        errors = []
        for result in response.results:
            if result.error_code:
                errors.append(f"adding partitions to topic {result.name!r}: {_error_text(result.error_code, result.error_message)}")
            elif done is not None:
                done.add(result.name)
        return errors

    def _configs(self, plan, validate_only=False, done=None):
        if not plan.config_updates:
            return []
        resources = [ConfigResource("TOPIC", name, dict(configs)) for name, configs in plan.config_updates.items()]
        # raise_on_unknown=False: kafka-python's own key check compares with DescribeConfigs, which does not list every key on
        # every broker; the broker's answer to the (incremental) alter names unknown keys per topic instead.
        response = self._call("IncrementalAlterConfigs", self.admin.alter_configs, resources, validate_only=validate_only, raise_on_unknown=False)
        if isinstance(response, str):
            return [response]
        errors = []
        for name, outcome in response.get("topic", {}).items():
            if outcome != "OK":
                errors.append(f"changing configs of topic {name!r}: {outcome}")
            elif done is not None:
                done.add(name)
        return errors

    def _deletions(self, plan, done):
        if not plan.deletions:
            return []
        response = self._call("DeleteTopics", self.admin.delete_topics, list(plan.deletions), timeout_ms=self.timeout_ms, raise_errors=False)
        if isinstance(response, str):
            return [response]
        errors = []
        for topic in response["topics"]:
            if topic["error_code"]:
                errors.append(f"deleting topic {topic['name']!r}: {_error_text(topic['error_code'], topic.get('error_message'))}")
            else:
                done.append(topic["name"])
        done.sort()
        return errors

    @staticmethod
    def _call(api, method, *args, **kwargs):
        """The response, or a message naming the API that failed as a whole (a string) instead of raising."""
        try:
            return method(*args, **kwargs)
        except kafka_errors.IncompatibleBrokerVersion as exc:
            return f"{api}: the broker does not support this request ({exc}); Kafka 2.4 or later is needed"
        except KafkaError as exc:
            return f"{api} request failed: {exc.__class__.__name__}: {exc}"
