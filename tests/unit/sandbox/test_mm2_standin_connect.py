# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in's Connect worker (sandbox/mm2/connect.py) against what real MirrorMaker 2 3.2.0 wrote in the differential
test's lab (tests/integration/differential): its internal topics and where each source-offset key lands."""
from __future__ import annotations

from pathlib import Path

from kafka.partitioner.default import DefaultPartitioner

from sandbox.mm2.connect import ConnectWorker, checkpoint_partition, heartbeat_partition, offset_key, source_partition
from sandbox.mm2.replicator import progress_key
from sandbox.mm2.settings import load

PROPERTIES = """clusters = src_r3203674, dst_r3203674
src_r3203674.bootstrap.servers = 127.0.0.1:9092
dst_r3203674.bootstrap.servers = 127.0.0.1:9093
src_r3203674->dst_r3203674.enabled = true
"""


class Cluster:
    def __init__(self):
        self.created = {}

    def ensure_topic(self, name, partitions, replication_factor, configs=None):
        self.created[name] = (partitions, replication_factor, dict(configs or {}))

    def partition_counts(self, topics=None):
        return {name: spec[0] for name, spec in self.created.items() if topics is None or name in topics}


def flows(tmp_path: Path, extra=""):
    path = tmp_path / "mm2.properties"
    path.write_text(PROPERTIES + extra)
    return {flow.name: flow for flow in load(str(path), None, (3, 2, 0)).flows}


def test_every_herder_makes_connects_three_topics_on_its_target(tmp_path):
    for name, flow in flows(tmp_path).items():
        target = Cluster()
        ConnectWorker(flow, target).start()
        source = name.split("->")[0]
        assert target.created == {  # what real MirrorMaker 2 3.2.0 made, for the heartbeats-only herder too
            f"mm2-configs.{source}.internal": (1, 3, {"cleanup.policy": "compact"}),
            f"mm2-offsets.{source}.internal": (25, 3, {"cleanup.policy": "compact"}),
            f"mm2-status.{source}.internal": (5, 3, {"cleanup.policy": "compact"}),
        }, name


def test_worker_settings_of_the_target_and_the_top_level_storage_keys(tmp_path):
    flow = flows(tmp_path, "dst_r3203674.offset.storage.partitions = 3\nstatus.storage.topic = my-status\n")["src_r3203674->dst_r3203674"]
    target = Cluster()
    ConnectWorker(flow, target).start()
    assert target.created["mm2-offsets.src_r3203674.internal"][0] == 3
    assert "my-status" in target.created


def test_keys_and_partitions_are_the_ones_real_mirrormaker_wrote():
    # Read back from mm2-offsets.src_r3203674.internal (25 partitions) after real MirrorMaker 2 3.2.0 ran the scenario.
    observed = {
        b'["MirrorSourceConnector",{"cluster":"src_r3203674","partition":3,"topic":"r3203674-orders"}]': 8,
        b'["MirrorSourceConnector",{"cluster":"src_r3203674","partition":0,"topic":"heartbeats"}]': 21,
        b'["MirrorCheckpointConnector",{"partition":0,"topic":"src_r3203674.r3203674-ledger","group":"r3203674-audit"}]': 24,
        b'["MirrorHeartbeatConnector",{"sourceClusterAlias":"src_r3203674","targetClusterAlias":"dst_r3203674"}]': 23,
    }
    made = [progress_key("src_r3203674", "r3203674-orders", 3),
            offset_key("MirrorSourceConnector", source_partition("src_r3203674", "heartbeats", 0)),
            offset_key("MirrorCheckpointConnector", checkpoint_partition("r3203674-audit", "src_r3203674.r3203674-ledger", 0)),
            offset_key("MirrorHeartbeatConnector", heartbeat_partition("src_r3203674", "dst_r3203674"))]
    assert made == list(observed)
    # The stand-in sends them without a partition, as KafkaBasedLog does: kafka-python's default partitioner must place them
    # where Java's did, over the 25 partitions the topic had.

    class OffsetsTopic:  # the ClusterMetadata the partitioner reads: the topic with its 25 partitions
        topics = staticmethod(lambda: {"offsets"})
        partitions_for_topic = available_partitions_for_topic = staticmethod(lambda _topic: set(range(25)))

    placed = {key: DefaultPartitioner().partition("offsets", key, key, None, None, OffsetsTopic) for key in made}
    assert placed == observed
