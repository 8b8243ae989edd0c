#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ambari_hosts_info
short_description: List an Ambari cluster's hosts with IPs, and which run Kafka brokers and ZooKeeper servers
version_added: 0.1.0
description:
  - Reads the hosts of an Ambari-managed cluster (FQDN, short name, IP address, host components) in one API call.
  - Used to build hosts file entries for another network (see the C(kafkaops.mirror.hosts_sync) role) and to find the brokers.
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.attributes.info_module
  - kafkaops.mirror.ambari_connection
"""

EXAMPLES = r"""
- name: Read the primary cluster's hosts
  kafkaops.mirror.ambari_hosts_info:
    url: https://primary.azurehdinsight.net
    password: "{{ ambari_password }}"
    cluster_name: primary
  register: primary_hosts

- name: Show the broker FQDNs
  ansible.builtin.debug:
    var: primary_hosts.kafka_brokers
"""

RETURN = r"""
cluster_name:
  description: The cluster the hosts belong to.
  returned: always
  type: str
  sample: primary
hosts:
  description: Every host of the cluster, sorted by FQDN.
  returned: always
  type: list
  elements: dict
  contains:
    host_name:
      description: FQDN as Ambari knows it.
      type: str
      sample: wn0-primar.abc.internal.cloudapp.net
    short_name:
      description: First label of the FQDN.
      type: str
      sample: wn0-primar
    ip:
      description: IP address Ambari reports for the host.
      type: str
      sample: 10.0.0.12
    components:
      description: Host components on the host.
      type: list
      elements: str
      sample: [KAFKA_BROKER]
kafka_brokers:
  description: FQDNs of the hosts that run KAFKA_BROKER.
  returned: always
  type: list
  elements: str
zookeeper_servers:
  description: FQDNs of the hosts that run ZOOKEEPER_SERVER.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.client import AmbariError, ambari_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.hosts import hosts_info


def main():
    module = AnsibleModule(argument_spec=ambari_connection_argument_spec(), supports_check_mode=True)
    try:
        module.exit_json(**hosts_info(module.params))
    except AmbariError as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
