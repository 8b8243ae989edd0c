# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ambari configurations a sandbox's brokers first start with, Ambari and the brokers agreeing: `up(advertise_ip=True)`, a
cluster whose brokers advertise their IP addresses, and `up(brokers=N)`, replication settings for fewer than three brokers.

Before the cluster's Ambari emulator and brokers first start, its stored configuration (clusters/<alias>/ambari-state.json,
made by the emulator's own code from clusters/<alias>/ambari.json) gets a new kafka-env version with the runbook's
IP-advertising snippet (docs/reference/ambari-api.md), the brokers counted as restarted with it (nothing stale), and
clusters/<alias>/broker-config.json what the emulator writes for the brokers after such a restart. So Ambari's API shows
the snippet (the ambari_kafka role finds IP advertising on and changes nothing) and the brokers start advertising IPs. The
replication settings are a new kafka-broker version the same way.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from sandbox import broker_config
from sandbox.ambari.cluster import Cluster as AmbariCluster

# The runbook's snippet (docs/reference/ambari-api.md), appended to kafka-env's template.
IP_ADVERTISING_SNIPPET = ("\n# Configure Kafka to advertise IP addresses instead of FQDN\nIP_ADDRESS=$(hostname -i)\n"
                          'echo "advertised.listeners=PLAINTEXT://$IP_ADDRESS:9092" >> /usr/hdp/current/kafka-broker/conf/server.properties\n')
VERSION_NOTE = "IP advertising (the runbook's kafka-env snippet), set by `python -m sandbox up --advertise-ip`"
STATE_FILE = "ambari-state.json"
# Broker settings that name a number of replicas, with Kafka's default where HDInsight's Ambari stores none: a cluster of
# fewer brokers cannot hold more.
REPLICATION_SETTINGS = {"default.replication.factor": 1, "min.insync.replicas": 1, "offsets.topic.replication.factor": 3,
                        "transaction.state.log.replication.factor": 3, "transaction.state.log.min.isr": 2}


def _stored_kafka_env(cluster_dir: Path) -> str | None:
    """kafka-env's template in the emulator's stored state, None when the cluster has none yet (a new sandbox)."""
    path = cluster_dir / STATE_FILE
    if not path.exists():
        return None
    state = json.loads(path.read_text())
    return state["configs"]["kafka-env"][state["desired"]["kafka-env"]]["properties"].get("content", "")


def check_ip_advertising(sandbox_dir: Path, aliases: list) -> None:
    """Raise ValueError, before anything is written, when a cluster of this directory kept an Ambari configuration (an
    earlier `up`) without IP advertising: its brokers would advertise what Ambari stores, not what was asked."""
    for alias in aliases:
        cluster_dir = Path(sandbox_dir) / "clusters" / alias
        content = _stored_kafka_env(cluster_dir)
        if content is not None and not broker_config.BrokerConfig(kafka_env=content).advertise_ip:
            raise ValueError(f"the sandbox in {sandbox_dir} keeps {alias}'s Ambari configuration ({cluster_dir / STATE_FILE}) and its kafka-env "
                             f"has no IP advertising: turn it on through Ambari (mirror.yml -e mirror_source_ip_advertising=true does it on "
                             f"the primary), or use another --dir")


def advertise_ip(cluster_dir: Path) -> bool:
    """Store the snippet in the cluster's kafka-env and write broker-config.json to match; False when Ambari already had it.

    Needs clusters/<alias>/ambari.json (written by `up`'s layout); runs before the emulator starts (it reads the state
    file once, at its start)."""
    cluster = AmbariCluster(json.loads((cluster_dir / "ambari.json").read_text()))
    env = cluster.desired_properties("kafka-env")
    changed = not broker_config.BrokerConfig(kafka_env=env.get("content", "")).advertise_ip
    if changed:
        _store_first_version(cluster, "kafka-env", {**env, "content": env.get("content", "") + IP_ADVERTISING_SNIPPET}, VERSION_NOTE)
    _write_broker_config(cluster_dir, cluster)
    return changed


def fit_replication(cluster_dir: Path, brokers: int) -> bool:
    """Store in the cluster's kafka-broker the replication settings a cluster of `brokers` brokers can hold (HDInsight's
    stock 3 and min.insync.replicas 2 need three: a group's first commit would wait for __consumer_offsets forever), as the
    administrator of such a cluster sets them, and write broker-config.json to match; False when Ambari already had them.
    Runs before the emulator and the brokers first start, as advertise_ip does."""
    cluster = AmbariCluster(json.loads((cluster_dir / "ambari.json").read_text()))
    current = cluster.desired_properties("kafka-broker")
    fitted = {key: str(min(brokers, int(current.get(key, default)))) for key, default in REPLICATION_SETTINGS.items()}
    changed = any(current.get(key) != value for key, value in fitted.items())
    if changed:
        _store_first_version(cluster, "kafka-broker", {**current, **fitted},
                             f"replication settings for {brokers} broker(s), set by `python -m sandbox up --brokers`")
    _write_broker_config(cluster_dir, cluster)
    return changed


def _store_first_version(cluster: AmbariCluster, config_type: str, properties: dict, note: str) -> None:
    """A new version of `config_type` that the brokers first start with: nothing runs an older one, so nothing is stale."""
    stale = dict(cluster.state["stale"])
    version = 1 + max(record["version"] for record in cluster.state["configs"][config_type].values())
    cluster.set_desired_configs([{"type": config_type, "tag": f"version{version}", "service_config_version_note": note, "properties": properties}],
                                user=cluster.username)
    cluster.state["stale"] = stale
    cluster.save()


def brokers_start_with_ambari_config(cluster_dir: Path) -> bool:
    """Write broker-config.json from the cluster's Ambari configuration where there is none yet (a new sandbox), so that
    real brokers start with what Ambari says they run (HDInsight's stock settings: default.replication.factor 3,
    min.insync.replicas 2, ...), as a real cluster's do; False when the file exists (it follows Ambari's restarts)."""
    if (cluster_dir / broker_config.FILE_NAME).exists():
        return False
    _write_broker_config(cluster_dir, AmbariCluster(json.loads((cluster_dir / "ambari.json").read_text())))
    return True


def _write_broker_config(cluster_dir: Path, cluster: AmbariCluster) -> None:
    # What the emulator's executor writes for the brokers after a restart (sandbox/ambari/executor.py _apply_to_broker).
    payload = {"kafka-broker": cluster.desired_properties("kafka-broker"), "kafka-env": cluster.desired_properties("kafka-env").get("content", "")}
    path = cluster_dir / broker_config.FILE_NAME
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True))
    os.replace(tmp, path)
