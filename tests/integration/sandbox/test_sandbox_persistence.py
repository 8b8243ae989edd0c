# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`down` then `up` in the same directory is a reboot of both clusters: what a host keeps comes back.

Topics and their records on both brokers, the Ambari emulators' configuration versions and credentials, a node's own
files, and the programs registered with the MirrorMaker node's supervisord - a MirrorMaker 2 program among them, which
supervisord starts again with the properties it had and which goes on mirroring. Everything is read back with
independent clients (kafka-python, a fresh Ambari GET, supervisorctl inside the node).
"""
from __future__ import annotations

import base64
import json
import os
import time
import urllib.request
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from sandbox import api, processes, seed
from sandbox.node_init import SUPERVISOR_CONF_D
from tests.support.node_mirrormaker import CONFIG_DIR, PROGRAM, SUPERVISORCTL, as_root_on, mirrored_count, properties

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="host nodes (ssh node mode) need root")]

MARKER_LINE = "# kept across a reboot"
MORE_RECORDS = 50


def ambari(state: dict, alias: str, path: str, body: dict | None = None) -> dict:
    """One request to a cluster's Ambari emulator, as any Ambari client makes it (basic auth, X-Requested-By)."""
    settings = state["clusters"][alias]["ambari"]
    token = base64.b64encode(f"{settings['username']}:{settings['password']}".encode()).decode()
    request = urllib.request.Request(f"{settings['url']}/api/v1/clusters/{settings['cluster_name']}{path}",
                                     data=json.dumps(body).encode() if body is not None else None, method="PUT" if body else "GET",
                                     headers={"Authorization": f"Basic {token}", "X-Requested-By": "kafkaops-test"})
    with urllib.request.urlopen(request, timeout=20) as response:
        text = response.read().decode()
    return json.loads(text) if text.strip() else {}


def kafka_broker_config(state: dict, alias: str) -> tuple:
    """(tag, properties) of the cluster's current kafka-broker configuration."""
    tag = ambari(state, alias, "?fields=Clusters/desired_configs")["Clusters"]["desired_configs"]["kafka-broker"]["tag"]
    items = ambari(state, alias, f"/configurations?type=kafka-broker&tag={tag}")["items"]
    return tag, items[0]["properties"]


def topic_offsets(state: dict, kafka_admin, alias: str) -> dict:
    """{topic: [end offset per partition]} of every non-internal topic, read with an independent client."""
    admin = kafka_admin(state, alias)
    described = admin.describe_topics([t for t in admin.list_topics() if not t.startswith("__")])
    consumer = KafkaConsumer(bootstrap_servers=state["clusters"][alias]["bootstrap_servers"], api_version=(2, 7))
    try:
        partitions = [TopicPartition(t["name"], p["partition_index"]) for t in described for p in t["partitions"]]
        ends = consumer.end_offsets(partitions)
    finally:
        consumer.close()
    offsets = {}
    for tp in sorted(partitions):
        offsets.setdefault(tp.topic, []).append(ends[tp])
    return offsets


def written_by_mirrormaker(topic: str) -> bool:
    return topic.startswith("mm2-") or topic.endswith(".internal") or topic.endswith("heartbeats")


def install_mirrormaker(node: dict, state: dict) -> None:
    """A MirrorMaker 2 program as the mirrormaker2 role registers it: autostart, restarted by supervisord when it dies."""
    program = "\n".join([f"[program:{PROGRAM}]",
                         f"command={state['kafka_home']}/bin/connect-mirror-maker.sh {CONFIG_DIR}/connect-mirror-maker.properties",
                         f"directory={CONFIG_DIR}", "user=kafka", "autostart=true", "autorestart=true", "redirect_stderr=true",
                         f"stdout_logfile={CONFIG_DIR}/{PROGRAM}.log", ""])
    installed = as_root_on(node, f"install -d -o kafka -g hadoop -m 0750 {CONFIG_DIR} && cat > {CONFIG_DIR}/connect-mirror-maker.properties "
                                 f"<<'EOF'\n{properties(state)}EOF\nchown kafka:hadoop {CONFIG_DIR}/connect-mirror-maker.properties && "
                                 f"cat > {SUPERVISOR_CONF_D}/{PROGRAM}.conf <<'EOF'\n{program}EOF\n"
                                 f"echo '{MARKER_LINE}' >> /etc/hosts && {SUPERVISORCTL} update")
    assert installed.returncode == 0 and "ERROR" not in installed.stdout, installed.stdout + installed.stderr


