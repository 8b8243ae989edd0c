# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""broker-config.json -> what the sandbox broker starts with, per provider (pure logic)."""
from __future__ import annotations

import json

import pytest

from sandbox import broker_config
from sandbox.providers import ApacheProvider, BrokerSpec, NoidaProvider, TansuProvider, get_provider

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


def test_apache_properties_keep_the_sandbox_listeners_and_take_ambari_settings(tmp_path):
    config = write(tmp_path, {"kafka-broker": {"listeners": "PLAINTEXT://0.0.0.0:9092", "auto.create.topics.enable": "true",
                                               "log.retention.hours": "24"}, "kafka-env": SNIPPET})
    props = dict(line.split("=", 1) for line in ApacheProvider("/opt/kafka").server_properties(SPEC, config).splitlines())
    assert props["listeners"] == "PLAINTEXT://127.9.1.10:9092,CONTROLLER://127.9.1.10:9093"
    assert props["advertised.listeners"] == "PLAINTEXT://127.9.1.10:9092"
    assert props["auto.create.topics.enable"] == "true" and props["log.retention.hours"] == "24"
    assert props["process.roles"] == "broker,controller" and props["log.dirs"] == SPEC.data_dir
    assert len(ApacheProvider.cluster_id("primary")) == 22 and ApacheProvider.cluster_id("primary") != ApacheProvider.cluster_id("secondary")


def test_apache_without_kafka_home_is_unavailable(monkeypatch, tmp_path):
    monkeypatch.delenv("KAFKA_HOME", raising=False)
    with pytest.raises(RuntimeError, match="needs KAFKA_HOME"):
        get_provider("apache").check()
    with pytest.raises(RuntimeError, match="has no bin/kafka-server-start.sh"):
        ApacheProvider(str(tmp_path)).check()


def test_unknown_provider_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of noida, tansu, apache"):
        get_provider("redpanda")


FAKE_STORAGE = """#!/bin/sh
# stand-in for kafka-storage.sh: record the call, and format like the real one (meta.properties in log.dirs)
echo "$@" >> "$(dirname "$0")/storage-calls"
props=$(for a in "$@"; do :; done; echo "$a")
dir=$(sed -n 's/^log.dirs=//p' "$props")
mkdir -p "$dir" && echo "cluster.id=x" > "$dir/meta.properties"
"""


def fake_kafka_home(tmp_path):
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True)
    for name in ("kafka-server-start.sh", "connect-mirror-maker.sh"):
        (home / "bin" / name).write_text("#!/bin/sh\nexit 0\n")
    (home / "bin" / "kafka-storage.sh").write_text(FAKE_STORAGE)
    for script in (home / "bin").iterdir():
        script.chmod(0o755)
    return home


def test_apache_formats_storage_once_and_starts_with_derived_properties(tmp_path):
    home = fake_kafka_home(tmp_path)
    spec = BrokerSpec(**{**SPEC.to_dict(), "provider": "apache", "data_dir": str(tmp_path / "cluster" / "data"), "log_dir": str(tmp_path / "logs")})
    provider = ApacheProvider(str(home))
    provider.check()
    for _attempt in range(2):
        argv, env = provider.broker_command(spec, broker_config.load(tmp_path))
    properties = tmp_path / "cluster" / "server.properties"
    assert argv == [str(home / "bin" / "kafka-server-start.sh"), str(properties)]
    assert env["LOG_DIR"] == spec.log_dir
    calls = (home / "bin" / "storage-calls").read_text().splitlines()
    assert calls == [f"format --ignore-formatted -t {ApacheProvider.cluster_id('primary')} -c {properties}"]
    assert "advertised.listeners=PLAINTEXT://wn0-primar.x.internal.cloudapp.net:9092" in properties.read_text()


def test_apache_kafka_home_links_to_the_real_distribution(tmp_path):
    from sandbox.kafka_home import write_kafka_home

    home = fake_kafka_home(tmp_path)
    (tmp_path / "sb").mkdir()
    link = write_kafka_home(tmp_path / "sb", ApacheProvider(str(home)), tmp_path, {"name": "wn0", "python": "/bin/false"})
    assert link.is_symlink() and link.resolve() == home.resolve()
    assert (link / "bin" / "connect-mirror-maker.sh").exists()
