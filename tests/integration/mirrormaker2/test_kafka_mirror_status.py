# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module kafka_mirror_status against a flow run by the sandbox's MM2 stand-in, started and stopped by this test."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import kafka_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import FlowStatus, flow_options

from tests.support import mm2_kafka_io as kafka_io
from tests.support.ansible_play import run_module
from tests.support.checkout import REPO, collections_path

pytestmark = pytest.mark.integration

TOPIC = "mst-events"
GROUP = "mst-reader"


@pytest.fixture(scope="module")
def flow(sandbox, tmp_path_factory):
    primary = sandbox["clusters"]["primary"]["bootstrap_servers"]
    secondary = sandbox["clusters"]["secondary"]["bootstrap_servers"]
    directory = tmp_path_factory.mktemp("mirror-status")
    properties = directory / "mm2.properties"
    properties.write_text(
        "clusters=primary,secondary\n"
        f"primary.bootstrap.servers={primary}\nsecondary.bootstrap.servers={secondary}\n"
        "primary.offset.storage.replication.factor=1\nsecondary.offset.storage.replication.factor=1\n"
        # Connect's config and status topics default to 3 replicas as well (DistributedConfig): one broker refuses them.
        "config.storage.replication.factor=1\nstatus.storage.replication.factor=1\n"
        "replication.factor=1\nheartbeats.topic.replication.factor=1\ncheckpoints.topic.replication.factor=1\n"
        "offset-syncs.topic.replication.factor=1\n"
        "primary->secondary.enabled=true\nprimary->secondary.topics=mst-.*\n"
        "primary->secondary.refresh.topics.interval.seconds=1\nprimary->secondary.emit.checkpoints.interval.seconds=1\n"
    )
    kafka_io.create(primary, TOPIC, 2)
    kafka_io.produce(primary, TOPIC, 400, 2)
    state = {"primary": primary, "secondary": secondary, "properties": properties, "log": directory / "standin.log", "process": None}
    yield state
    stop(state)


def start(state):
    env = dict(os.environ, PYTHONPATH=str(REPO), ANSIBLE_COLLECTIONS_PATH=str(collections_path()))
    with open(state["log"], "a", encoding="utf-8") as log:
        state["process"] = subprocess.Popen([sys.executable, "-m", "sandbox.mm2", str(state["properties"])], cwd=str(REPO), env=env,
                                            stdout=log, stderr=subprocess.STDOUT)


def stop(state):
    process = state["process"]
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    state["process"] = None


def status(state, **options):
    args = {"bootstrap_servers": [state["secondary"]], "source": {"bootstrap_servers": [state["primary"]]},
            "source_alias": "primary", "target_alias": "secondary", "topics": ["mst-.*"], "groups": ["mst-.*"]}
    args.update(options)
    check = args.pop("_check", False)
    return run_module("kafka_mirror_status", args, check=check)


def test_bad_options_fail_clearly_and_read_nothing(flow):
    before = kafka_io.topics(flow["secondary"])
    cases = [
        ({"target_alias": "primary"}, "source_alias and target_alias are both 'primary'"),
        ({"topics": ["mst-("]}, "topics: 'mst-(' is not a regular expression"),
        # Option source's nested spec (Ansible validates it before the module runs).
        ({"source": {"bootstrap_servers": [flow["primary"]], "security_protocol": "BOGUS"}}, "got: BOGUS found in source"),
        ({"max_lag": -5}, "max_lag must be >= 0"),
    ]
    for options, message in cases:
        result = status(flow, **options)
        assert result.get("failed") and message in result["msg"], result
    assert kafka_io.topics(flow["secondary"]) == before


def test_unmirrored_flow_reports_full_lag_and_creates_nothing(flow):
    before = kafka_io.topics(flow["secondary"])
    # A source secret is no_log (the nested spec's): it appears nowhere in the result, the echoed arguments included.
    result = status(flow, source={"bootstrap_servers": [flow["primary"]], "sasl_plain_password": "mst-s3cret-13"})
    assert "mst-s3cret-13" not in json.dumps(result)
    assert not result.get("failed") and not result["changed"]
    assert not result["healthy"]
    lags = {p["partition"]: p["lag"] for p in result["partitions"] if p["topic"] == TOPIC}
    assert lags == {0: 200, 1: 200}
    assert any("primary.mst-events" in problem for problem in result["problems"])
    # Whether the offset-syncs topic exists, as an independent client lists the source's topics (another test's MirrorMaker
    # on this sandbox may have created it).
    assert result["offset_syncs_topic_exists"] is (result["offset_syncs_topic"] in kafka_io.topics(flow["primary"]))
    # Reading must not auto-create the remote or internal topics it looks for.
    assert kafka_io.topics(flow["secondary"]) == before


def test_wait_times_out_with_progress_and_the_reason(flow):
    result = status(flow, wait=True, timeout=3, poll_interval=1, wait_for=["lag"])
    assert result.get("failed")
    assert "not healthy after 3 s" in result["msg"] and "lag more than 0 records" in result["msg"]
    assert len(result["progress"]) >= 2 and result["progress"][-1]["lag_total"] == 400


