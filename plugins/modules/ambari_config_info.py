#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ambari_config_info
short_description: Read the current version of an Ambari config type
version_added: 0.2.0
description:
  - Reads the desired (current) version of one Ambari config type, such as C(kafka-broker), with its properties.
  - Used to derive a setting from what the cluster has, for example binding the existing Kafka listeners to all interfaces
    while keeping their names and security protocols.
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.attributes.info_module
  - kafkaops.mirror.ambari_connection
options:
  config_type:
    description: The Ambari config type, such as V(kafka-broker), V(kafka-env) or V(zoo.cfg).
    type: str
    required: true
seealso:
  - module: kafkaops.mirror.ambari_config
"""

EXAMPLES = r"""
- name: Read the primary cluster's broker settings
  kafkaops.mirror.ambari_config_info:
    url: https://primary.azurehdinsight.net
    password: "{{ ambari_password }}"
    cluster_name: primary
    config_type: kafka-broker
  register: broker

- name: Show the listeners
  ansible.builtin.debug:
    msg: "{{ broker.properties.listeners }}"
"""

RETURN = r"""
config_type:
  description: The config type read.
  returned: always
  type: str
  sample: kafka-broker
tag:
  description: Tag of the current version.
  returned: always
  type: str
  sample: version1732241351000
properties:
  description: Properties of the current version, as Ambari stores them (all values are strings).
  returned: always
  type: dict
  sample: {listeners: "SASL_PLAINTEXT://localhost:9092", auto.create.topics.enable: "false"}
properties_attributes:
  description: Attributes of the properties (for example C(final)), as Ambari returns them.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.client import AmbariClient, AmbariError, ambari_connection_argument_spec


def main():
    spec = ambari_connection_argument_spec()
    spec.update(config_type=dict(type="str", required=True))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    try:
        tag, properties, attributes = AmbariClient.from_params(module.params).current_config(module.params["config_type"])
    except AmbariError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, config_type=module.params["config_type"], tag=tag, properties=properties, properties_attributes=attributes)


if __name__ == "__main__":
    main()
