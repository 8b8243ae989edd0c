# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kafka_topic against the real-Kafka lab, read back with plain kafka-python on the cluster's node."""
from __future__ import annotations

import json

import pytest


pytestmark = pytest.mark.integration


def test_batch_create_check_mode_diff_then_apply_then_idempotent(target):
    orders, audit = target.unique("orders"), target.unique("audit")
    args = dict(topics=[
        {"name": orders, "partitions": 3, "replication_factor": 1, "configs": {"retention.ms": 604800000, "cleanup.policy": "delete"}},
        {"name": audit, "partitions": 1, "configs": {"max.message.bytes": "2000000"}},
    ])

    planned = target.run("kafka_topic", args, check=True, diff=True)
    assert planned["changed"] and planned["created"] == sorted([orders, audit]) and planned["updated"] == []
    assert not {orders, audit} & set(target.topics()), "check mode created topics"
    diff = {entry["after_header"]: entry for entry in planned["diff"]}
    assert diff[f"topic {orders}"]["before"] == ""
    assert json.loads(diff[f"topic {orders}"]["after"]) == {
        "partitions": 3, "replication_factor": 1, "configs": {"retention.ms": "604800000", "cleanup.policy": "delete"}}

    applied = target.run("kafka_topic", args, diff=True)
    assert applied["changed"] and applied["created"] == sorted([orders, audit])
    assert applied["changes"] == planned["changes"]
    topics = target.topics()
    assert topics[orders] == {"partitions": 3, "replication_factor": 1}
    assert topics[audit]["partitions"] == 1
    configs = target.configs(orders, audit)
    assert configs[orders]["retention.ms"] == "604800000" and configs[orders]["cleanup.policy"] == "delete"
    assert configs[audit]["max.message.bytes"] == "2000000"

    again = target.run("kafka_topic", args, diff=True)
    assert not again.get("failed"), again.get("msg")
    assert not again["changed"] and again["created"] == again["updated"] == again["deleted"] == [] and again["diff"] == []


def test_config_change_touches_only_given_keys_and_compares_normalized_values(target):
    name = target.unique("settings")
    target.run("kafka_topic", dict(name=name, partitions=1,
                                   configs={"retention.ms": "86400000", "cleanup.policy": "compact", "min.compaction.lag.ms": 1000}))
    args = dict(name=name, configs={"retention.ms": 172800000, "cleanup.policy": "compact"})

    planned = target.run("kafka_topic", args, check=True, diff=True)
    assert planned["changed"] and planned["updated"] == [name]
    assert planned["changes"][name] == {"action": "update", "before": {"configs": {"retention.ms": "86400000"}},
                                        "after": {"configs": {"retention.ms": "172800000"}}}
    assert target.configs(name)[name]["retention.ms"] == "86400000", "check mode changed a config"

    applied = target.run("kafka_topic", args)
    assert applied["changed"] and applied["updated"] == [name]
    configs = target.configs(name)[name]
    assert configs["retention.ms"] == "172800000"
    assert configs["min.compaction.lag.ms"] == "1000", "a key that was not given changed (replace instead of incremental alter)"
    assert configs["cleanup.policy"] == "compact"

    # Same values, other spellings: numbers as strings, a list for a list config.
    same = target.run("kafka_topic", dict(name=name, configs={"retention.ms": "172800000", "cleanup.policy": ["compact"]}))
    assert not same["changed"]


def test_partition_increase(target):
    name = target.unique("grow")
    target.run("kafka_topic", dict(name=name, partitions=2))
    planned = target.run("kafka_topic", dict(name=name, partitions=5), check=True, diff=True)
    assert planned["changed"] and planned["changes"][name] == {"action": "update", "before": {"partitions": 2}, "after": {"partitions": 5}}
    assert target.topics()[name]["partitions"] == 2
    assert target.run("kafka_topic", dict(name=name, partitions=5))["updated"] == [name]
    assert target.topics()[name]["partitions"] == 5
    assert not target.run("kafka_topic", dict(name=name, partitions=5))["changed"]


def test_delete_and_internal_topics_are_protected(target):
    name = target.unique("old")
    target.run("kafka_topic", dict(name=name, partitions=1))
    planned = target.run("kafka_topic", dict(name=name, state="absent"), check=True, diff=True)
    assert planned["changed"] and planned["deleted"] == [name] and planned["diff"][0]["after"] == ""
    assert name in target.topics(), "check mode deleted the topic"
    assert target.run("kafka_topic", dict(name=name, state="absent"))["deleted"] == [name]
    assert name not in target.topics()
    assert not target.run("kafka_topic", dict(name=name, state="absent"))["changed"]

    refused = target.run("kafka_topic", dict(topics=[{"name": "heartbeats", "state": "absent"}, {"name": "__consumer_offsets", "state": "absent"}]))
    assert refused["failed"]
    assert "topics[0] ('heartbeats'): is a Kafka or MirrorMaker 2 internal topic; set allow_internal=true" in refused["msg"]
    assert "topics[1] ('__consumer_offsets')" in refused["msg"]

    internal = f"mm2-offsets.{target.unique('test')}.internal"
    target.run("kafka_topic", dict(name=internal, partitions=1))
    assert target.run("kafka_topic", dict(name=internal, state="absent"))["failed"]
    assert internal in target.topics()
    assert target.run("kafka_topic", dict(name=internal, state="absent", allow_internal=True))["deleted"] == [internal]
    assert internal not in target.topics()


