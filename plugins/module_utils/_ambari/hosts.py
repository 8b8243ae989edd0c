# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster's hosts as Ambari knows them: FQDN, short name, IP, and which run Kafka brokers and ZooKeeper servers."""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.client import AmbariClient


def hosts_info(params, client=None):
    client = client or AmbariClient.from_params(params)
    hosts = [dict(h, short_name=h["host_name"].split(".", 1)[0]) for h in client.hosts()]
    return {
        "changed": False,
        "cluster_name": client.cluster_name,
        "hosts": hosts,
        "kafka_brokers": [h["host_name"] for h in hosts if "KAFKA_BROKER" in h["components"]],
        "zookeeper_servers": [h["host_name"] for h in hosts if "ZOOKEEPER_SERVER" in h["components"]],
    }