def wait_mirrored(state: dict, node: dict, records: int, partitions: int, timeout: float = 120) -> None:
    """Until the remote topic holds at least `records` records (at least once: a restart may copy a few twice)."""
    deadline = time.monotonic() + timeout
    while mirrored_count(state, "primary.orders", partitions) < records and time.monotonic() < deadline:
        time.sleep(1)
    log = as_root_on(node, f"tail -c 3000 {CONFIG_DIR}/{PROGRAM}.log").stdout
    assert mirrored_count(state, "primary.orders", partitions) >= records, log


def remote_keys(state: dict, partitions: int) -> set:
    consumer = KafkaConsumer(bootstrap_servers=state["clusters"]["secondary"]["bootstrap_servers"], api_version=(2, 7),
                             enable_auto_commit=False, receive_message_max_bytes=200 * 1024 * 1024)  # Quirk (noida-db 0.2.3)
    try:
        tps = [TopicPartition("primary.orders", p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends, keys = consumer.end_offsets(tps), set()
        deadline = time.monotonic() + 60
        while any(consumer.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                keys.update(record.key for record in batch)
        return keys
    finally:
        consumer.close()


def test_down_then_up_brings_back_data_configs_and_services(fresh_sandbox, kafka_admin):
    state = fresh_sandbox("noida")
    seed.seed(state["dir"])
    node = next(n for n in state["clusters"]["secondary"]["nodes"] if n["name"] == state["mirrormaker_node"])
    orders = next(t for t in seed.TOPICS if t.name == "orders")
    install_mirrormaker(node, state)
    wait_mirrored(state, node, orders.records, orders.partitions)
    before_pid = int(as_root_on(node, f"{SUPERVISORCTL} pid {PROGRAM}").stdout.strip())

    old_tag, old_properties = kafka_broker_config(state, "primary")
    new_tag = f"version{int(time.time() * 1000)}"
    ambari(state, "primary", "", {"Clusters": {"desired_config": [{"type": "kafka-broker", "tag": new_tag,
                                                                   "properties": dict(old_properties, **{"log.retention.hours": "170"}),
                                                                   "service_config_version_note": "persistence test"}]}})
    assert new_tag != old_tag and kafka_broker_config(state, "primary")[0] == new_tag
    offsets = {alias: topic_offsets(state, kafka_admin, alias) for alias in ("primary", "secondary")}
    inventory = (Path(state["dir"]) / "inventory.yml").read_text()

    api.down(state["dir"])
    assert not processes.alive(before_pid)
    again = api.up(state["dir"], provider="noida", net=state["net"], subnet=state["subnet"])

    assert "already_running" not in again
    assert (Path(state["dir"]) / "inventory.yml").read_text() == inventory, "the inventory (Ambari password included) must not change"
    for alias in ("primary", "secondary"):
        after = topic_offsets(again, kafka_admin, alias)
        assert set(after) == set(offsets[alias]), f"{alias}: topics differ after the reboot"
        for topic, ends in after.items():
            # MirrorMaker's own topics may grow between the snapshot and `down`: its clean stop writes its last offsets and syncs.
            grew = written_by_mirrormaker(topic) and all(now >= then for now, then in zip(ends, offsets[alias][topic]))
            assert grew or ends == offsets[alias][topic], f"{alias}: records of {topic} differ after the reboot: {offsets[alias][topic]} -> {ends}"
    tag, kept = kafka_broker_config(again, "primary")
    assert tag == new_tag and kept["log.retention.hours"] == "170"
    assert MARKER_LINE in as_root_on(node, "cat /etc/hosts").stdout, "the node's own files must survive"

    # supervisord started the MirrorMaker program again by itself, and it goes on mirroring from where it was.
    deadline = time.monotonic() + 60
    status = as_root_on(node, f"{SUPERVISORCTL} status {PROGRAM}").stdout
    while "RUNNING" not in status and time.monotonic() < deadline:
        time.sleep(1)
        status = as_root_on(node, f"{SUPERVISORCTL} status {PROGRAM}").stdout
    assert "RUNNING" in status, status
    producer = KafkaProducer(bootstrap_servers=again["clusters"]["primary"]["bootstrap_servers"], api_version=(2, 7), acks="all")
    try:
        for index in range(MORE_RECORDS):
            producer.send("orders", key=b"after-reboot-%d" % index, value=b"x", partition=index % orders.partitions)
        producer.flush(30)
    finally:
        producer.close()
    expected = {b"after-reboot-%d" % index for index in range(MORE_RECORDS)}
    deadline = time.monotonic() + 120
    missing = expected - remote_keys(again, orders.partitions)
    while missing and time.monotonic() < deadline:
        time.sleep(2)
        missing = expected - remote_keys(again, orders.partitions)
    log = as_root_on(node, f"tail -c 3000 {CONFIG_DIR}/{PROGRAM}.log").stdout
    assert not missing, f"records produced after the reboot were not mirrored: {sorted(missing)[:5]}\n{log}"
