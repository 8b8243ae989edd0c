# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The configuration an HDInsight Kafka cluster starts with, as Ambari reports it.

Values follow a stock HDInsight 4.0/5.x Kafka cluster: auto-create off, brokers listening on
localhost and advertising their FQDN (kafka-env has no IP-advertising snippet yet). With `esp` (an
Enterprise Security Package cluster: Kerberos through Azure AD DS) the brokers speak SASL_PLAINTEXT with
GSSAPI, the listener Ambari's KAFKA service script keeps as it is once "SASL" is in its name
(common-services/KAFKA/0.8.1/package/scripts/kafka.py, release-2.7.3).
"""
from __future__ import annotations

# The stock kafka-env template (a Jinja template Ambari renders into kafka-env.sh).
KAFKA_ENV_CONTENT = """#!/bin/bash

# Set KAFKA specific environment variables here.

# The java implementation to use.
export JAVA_HOME={{java64_home}}
export PATH=$PATH:$JAVA_HOME/bin
export PID_DIR={{kafka_pid_dir}}
export LOG_DIR={{kafka_log_dir}}
{% if kerberos_security_enabled or kafka_other_sasl_enabled %}
export KAFKA_KERBEROS_PARAMS="-Djavax.security.auth.useSubjectCredsOnly=false {{kafka_kerberos_params}}"
{% else %}
export KAFKA_KERBEROS_PARAMS={{kafka_kerberos_params}}
{% endif %}
# Add kafka sink to classpath and related depenencies
if [ -e "/usr/lib/ambari-metrics-kafka-sink/ambari-metrics-kafka-sink.jar" ]; then
  export CLASSPATH=$CLASSPATH:/usr/lib/ambari-metrics-kafka-sink/ambari-metrics-kafka-sink.jar
  export CLASSPATH=$CLASSPATH:/usr/lib/ambari-metrics-kafka-sink/lib/*
fi
if [ -f /etc/kafka/conf/kafka-ranger-env.sh ]; then
. /etc/kafka/conf/kafka-ranger-env.sh
fi
"""


# Ambari version the emulator answers as by default: HDInsight 4.0 and 5.x run an Ambari 2.7 before 2.7.4.
AMBARI_VERSION = "2.7.3"

# What an ESP cluster's kafka-broker has on top of the stock settings.
ESP_KAFKA_BROKER = {
    "listeners": "SASL_PLAINTEXT://localhost:9092",
    "security.inter.broker.protocol": "SASL_PLAINTEXT",
    "sasl.enabled.mechanisms": "GSSAPI",
    "sasl.mechanism.inter.broker.protocol": "GSSAPI",
    "sasl.kerberos.service.name": "kafka",
    "authorizer.class.name": "org.apache.ranger.authorization.kafka.authorizer.RangerKafkaAuthorizer",
}


def kafka_broker(zookeeper_hosts: list, esp: bool = False) -> dict:
    zookeeper_connect = ",".join(f"{host}:2181" for host in zookeeper_hosts)
    properties = {
        "auto.create.topics.enable": "false",
        "auto.leader.rebalance.enable": "true",
        "compression.type": "producer",
        "controlled.shutdown.enable": "true",
        "controlled.shutdown.max.retries": "3",
        "controlled.shutdown.retry.backoff.ms": "5000",
        "default.replication.factor": "3",
        "delete.topic.enable": "true",
        "kafka.metrics.reporters": "org.apache.hadoop.metrics2.sink.kafka.KafkaTimelineMetricsReporter",
        "listeners": "PLAINTEXT://localhost:9092",
        "log.dirs": "/kafka/kafka-logs",
        "log.retention.bytes": "-1",
        "log.retention.hours": "168",
        "log.segment.bytes": "1073741824",
        "message.max.bytes": "1000000",
        "min.insync.replicas": "2",
        "num.io.threads": "8",
        "num.network.threads": "3",
        "num.partitions": "8",
        "num.recovery.threads.per.data.dir": "1",
        "offsets.topic.replication.factor": "3",
        "replica.lag.time.max.ms": "30000",
        "socket.receive.buffer.bytes": "102400",
        "socket.request.max.bytes": "104857600",
        "socket.send.buffer.bytes": "102400",
        "unclean.leader.election.enable": "false",
        "zookeeper.connect": zookeeper_connect,
        "zookeeper.connection.timeout.ms": "25000",
        "zookeeper.session.timeout.ms": "30000",
    }
    if esp:
        properties.update(ESP_KAFKA_BROKER)
    return properties


def kafka_env() -> dict:
    return {
        "content": KAFKA_ENV_CONTENT,
        "is_supported_kafka_ranger": "true",
        "kafka_log_dir": "/var/log/kafka",
        "kafka_pid_dir": "/var/run/kafka",
        "kafka_user": "kafka",
        "kafka_user_nofile_limit": "128000",
        "kafka_user_nproc_limit": "65536",
    }


def zoo_cfg() -> dict:
    return {
        "autopurge.purgeInterval": "24",
        "autopurge.snapRetainCount": "30",
        "clientPort": "2181",
        "dataDir": "/hadoop/zookeeper",
        "initLimit": "10",
        "syncLimit": "5",
        "tickTime": "2000",
    }


# Which service each config type belongs to: a change makes that service's components stale.
CONFIG_TYPE_SERVICE = {"kafka-broker": "KAFKA", "kafka-env": "KAFKA", "zoo.cfg": "ZOOKEEPER"}
# The config types whose change makes a service's components stale: its own and its metainfo.xml
# <configuration-dependencies> (common-services/KAFKA/0.8.1/metainfo.xml lists zoo.cfg for KAFKA).
SERVICE_CONFIG_DEPENDENCIES = {"KAFKA": ("kafka-broker", "kafka-env", "zoo.cfg"), "ZOOKEEPER": ("zoo.cfg",)}
STACK_ID = "HDP-2.6"


def initial_configs(zookeeper_hosts: list, esp: bool = False) -> dict:
    return {"kafka-broker": kafka_broker(zookeeper_hosts, esp), "kafka-env": kafka_env(), "zoo.cfg": zoo_cfg()}
