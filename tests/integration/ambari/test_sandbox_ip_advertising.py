# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ambari_kafka on the tansu sandbox (the provider that advertises a hostname, like HDInsight): after the role turns
IP advertising on and Ambari restarts the broker, clients are told the broker's IP address.

The test restores FQDN advertising at the end (another role run and restart), so later tests on the session's
sandbox_tansu see the HDInsight default again; tansu keeps topics in memory, so each restart empties the broker.
"""
from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from sandbox import probes
from tests.support.ansible_play import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.tansu]

ALIAS = "primary"


def apply_role(state, **role_vars):
    task = {
        "name": "apply ambari_kafka",
        "ansible.builtin.include_role": {"name": "kafkaops.mirror.ambari_kafka"},
        # Sandbox quirk: the worker node's own Python (like a fresh HDInsight broker node's) has no kafka-python, and
        # tansu's FQDN resolves only inside the nodes, so the broker check has nowhere to run here; mirror.yml runs it
        # on the prepared MirrorMaker host, and test_ambari_rolling_restart_sandbox.py covers it on noida.
        "vars": {"ambari_kafka_poll_interval": 0.5, "ambari_kafka_restart_timeout": 120, "ambari_kafka_broker_check": False, **role_vars},
    }
    return run_tasks([task], hosts=f"{ALIAS}_kafka", inventory=Path(state["dir"]) / "inventory.yml")


def advertised(state):
    """What the broker advertises, from a raw Metadata request: resolving the FQDN outside the node would leave 127.0.0.0/8."""
    broker = state["clusters"][ALIAS]["brokers"][0]
    return [(b.host, b.port) for b in probes.kafka_metadata(broker["host"], broker["port"])]


def is_ip(host):
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def test_ambari_kafka_ip_advertising_on_tansu(sandbox_tansu, kafka_admin):
    state = sandbox_tansu
    broker = state["clusters"][ALIAS]["brokers"][0]
    assert advertised(state) == [(broker["node"], broker["port"])] and not is_ip(broker["node"])
    try:
        play = apply_role(state, ambari_kafka_ip_advertising=True)
        assert not play.failed, play.stdout[-4000:]
        assert play.task("kafkaops.mirror.ambari_kafka : Restart the Kafka brokers whose configs are stale")["requests"][0]["status"] == "COMPLETED"

        # An independent kafka-python client; the fixture refuses to make one unless the broker advertises an IP.
        brokers = kafka_admin(state, ALIAS).describe_cluster()["brokers"]
        assert [(b["host"], b["port"]) for b in brokers] == [(broker["host"], broker["port"])]

        again = apply_role(state, ambari_kafka_ip_advertising=True)
        assert not again.failed and again.changed_count == 0
    finally:
        restored = apply_role(state, ambari_kafka_ip_advertising=False)
        assert not restored.failed, restored.stdout[-4000:]
    assert advertised(state) == [(broker["node"], broker["port"])]
