"""The MirrorMaker 2 stand-in's pure parts: reading the properties like MirrorMakerConfig, offset-sync emission."""
from pathlib import Path

import pytest

from sandbox.mm2.replicator import PartitionSyncState, progress_key
from sandbox.mm2.settings import SettingsError, load

PROPERTIES = """
clusters = primary, secondary
primary.bootstrap.servers = 127.0.1.10:9092
secondary.bootstrap.servers = 127.0.2.10:9092
secondary.offset.storage.replication.factor = 1
replication.factor = 1
primary->secondary.enabled = true
primary->secondary.topics = orders.*, payments
primary->secondary.topics.exclude = orders\\\\.tmp
primary->secondary.emit.checkpoints.interval.seconds = 5
emit.checkpoints.interval.seconds = 60
"""


def settings(tmp_path: Path, text=PROPERTIES):
    path = tmp_path / "mm2.properties"
    path.write_text(text)
    return load(str(path))


def test_flows_resolve_pair_keys_over_top_level(tmp_path):
    loaded = settings(tmp_path)
    flows = {flow.name: flow for flow in loaded.flows}
    # The reverse pair has no flow but still runs, for heartbeats (MirrorMakerConfig.clusterPairs()).
    assert set(flows) == {"primary->secondary", "secondary->primary"}
    forward, reverse = flows["primary->secondary"], flows["secondary->primary"]
    assert forward.enabled and not reverse.enabled
    assert forward.number("emit.checkpoints.interval.seconds") == 5
    assert reverse.number("emit.checkpoints.interval.seconds") == 60
    assert forward.number("replication.factor") == 1
    assert loaded.clusters["secondary"]["offset.storage.replication.factor"] == "1"


def test_topic_selection(tmp_path):
    forward = next(flow for flow in settings(tmp_path).flows if flow.enabled)
    assert forward.replicates_topic("orders-eu") and forward.replicates_topic("payments")
    assert not forward.replicates_topic("orders.tmp")  # excluded
    assert not forward.replicates_topic("audit")  # not included
    assert forward.replicates_topic("heartbeats")  # always travels
    assert not forward.replicates_topic("secondary.orders")  # would loop back
    assert not forward.replicates_topic("mm2-offset-syncs.secondary.internal")


def test_heartbeats_disabled_pair_is_not_run(tmp_path):
    loaded = settings(tmp_path, PROPERTIES + "secondary->primary.emit.heartbeats.enabled = false\n")
    assert [flow.name for flow in loaded.flows] == ["primary->secondary"]


def test_missing_bootstrap_is_reported(tmp_path):
    with pytest.raises(SettingsError, match="secondary.bootstrap.servers is missing"):
        settings(tmp_path, "clusters=primary,secondary\nprimary.bootstrap.servers=a:1\n")


def test_offset_sync_emission_follows_offset_lag_max():
    state = PartitionSyncState()
    emitted = [upstream for upstream in range(0, 350) if state.update(upstream, upstream, 100)]
    assert emitted == [0, 101, 202, 303]


def test_offset_sync_emitted_on_upstream_gap_and_downstream_truncation():
    state = PartitionSyncState()
    assert state.update(0, 0, 100)
    assert not state.update(1, 1, 100)
    assert state.update(5, 2, 100)  # upstream skipped records (compaction, transaction markers)
    assert state.update(6, 0, 100)  # downstream went back (topic recreated)


def test_progress_key_is_connects_json():
    assert progress_key("primary", "orders", 2) == b'["MirrorSourceConnector",{"cluster":"primary","partition":2,"topic":"orders"}]'
