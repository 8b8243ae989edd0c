# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kafka clients and their rules, for the modules (private: not an API for other collections).

- client: the one way a module reaches a cluster (kafka-python clients, connection errors, address probes).
- connection_options: the connection options (doc fragment kafka_connection) and the combinations that cannot work.
- kerberos: a Kerberos identity (principal + keytab) for one module run.
- names: topics and groups selected by whole-name regular expressions.
- topics, topic_admin, topic_copy, topic_ensure: the kafka_topic module's planner, admin reads and writes, copy_from and
  its whole run; topic_report and group_report: kafka_topic_info's and kafka_consumer_group_info's reads.
- internal_topic_reader: the one reader of MirrorMaker 2's internal topics (its records decoded by _mm2.internal_records).

May import: the standard library, kafka-python, ansible.module_utils and _mm2. Never _ambari, _mirror or plugin_utils
(tests/unit/collection/test_module_utils_layering.py).
"""
