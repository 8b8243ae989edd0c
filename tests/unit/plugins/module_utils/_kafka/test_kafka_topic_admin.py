# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TopicChanges and the reports against a scripted admin client: request batching, dry runs, per-topic errors."""
from __future__ import annotations

from types import SimpleNamespace

import kafka.errors as kafka_errors
from kafka import TopicPartition
from kafka.protocol.api_key import ApiKey
from kafka.structs import OffsetAndMetadata, OffsetAndTimestamp

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.group_report import group_report
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka import topic_admin
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_admin import TopicChanges, broker_defaults_supported
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topics import plan_topics

CURRENT = {"grow": {"partitions": 1, "replication_factor": 1, "configs": {"retention.ms": "1"}},
           "old": {"partitions": 1, "replication_factor": 1, "configs": {}}}


def full_plan():
    entries = [
        dict(label="topics[0]", name="new", state="present", partitions=2, replication_factor=None, configs={"retention.ms": 5}),
        dict(label="topics[1]", name="grow", state="present", partitions=3, replication_factor=None, configs={"retention.ms": 2}),
        dict(label="topics[2]", name="old", state="absent", partitions=None, replication_factor=None, configs={}),
    ]
    return plan_topics(entries, CURRENT, live_brokers=1)


class ScriptedAdmin:
    """Records every call; topics named in `refuse` come back with an error code."""

    def __init__(self, refuse=()):
        self.calls = []
        self.refuse = set(refuse)

    def create_topics(self, request, timeout_ms, validate_only, raise_errors):
        self.calls.append(("create_topics", sorted(request), validate_only))
        assert raise_errors is False
        return {"topics": [dict(name=name, error_code=40 if name in self.refuse else 0, error_message="bad config") for name in request]}

    def wait_for_topics(self, names, timeout_ms):
        self.calls.append(("wait_for_topics", sorted(names)))

    def create_partitions(self, request, timeout_ms, validate_only, raise_errors):
        self.calls.append(("create_partitions", dict(request), validate_only))
        return SimpleNamespace(results=[SimpleNamespace(name=name, error_code=0, error_message=None) for name in request])

    def alter_configs(self, resources, validate_only, raise_on_unknown):
        self.calls.append(("alter_configs", {r.name: r.configs for r in resources}, validate_only))
        return {"topic": {r.name: ("[Error 40] InvalidConfigurationError: x" if r.name in self.refuse else "OK") for r in resources}}

    def delete_topics(self, names, timeout_ms, raise_errors):
        self.calls.append(("delete_topics", sorted(names)))
        return {"topics": [dict(name=name, error_code=0, error_message=None) for name in names]}


def test_dry_run_sends_every_change_kind_once_with_validate_only_and_deletes_nothing():
    admin = ScriptedAdmin()
    assert TopicChanges(admin, 1000).check_with_brokers(full_plan()) == []
    assert admin.calls == [
        ("create_topics", ["new"], True),
        ("create_partitions", {"grow": 3}, True),
        ("alter_configs", {"grow": {"retention.ms": "2"}}, True),
    ]


def test_apply_batches_in_order_and_reports_what_was_done():
    admin = ScriptedAdmin()
    done, errors = TopicChanges(admin, 1000).apply(full_plan())
    assert errors == []
    assert done == {"created": ["new"], "updated": ["grow"], "deleted": ["old"]}
    assert [call[0] for call in admin.calls] == ["create_topics", "wait_for_topics", "create_partitions", "alter_configs", "delete_topics"]
    assert admin.calls[0] == ("create_topics", ["new"], False)


def test_a_refused_create_stops_before_updates_and_deletions():
    admin = ScriptedAdmin(refuse={"new"})
    done, errors = TopicChanges(admin, 1000).apply(full_plan())
    assert errors == ["creating topic 'new': InvalidConfigurationError: bad config"]
    assert done == {"created": [], "updated": [], "deleted": []}
    assert [call[0] for call in admin.calls] == ["create_topics"]


def test_a_request_the_broker_lacks_is_named():
    admin = ScriptedAdmin()

    def unsupported(*_args, **_kwargs):
        raise kafka_errors.IncompatibleBrokerVersion("Kafka broker does not support the 'CreatePartitionsRequest' Kafka protocol.")

    admin.create_partitions = unsupported
    errors = TopicChanges(admin, 1000).check_with_brokers(full_plan())
    assert len(errors) == 1
    assert errors[0].startswith("CreatePartitions: the broker does not support this request (")
    assert "'CreatePartitionsRequest'" in errors[0] and errors[0].endswith("Kafka 2.4 or later is needed")


