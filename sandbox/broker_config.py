# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a sandbox broker starts with: clusters/<alias>/broker-config.json, written by the Ambari emulator.

The file holds `{"kafka-broker": {server.properties keys}, "kafka-env": "<kafka-env.sh template>"}`.
With the apache provider `up` writes it from the cluster's Ambari configuration before the brokers first start
(sandbox/ambari_seed.py), so real brokers run HDInsight's stock settings (default.replication.factor 3,
min.insync.replicas 2, ...) from the start, as Ambari reports them. A missing file (noida and tansu, which honour none of
those keys) means auto.create.topics.enable=false and no IP-advertising snippet (the FQDN is advertised).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

FILE_NAME = "broker-config.json"
HDINSIGHT_DEFAULTS = {"auto.create.topics.enable": "false"}

# An IP-advertising snippet ends by appending an advertised.listeners line built from $IP_ADDRESS to
# server.properties: the runbook's hard-codes PLAINTEXT://$IP_ADDRESS (docs/reference/ambari-api.md), others keep each
# listener's name and put $IP_ADDRESS in as the host. Its presence in kafka-env is what turns IP advertising on.
_IP_ADVERTISING = re.compile(r"advertised\.listeners=.*\$\{?IP_ADDRESS\b.*>>", re.IGNORECASE)


@dataclass
class BrokerConfig:
    properties: dict = field(default_factory=lambda: dict(HDINSIGHT_DEFAULTS))
    kafka_env: str = ""

    @property
    def advertise_ip(self) -> bool:
        return any(_IP_ADVERTISING.search(line) for line in self.kafka_env.splitlines() if not line.lstrip().startswith("#"))

    @property
    def auto_create_topics(self) -> bool:
        return str(self.properties.get("auto.create.topics.enable", "false")).strip().lower() == "true"


def load(cluster_dir: Path) -> BrokerConfig:
    path = Path(cluster_dir) / FILE_NAME
    if not path.exists():
        return BrokerConfig()
    try:
        raw = json.loads(path.read_text())
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix or delete it (deleting restores HDInsight defaults)") from exc
    properties = dict(HDINSIGHT_DEFAULTS)
    properties.update({str(k): str(v) for k, v in (raw.get("kafka-broker") or {}).items()})
    kafka_env = raw.get("kafka-env") or ""
    if isinstance(kafka_env, dict):  # tolerate the Ambari shape {"content": "..."}
        kafka_env = kafka_env.get("content", "")
    return BrokerConfig(properties=properties, kafka_env=str(kafka_env))