def test_wait_until_caught_up(flow):
    start(flow)
    consumer_offsets = {0: 150, 1: 20}
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=flow["primary"], group_id=GROUP, enable_auto_commit=False, api_version=kafka_io.API_VERSION)
    consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "", -1) for p, o in consumer_offsets.items()})
    consumer.close()
    result = status(flow, wait=True, timeout=90, poll_interval=1, max_heartbeat_age=30)
    assert not result.get("failed"), result.get("msg")
    assert result["healthy"] and result["lag_total"] == 0 and result["unmet"] == []
    ends = kafka_io.end_offsets(flow["primary"], TOPIC)
    for entry in (p for p in result["partitions"] if p["topic"] == TOPIC):
        assert entry["remote_topic"] == "primary.mst-events"
        assert entry["source_end_offset"] == ends[entry["partition"]]
        assert entry["target_end_offset"] == kafka_io.end_offsets(flow["secondary"], "primary.mst-events")[entry["partition"]]
        assert entry["last_offset_sync"] is not None
    assert result["offset_syncs_topic_exists"] is True and "mm2-offset-syncs.secondary.internal" in kafka_io.topics(flow["primary"])
    assert result["heartbeats"]["emitted_age_s"] is not None and result["heartbeats"]["emitted_age_s"] < 30
    checkpoints = kafka_io.wait_for(lambda: status(flow)["checkpoints"].get(GROUP) == 2, 30, 1)
    assert checkpoints, "no checkpoints for both partitions of the group"


def test_check_mode_reports_the_same_and_changes_nothing(flow):
    normal, checked = status(flow), status(flow, _check=True)
    assert not checked["changed"] and not normal["changed"]
    assert [p["lag"] for p in checked["partitions"]] == [p["lag"] for p in normal["partitions"]]


def test_lag_counts_records_not_yet_copied(flow):
    stop(flow)
    kafka_io.produce(flow["primary"], TOPIC, 30, 2, start=400)
    result = status(flow, wait_for=["lag"])
    assert result["lag_total"] == 30
    assert {p["partition"]: p["lag"] for p in result["partitions"] if p["topic"] == TOPIC} == {0: 15, 1: 15}
    start(flow)
    caught_up = status(flow, wait=True, timeout=60, poll_interval=1, wait_for=["lag"])
    assert caught_up["lag_total"] == 0, caught_up.get("msg")
    stop(flow)
    assert "stopped (sandbox.mm2)" in Path(flow["log"]).read_text()


def connection(bootstrap):
    validated = ArgumentSpecValidator(kafka_connection_argument_spec()).validate({"bootstrap_servers": [bootstrap]})
    return KafkaConnection(validated.validated_parameters)


def test_a_topic_created_between_two_reads_is_measured(flow):
    """Regression: the health wait reads a flow every poll_interval with the same clients; kafka-python 3.0.12's
    KafkaConsumer.end_offsets raised KeyError once the partitions spanned a topic created after its first call (a remote
    topic MirrorMaker had just created), which ended the wait with an exception."""
    stop(flow)
    late = "mst-late"
    options = {"source_alias": "primary", "target_alias": "secondary", "max_lag": 0, "max_heartbeat_age": 60, "timeout": 5,
               "poll_interval": 1, "mirrormaker_version": "3.9", "replication_policy": "default", "replication_policy_separator": ".",
               "offset_syncs_topic_location": "source", "topics": ["mst-.*"], "topics_exclude": [], "groups": ["mst-.*"],
               "groups_exclude": []}
    with connection(flow["primary"]) as source, connection(flow["secondary"]) as target:
        status = FlowStatus(source, target, flow_options(options))
        first = status.read()
        kafka_io.create(flow["primary"], late, 1)
        kafka_io.produce(flow["primary"], late, 5, 1)
        kafka_io.create(flow["secondary"], f"primary.{late}", 1)
        second = status.read()
    assert (late, 0) not in {(p["topic"], p["partition"]) for p in first["partitions"]}
    measured = {(p["topic"], p["partition"]): p["lag"] for p in second["partitions"]}
    assert measured[(late, 0)] == 5, measured
    assert measured[(TOPIC, 0)] == {(p["topic"], p["partition"]): p["lag"] for p in first["partitions"]}[(TOPIC, 0)]


def test_a_source_topic_grown_by_partitions_is_reported_not_fatal(flow):
    """Found on the demo: a source topic grown from 3 to 5 partitions failed the module (and preflight with it) with
    UnknownTopicOrPartitionError until MirrorMaker 2 grew the remote topic at its next topic refresh. Here MirrorMaker is
    stopped and the remote topic has the partitions the source had before it grew."""
    stop(flow)
    grown = "mst-grown"
    kafka_io.create(flow["primary"], grown, 3)
    kafka_io.produce(flow["primary"], grown, 30, 3)
    kafka_io.create(flow["secondary"], f"primary.{grown}", 2)
    result = status(flow, topics=[grown])
    assert not result.get("failed") and not result["changed"], result
    rows = {p["partition"]: (p["target_end_offset"], p["lag"]) for p in result["partitions"]}
    assert rows == {0: (0, 10), 1: (0, 10), 2: (None, 10)}, rows
    assert any(f"remote topic primary.{grown} has 2 of the 3 partitions of {grown}" in problem for problem in result["problems"]), result
    # Read back independently: the module grew nothing.
    assert sorted(kafka_io.end_offsets(flow["secondary"], f"primary.{grown}")) == [0, 1]
