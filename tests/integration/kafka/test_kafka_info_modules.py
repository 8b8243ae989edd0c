# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kafka_topic_info and kafka_consumer_group_info against the real-Kafka lab: read-only, filtered, check mode safe."""
from __future__ import annotations

import pytest


pytestmark = pytest.mark.integration


@pytest.fixture
def topic_with_records(target):
    stem = target.unique("info")
    created = target.run("kafka_topic", dict(topics=[
        {"name": f"{stem}-a", "partitions": 2, "configs": {"retention.ms": 3600000}},
        {"name": f"{stem}-b", "partitions": 1},
    ]))
    assert created["changed"], created.get("msg")
    target.read("produce", f"{stem}-a", 3)
    return stem


def test_topic_info_reports_partitions_offsets_and_configs(target, topic_with_records):
    stem = topic_with_records
    before = target.topics()
    for check in (False, True):
        result = target.run("kafka_topic_info", dict(topics=[f"{stem}-.*"], exclude=[".*-b"], configs="all"), check=check)
        assert not result["changed"] and not result.get("failed"), result.get("msg")
        assert list(result["topics"]) == [f"{stem}-a"]
        topic = result["topics"][f"{stem}-a"]
        # Created with the broker's default replication factor: HDInsight's default.replication.factor 3, from Ambari.
        assert topic["partition_count"] == 2 and topic["replication_factor"] == 3 and topic["under_replicated_partitions"] == 0
        broker_ids = {broker["node_id"] for broker in result["brokers"]}
        assert len(broker_ids) == len(target.state["clusters"][target.alias]["brokers"])
        first = topic["partitions"][0]
        # Three replicas, all in sync, on the cluster's brokers; the leader is one of them (the controller picks).
        assert first["partition"] == 0 and first["leader"] in first["replicas"] and set(first["replicas"]) == broker_ids
        assert sorted(first["isr"]) == sorted(first["replicas"])
        assert (first["begin_offset"], first["end_offset"]) == (0, 3)
        assert topic["partitions"][1]["end_offset"] == 0
        assert topic["configs"]["retention.ms"] == "3600000"
    assert target.topics() == before


def test_topic_info_non_default_configs_and_internal_topics(target, topic_with_records):
    stem = topic_with_records
    result = target.run("kafka_topic_info", dict(topics=[f"{stem}-.*"], offsets=False))
    assert result["topics"][f"{stem}-a"]["configs"] == {"retention.ms": "3600000"}
    assert result["topics"][f"{stem}-b"]["configs"] == {}
    assert result["topics"][f"{stem}-a"]["partitions"][0]["end_offset"] is None
    # A real broker creates __consumer_offsets when a group first commits, not at start.
    target.read("commit", f"{stem}-internal", f"{stem}-a", 0, 0)
    assert "__consumer_offsets" not in target.run("kafka_topic_info", dict(configs="none", offsets=False))["topics"]
    internal = target.run("kafka_topic_info", dict(topics=["__consumer_offsets"], include_internal=True, configs="none", offsets=False))
    assert internal["topics"]["__consumer_offsets"]["internal"] is True


def test_info_modules_name_a_bad_regex(target):
    result = target.run("kafka_topic_info", dict(topics=["ok", "[unclosed"]))
    assert result["failed"] and result["msg"].startswith("topics: '[unclosed' is not a regular expression")
    result = target.run("kafka_consumer_group_info", dict(exclude=["*"]))
    assert result["failed"] and result["msg"].startswith("exclude: '*' is not a regular expression")


def test_consumer_group_info_reports_committed_offsets_and_lag(target, topic_with_records):
    stem = topic_with_records
    target.read("commit", f"{stem}-app", f"{stem}-a", 0, 1)
    target.read("commit", f"{stem}-other", f"{stem}-b", 0, 0)
    for check in (False, True):
        result = target.run("kafka_consumer_group_info", dict(groups=[f"{stem}-.*"], exclude=[".*-other"]), check=check)
        assert not result["changed"] and not result.get("failed"), result.get("msg")
        assert list(result["groups"]) == [f"{stem}-app"]
        group = result["groups"][f"{stem}-app"]
        assert group["state"] == "Empty" and group["members"] == []
        assert group["offsets"] == [{"topic": f"{stem}-a", "partition": 0, "committed_offset": 1, "metadata": "", "end_offset": 3, "lag": 2}]
        assert group["total_lag"] == 2
    filtered = target.run("kafka_consumer_group_info", dict(groups=[f"{stem}-app"], topics=["nothing"], lag=False))
    assert filtered["groups"][f"{stem}-app"]["offsets"] == [] and filtered["groups"][f"{stem}-app"]["total_lag"] is None
