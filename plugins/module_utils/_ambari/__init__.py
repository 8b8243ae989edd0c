# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Ambari REST client and its rules, for the ambari_* modules (private: not an API for other collections).

- client: Ambari's v1 REST API over Ansible's open_url (retries, errors, the ambari_connection options).
- config and text_block: plan and apply a change to one config type, and a managed block inside a text property.
- hosts: the cluster's hosts as Ambari knows them.
- restart and broker_rejoin: rolling restarts of a service's host components, and whether the restarted Kafka brokers are
  back in the cluster (read from Kafka's metadata).
- diff_mode: how the modules that change Ambari report the change.

May import: the standard library, ansible.module_utils, _mm2 and _kafka. Never _mirror or plugin_utils
(tests/unit/collection/test_module_utils_layering.py).
"""
