#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_consumer_group_info
short_description: Report Kafka consumer groups with state, members, committed offsets and lag
version_added: 0.1.0
description:
  - Reads consumer groups through the Kafka admin API; changes nothing.
  - Per group it returns the state, the members with their assigned partitions, and per partition the committed offset,
    the end offset and the lag.
  - Groups and topics are selected with regular expressions that must match the whole name.
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.attributes.info_module
  - kafkaops.mirror.kafka_connection
options:
  groups:
    description: Regular expressions; a group is reported when its whole id matches one of them. All groups when empty.
    type: list
    elements: str
    default: []
  exclude:
    description: Regular expressions; groups whose whole id matches one of them are left out.
    type: list
    elements: str
    default: []
  topics:
    description: Regular expressions; only committed offsets of topics whose whole name matches are reported. All when empty.
    type: list
    elements: str
    default: []
  lag:
    description: Read end offsets and compute the lag per partition (one ListOffsets request for all reported partitions).
    type: bool
    default: true
seealso:
  - module: kafkaops.mirror.kafka_topic_info
  - module: kafkaops.mirror.kafka_mirror_offsets
"""

EXAMPLES = r"""
- name: Lag of the orders application's group
  kafkaops.mirror.kafka_consumer_group_info:
    bootstrap_servers: "{{ kafka_bootstrap_servers }}"
    groups: [orders-app]
  register: orders_app

- name: Fail when it is more than 1000 records behind
  ansible.builtin.assert:
    that: orders_app.groups['orders-app'].total_lag <= 1000
"""

RETURN = r"""
groups:
  description: Per selected group id, its details.
  returned: always
  type: dict
  contains:
    state:
      description: Group state, such as V(Stable) or V(Empty).
      type: str
    protocol_type:
      description: V(consumer) for consumer groups, empty for groups that only commit offsets.
      type: str
    protocol:
      description: Partition assignor in use (for example V(range)).
      type: str
    members:
      description:
        - Members with C(member_id), C(group_instance_id), C(client_id), C(client_host) and C(assignment) (list of C(topic), C(partition)).
        - V(null), with a warning, when the brokers' DescribeGroups answer could not be read; the state then comes from ListGroups.
      type: list
      elements: dict
    offsets:
      description: Per committed partition C(topic), C(partition), C(committed_offset), C(metadata), C(end_offset), C(lag).
      type: list
      elements: dict
    total_lag:
      description: Sum of the lags; V(null) when O(lag=false) or nothing is committed.
      type: int
  sample:
    orders-app:
      state: Empty
      protocol_type: consumer
      protocol: ""
      members: []
      offsets: [{topic: orders, partition: 0, committed_offset: 400, metadata: "", end_offset: 1000, lag: 600}]
      total_lag: 600
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaConnectionError, ensure_kafka_python
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import kafka_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.group_report import group_report
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.names import regex_problems


def main():
    spec = kafka_connection_argument_spec()
    spec.update(
        groups=dict(type="list", elements="str", default=[]),
        exclude=dict(type="list", elements="str", default=[]),
        topics=dict(type="list", elements="str", default=[]),
        lag=dict(type="bool", default=True),
    )
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    ensure_kafka_python(module)
    params = module.params
    problems = regex_problems("groups", params["groups"]) + regex_problems("exclude", params["exclude"]) + regex_problems("topics", params["topics"])
    if problems:
        module.fail_json(msg="; ".join(problems))
    try:
        with KafkaConnection(params) as kafka, kafka.reading("consumer groups"):
            groups, warnings = group_report(kafka.admin(), params["groups"], params["exclude"], params["topics"], params["lag"])
    except KafkaConnectionError as exc:
        module.fail_json(msg=str(exc))
    for warning in warnings:
        module.warn(warning)
    module.exit_json(changed=False, groups=groups)


if __name__ == "__main__":
    main()
