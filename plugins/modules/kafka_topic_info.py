#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_topic_info
short_description: Report Kafka topics with partitions, leaders, replicas, ISR, configs and offsets
version_added: 0.1.0
description:
  - Reads topics through the Kafka admin API; changes nothing.
  - Per topic it returns partition count, replication factor, per partition the leader, replicas, in-sync replicas and
    begin/end offsets, and the non-default (or all) configs.
  - Topics are selected with regular expressions that must match the whole name.
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.attributes.info_module
  - kafkaops.mirror.kafka_connection
options:
  topics:
    description: Regular expressions; a topic is reported when its whole name matches one of them. All topics when empty.
    type: list
    elements: str
    default: []
  exclude:
    description: Regular expressions; topics whose whole name matches one of them are left out.
    type: list
    elements: str
    default: []
  include_internal:
    description: Also report internal topics such as C(__consumer_offsets).
    type: bool
    default: false
  configs:
    description:
      - Which topic configs to return. V(non_default) returns the settings that differ from the broker defaults
        (topic overrides and dynamic broker settings), V(all) every key, V(none) skips the DescribeConfigs request.
    type: str
    choices: [none, non_default, all]
    default: non_default
  offsets:
    description: Return begin and end offsets per partition (two ListOffsets requests for all selected partitions).
    type: bool
    default: true
seealso:
  - module: kafkaops.mirror.kafka_topic
  - module: kafkaops.mirror.kafka_consumer_group_info
"""

EXAMPLES = r"""
- name: Topics of the orders application, with all configs
  kafkaops.mirror.kafka_topic_info:
    bootstrap_servers: "{{ kafka_bootstrap_servers }}"
    topics: ["orders.*", "payments"]
    configs: all
  register: orders_topics

- name: Every topic that MirrorMaker 2 replicated from the primary
  kafkaops.mirror.kafka_topic_info:
    bootstrap_servers: "{{ kafka_bootstrap_servers }}"
    topics: ['primary\..*']
    exclude: ['.*\.internal', '.*heartbeats']
    offsets: false
"""

RETURN = r"""
topics:
  description: Per selected topic name, its details.
  returned: always
  type: dict
  contains:
    partition_count:
      description: Number of partitions.
      type: int
    replication_factor:
      description: Replicas per partition (the largest replica set of the topic).
      type: int
    internal:
      description: Whether Kafka flags the topic as internal.
      type: bool
    under_replicated_partitions:
      description: Partitions whose in-sync replicas are fewer than their replicas.
      type: int
    configs:
      description: Config values by key, as selected by O(configs); V(null) when O(configs=none).
      type: dict
    partitions:
      description: Per partition C(partition), C(leader), C(replicas), C(isr), C(offline_replicas), C(begin_offset), C(end_offset).
      type: list
      elements: dict
  sample:
    orders:
      partition_count: 1
      replication_factor: 1
      internal: false
      under_replicated_partitions: 0
      configs: {retention.ms: "604800000"}
      partitions:
        - {partition: 0, leader: 1, replicas: [1], isr: [1], offline_replicas: [], begin_offset: 0, end_offset: 1200}
brokers:
  description: Brokers as advertised in the cluster metadata.
  returned: always
  type: list
  elements: dict
  sample: [{node_id: 1, host: wn0-second.example.internal.cloudapp.net, port: 9092, rack: null}]
cluster_id:
  description: Cluster id from the metadata.
  returned: always
  type: str
controller_id:
  description: Node id of the controller.
  returned: always
  type: int
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaConnectionError, ensure_kafka_python
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import kafka_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.names import regex_problems
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_report import CONFIG_MODES, topic_report


def main():
    spec = kafka_connection_argument_spec()
    spec.update(
        topics=dict(type="list", elements="str", default=[]),
        exclude=dict(type="list", elements="str", default=[]),
        include_internal=dict(type="bool", default=False),
        configs=dict(type="str", default="non_default", choices=list(CONFIG_MODES)),
        offsets=dict(type="bool", default=True),
    )
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    ensure_kafka_python(module)
    problems = regex_problems("topics", module.params["topics"]) + regex_problems("exclude", module.params["exclude"])
    if problems:
        module.fail_json(msg="; ".join(problems))
    try:
        with KafkaConnection(module.params) as kafka:
            with kafka.reading("topics"):
                topics, warnings = topic_report(kafka.admin(), module.params["topics"], module.params["exclude"], module.params["include_internal"],
                                                module.params["configs"], module.params["offsets"])
            cluster = kafka.cluster()
    except KafkaConnectionError as exc:
        module.fail_json(msg=str(exc))
    for warning in warnings:
        module.warn(warning)
    module.exit_json(changed=False, topics=topics, **cluster)


if __name__ == "__main__":
    main()