def test_bad_batch_names_every_bad_entry_and_changes_nothing(target):
    good, existing = target.unique("good"), target.unique("existing")
    brokers = len(target.state["clusters"][target.alias]["brokers"])
    target.run("kafka_topic", dict(name=existing, partitions=2))
    before = target.topics()
    result = target.run("kafka_topic", dict(topics=[
        {"name": good, "partitions": 1},
        {"name": "bad name!", "partitions": 1},
        {"name": target.unique("zero"), "partitions": 0},
        {"name": target.unique("wide"), "replication_factor": brokers + 1},
        {"name": existing, "partitions": 1},
        {"name": good, "partitions": 2},
    ]))
    assert result["failed"] and not result["changed"]
    message = result["msg"]
    assert message.startswith("5 problem(s) with the requested topics, nothing was changed")
    for fragment in ("topics[1] ('bad name!'): topic name", "topics[2] (", "partitions must be an integer >= 1, got 0",
                     "topics[3] (", f"replication_factor {brokers + 1} is more than the {brokers} live broker(s)",
                     f"topics[4] ('{existing}'): has 2 partitions and Kafka cannot remove partitions",
                     f"topics[5] ('{good}'): topic is listed more than once (also topics[0])"):
        assert fragment in message
    assert target.topics() == before, "a refused batch changed the cluster"


def test_unknown_config_key_is_reported_by_the_broker_per_topic(target):
    good, bad, existing = target.unique("good"), target.unique("typo"), target.unique("existing")
    target.run("kafka_topic", dict(name=existing, partitions=1))
    before = target.topics()
    result = target.run("kafka_topic", dict(topics=[
        {"name": good, "partitions": 1},
        {"name": bad, "partitions": 1, "configs": {"retention.msec": 1000}},
        {"name": existing, "configs": {"cleanup.polcy": "compact"}},
    ]), check=True)
    assert result["failed"]
    assert f"creating topic '{bad}': InvalidConfigurationError" in result["msg"] and "retention.msec" in result["msg"]
    assert f"changing configs of topic '{existing}'" in result["msg"] and "cleanup.polcy" in result["msg"]
    assert good not in result["msg"]
    assert target.topics() == before


def test_replication_factor_change_is_reported_not_attempted(target):
    name = target.unique("rf")
    target.read("create", name, 1, 3)
    result = target.run("kafka_topic", dict(name=name, replication_factor=1), diff=True)
    assert not result["changed"] and result["diff"] == []
    assert result["replication_factor_mismatches"] == {name: {"current": 3, "requested": 1}}
    assert any("replication_factor is 3, 1 was requested; not changed" in warning for warning in result.get("warnings", []))
    assert target.topics()[name] == {"partitions": 1, "replication_factor": 3}


def test_copy_from_makes_target_topics_match_the_source(provider_state, source, target):
    stem = source.unique("cp")
    source.run("kafka_topic", dict(topics=[
        {"name": f"{stem}-orders", "partitions": 4, "configs": {"retention.ms": 3600000, "min.insync.replicas": 1}},
        {"name": f"{stem}-tmp", "partitions": 1},
    ]))
    args = dict(copy_from=dict(bootstrap_servers=source.bootstrap_servers, topics=f"{stem}-.*", exclude=".*-tmp", rename_prefix="primary."))
    # The source topic took its cluster's default replication factor (3 on the lab's three brokers, as on HDInsight).
    source_replication = source.topics()[f"{stem}-orders"]["replication_factor"]
    planned = target.run("kafka_topic", args, check=True, diff=True)
    assert planned["changed"] and planned["created"] == [f"primary.{stem}-orders"]
    assert planned["changes"][f"primary.{stem}-orders"]["after"] == {
        "partitions": 4, "replication_factor": source_replication, "configs": {"retention.ms": "3600000"}}
    assert f"primary.{stem}-orders" not in target.topics()

    applied = target.run("kafka_topic", args)
    assert applied["created"] == [f"primary.{stem}-orders"]
    assert target.topics()[f"primary.{stem}-orders"]["partitions"] == 4
    assert target.configs(f"primary.{stem}-orders")[f"primary.{stem}-orders"]["retention.ms"] == "3600000"
    assert not target.run("kafka_topic", args)["changed"]


def test_unresolvable_advertised_broker_names_the_address_and_both_fixes(source, target):
    # A primary's node does not know the secondary's worker names (hosts_sync copies names the other way only): the
    # runbook's failure, from the other side.
    result = source.run("kafka_topic", dict(copy_from=dict(bootstrap_servers=target.bootstrap_servers)))
    assert result["failed"]
    assert f"bootstrap servers {target.bootstrap_servers.replace(',', ', ')} (security_protocol PLAINTEXT)" in result["msg"]
    assert "advertised as wn0-second." in result["msg"] and "does not resolve" in result["msg"]
    assert "hosts_sync" in result["msg"] and "ambari_kafka" in result["msg"]


def test_unreachable_bootstrap_fails_with_where_and_protocol(target):
    result = target.run("kafka_topic", dict(bootstrap_servers="127.30.250.250:9092", request_timeout_ms=2000, name="x"))
    assert result["failed"]
    assert "Could not fetch cluster metadata from any of the bootstrap servers 127.30.250.250:9092 (security_protocol PLAINTEXT)" in result["msg"]
