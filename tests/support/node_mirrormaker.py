# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MirrorMaker 2 stand-in as a program of the MirrorMaker node's own supervisord, installed the way the mirrormaker2
role does it, for the sandbox tests that start it by hand: its program name, config directory and properties, a root
shell on the node, and the count of records mirrored so far."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kafka import KafkaConsumer, TopicPartition

from sandbox.node_init import SUPERVISOR_CONFIG

PROGRAM = "mirrormaker2-test"
SUPERVISORCTL = f"{Path(sys.executable).parent / 'supervisorctl'} -c {SUPERVISOR_CONFIG}"
CONFIG_DIR = "/etc/kafka-mirrormaker2-test"


def properties(state: dict) -> str:
    primary, secondary = state["clusters"]["primary"], state["clusters"]["secondary"]
    return "\n".join([
        "clusters = primary, secondary",
        f"primary.bootstrap.servers = {primary['bootstrap_servers']}",
        f"secondary.bootstrap.servers = {secondary['bootstrap_servers']}",
        "primary->secondary.enabled = true",
        "primary->secondary.topics = orders",
        "replication.factor = 1",
        "heartbeats.topic.replication.factor = 1",
        "checkpoints.topic.replication.factor = 1",
        "offset-syncs.topic.replication.factor = 1",
        "offset.storage.replication.factor = 1",
        # Connect's other state topics default to 3 replicas too (DistributedConfig), which one broker refuses, as it would
        # refuse real MirrorMaker 2.
        "config.storage.replication.factor = 1",
        "status.storage.replication.factor = 1",
        "",
    ])


def mirrored_count(state: dict, topic: str, partitions: int) -> int:
    consumer = KafkaConsumer(bootstrap_servers=state["clusters"]["secondary"]["bootstrap_servers"], api_version=(2, 7),
                             receive_message_max_bytes=200 * 1024 * 1024)  # Quirk (noida-db 0.2.3): unbounded fetch replies
    try:
        if topic not in consumer.topics():
            return 0
        return sum(consumer.end_offsets([TopicPartition(topic, p) for p in range(partitions)]).values())
    finally:
        consumer.close()


def as_root_on(node: dict, script: str) -> subprocess.CompletedProcess:
    return subprocess.run([node["exec"], "sh", "-c", script], capture_output=True, text=True, check=False, timeout=60)