def test_broker_defaults_need_create_topics_v4():
    assert broker_defaults_supported(SimpleNamespace(api_versions=lambda: {ApiKey(19): (0, 4)}))
    assert not broker_defaults_supported(SimpleNamespace(api_versions=lambda: {ApiKey(19): (0, 3)}))
    assert not broker_defaults_supported(SimpleNamespace(api_versions=lambda: {}))


class GroupAdmin:
    def list_groups(self):
        return [{"group_id": "app", "protocol_type": "consumer", "group_state": "Empty"}, {"group_id": "other", "protocol_type": "", "group_state": "Empty"}]

    def describe_groups(self, ids):
        raise ValueError("15 is not a valid ACLOperation")

    def list_group_offsets(self, spec):
        return {"app": {TopicPartition("orders", 1): OffsetAndMetadata(7, None, -1), TopicPartition("orders", 0): OffsetAndMetadata(-1, "", -1),
                        TopicPartition("audit", 0): OffsetAndMetadata(3, "", -1)}}

    def list_partition_offsets(self, specs):
        ends = {TopicPartition("orders", 0): 5, TopicPartition("orders", 1): 10}
        return {tp: OffsetAndTimestamp(ends[tp], -1, None) for tp in specs}


def test_group_report_lag_filters_and_describe_failure():
    report, warnings = group_report(GroupAdmin(), include=["app"], topics=["orders"])
    assert list(report) == ["app"]
    group = report["app"]
    assert group["state"] == "Empty" and group["members"] is None
    assert group["offsets"] == [
        {"topic": "orders", "partition": 0, "committed_offset": None, "metadata": "", "end_offset": 5, "lag": None},
        {"topic": "orders", "partition": 1, "committed_offset": 7, "metadata": "", "end_offset": 10, "lag": 3},
    ]
    assert group["total_lag"] == 3
    assert len(warnings) == 1 and "DescribeGroups failed: ValueError" in warnings[0]


class DescribeConfigsAdmin:
    """Answers DescribeConfigs as kafka-python 3.0.12 does: a topic the broker does not know (yet) comes back with no key,
    its error code dropped. `unknown_for` says how many requests each topic stays unknown for."""

    def __init__(self, unknown_for):
        self.unknown_for = dict(unknown_for)
        self.requests = []

    def describe_configs(self, resources, config_filter):
        assert config_filter == "all"
        self.requests.append(sorted(resource.name for resource in resources))
        answer = {}
        for resource in resources:
            left = self.unknown_for.get(resource.name, 0)
            self.unknown_for[resource.name] = left - 1
            answer[resource.name] = {} if left > 0 else {
                "cleanup.policy": dict(value="compact", config_source="DYNAMIC_TOPIC_CONFIG"),
                "retention.ms": dict(value="604800000", config_source="DEFAULT_CONFIG"),
            }
        return {"topic": answer}


def test_a_topic_the_broker_does_not_know_yet_is_asked_again_alone(monkeypatch):
    monkeypatch.setattr(topic_admin, "DESCRIBE_CONFIGS_PAUSE_S", 0)
    admin = DescribeConfigsAdmin(unknown_for={"fresh": 2})
    configs = topic_admin.read_topic_configs(admin, ["fresh", "settled"], config_filter="modified")
    assert admin.requests == [["fresh", "settled"], ["fresh"], ["fresh"]]
    assert configs == {name: {"cleanup.policy": dict(value="compact", source="DYNAMIC_TOPIC_CONFIG")} for name in ("fresh", "settled")}


def test_filter_all_keeps_defaults_and_an_empty_answer_stands_after_the_last_attempt(monkeypatch):
    monkeypatch.setattr(topic_admin, "DESCRIBE_CONFIGS_PAUSE_S", 0)
    admin = DescribeConfigsAdmin(unknown_for={"never": 99})
    configs = topic_admin.read_topic_configs(admin, ["never", "settled"], config_filter="all")
    assert len(admin.requests) == topic_admin.DESCRIBE_CONFIGS_ATTEMPTS
    assert configs["never"] == {}
    assert configs["settled"]["retention.ms"] == dict(value="604800000", source="DEFAULT_CONFIG")
