# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers that run only on the controller, for the filter plugins (private: not an API for other collections).

The roles' decisions that filters make: MirrorMaker's configuration files (mm2_config, mm2_properties,
kafka_client_properties), the failover's cut-over record and report (mm2_cutover, failover_report), what a running
MirrorMaker picks up (mm2_pickup) and why it failed (mm2_logs), the preflight report (preflight_report), broker
listeners (kafka_listeners), the installed Kafka version (kafka_install) and hosts-file entries (hosts_entries).

May import: the standard library, ansible and any package of plugins/module_utils. Modules can never import this package
(Ansible ships only module_utils to a node): code a module needs belongs in plugins/module_utils
(tests/unit/collection/test_module_utils_layering.py).
"""
