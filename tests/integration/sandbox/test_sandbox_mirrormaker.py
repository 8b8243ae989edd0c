"""kafka_home/bin/connect-mirror-maker.sh under the sandbox's supervisord, installed the way the
mirrormaker2 role does it: the stand-in runs as the mirrormaker node, under supervisord's own PID,
and `down` stops it with the rest."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition

from sandbox import api, processes, seed

pytestmark = pytest.mark.integration

PROGRAM = "mirrormaker2-test"


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


def test_stand_in_runs_as_the_mirrormaker_node_under_supervisord(fresh_sandbox):
    state = fresh_sandbox("noida")
    seed.seed(state["dir"])
    config_dir = Path(state["dir"]) / "mirrormaker2"
    config = config_dir / "connect-mirror-maker.properties"
    config.write_text(properties(state))
    conf_d = Path(state["supervisord"]["config"]).parent / "conf.d"
    (conf_d / f"{PROGRAM}.conf").write_text(
        f"[program:{PROGRAM}]\ncommand={state['kafka_home']}/bin/connect-mirror-maker.sh {config}\n"
        f"autorestart=false\nredirect_stderr=true\nstdout_logfile={state['dir']}/logs/{PROGRAM}.log\n")
    update = subprocess.run([*state["supervisorctl"], "update"], capture_output=True, text=True, check=False)
    assert update.returncode == 0, update.stdout + update.stderr

    orders = next(t for t in seed.TOPICS if t.name == "orders")
    deadline = time.monotonic() + 60
    while mirrored_count(state, "primary.orders", orders.partitions) < orders.records and time.monotonic() < deadline:
        time.sleep(0.5)
    log = Path(state["dir"]) / "logs" / f"{PROGRAM}.log"
    assert mirrored_count(state, "primary.orders", orders.partitions) == orders.records, log.read_text()[-3000:]

    report = api.status(state["dir"])
    assert report["processes"][PROGRAM]["state"] == "RUNNING" and report["crashed"] == []
    pid = report["processes"][PROGRAM]["pid"]
    assert b"sandbox.mm2" in Path(f"/proc/{pid}/cmdline").read_bytes(), "supervisord's PID must be the stand-in itself (exec)"
    if os.geteuid() == 0:
        assert os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt"), "the stand-in must run in the node's mount namespace"

    api.down(state["dir"])
    assert not processes.alive(pid)
