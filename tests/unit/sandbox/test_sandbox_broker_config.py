# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""broker-config.json -> what the sandbox broker starts with, per provider (pure logic)."""
from __future__ import annotations

import json

import pytest

from sandbox import broker_config
from sandbox.providers import BrokerSpec, NoidaProvider, TansuProvider, get_provider

SNIPPET = """# Configure Kafka to advertise IP addresses instead of FQDN
IP_ADDRESS=$(hostname -i)
echo advertised.listeners=$IP_ADDRESS
sed -i.bak -e '/advertised/{/advertised@/!d;}' /usr/hdp/current/kafka-broker/conf/server.properties
echo "advertised.listeners=PLAINTEXT://$IP_ADDRESS:9092" >> /usr/hdp/current/kafka-broker/conf/server.properties
"""
SPEC = BrokerSpec(provider="tansu", alias="primary", cluster_name="primary", ip="127.9.1.10", fqdn="wn0-primar.x.internal.cloudapp.net",
                  port=9092, data_dir="/d/clusters/primary/data", log_dir="/d/logs")


def write(tmp_path, content: dict):
    (tmp_path / broker_config.FILE_NAME).write_text(json.dumps(content))
    return broker_config.load(tmp_path)


def test_missing_file_means_hdinsight_defaults(tmp_path):
    config = broker_config.load(tmp_path)
    assert config.advertise_ip is False and config.auto_create_topics is False


def test_ip_advertising_snippet_turns_ip_advertising_on(tmp_path):
    config = write(tmp_path, {"kafka-broker": {"auto.create.topics.enable": "true"}, "kafka-env": "export KAFKA_HEAP_OPTS=-Xmx1G\n" + SNIPPET})
    assert config.advertise_ip is True and config.auto_create_topics is True


@pytest.mark.parametrize("kafka_env", [
    "",
    "# echo \"advertised.listeners=PLAINTEXT://$IP_ADDRESS:9092\" >> server.properties\n",  # commented out
    "echo advertised.listeners=$IP_ADDRESS\n",  # only the debugging echo of the snippet
])
def test_without_the_snippet_the_fqdn_is_advertised(tmp_path, kafka_env):
    assert write(tmp_path, {"kafka-broker": {}, "kafka-env": kafka_env}).advertise_ip is False


def test_ambari_shaped_kafka_env_is_accepted(tmp_path):
    assert write(tmp_path, {"kafka-env": {"content": SNIPPET}}).advertise_ip is True


def test_invalid_json_names_the_file(tmp_path):
    (tmp_path / broker_config.FILE_NAME).write_text("{not json")
    with pytest.raises(ValueError, match="broker-config.json is not valid JSON"):
        broker_config.load(tmp_path)


def test_tansu_advertises_fqdn_or_ip(tmp_path):
    argv, env = TansuProvider().broker_command(SPEC, broker_config.load(tmp_path))
    assert argv[argv.index("--advertised-listener-url") + 1] == "tcp://wn0-primar.x.internal.cloudapp.net:9092"
    assert argv[argv.index("--listener-url") + 1] == "tcp://127.9.1.10:9092"
    argv = TansuProvider().broker_command(SPEC, write(tmp_path, {"kafka-env": SNIPPET}))[0]
    assert argv[argv.index("--advertised-listener-url") + 1] == "tcp://127.9.1.10:9092"
    assert env == {"RUST_LOG": "warn"}


def test_noida_binds_the_worker_address_and_execs_the_real_binary(tmp_path):
    argv = NoidaProvider().broker_command(SPEC, broker_config.load(tmp_path))[0]
    assert argv[0].endswith("noida_db/noida-db")
    assert argv[1:] == ["start", "--data-dir", SPEC.data_dir, "--host", "127.9.1.10", "--only", "kafka", "--kafka-port", "9092"]


def test_unknown_provider_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of noida, tansu, apache"):
        get_provider("redpanda")
