# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The backends of the MirrorMaker 2 modules: what a mirror is doing, read from both clusters (private: not an API for other
collections).

- status, catch_up, wait, stale_state: kafka_mirror_status (a flow's health, whether a lagging flow catches up, what the
  health wait can expect, state an earlier deployment left).
- offsets, offsets_plan, offset_translation, failover_preview: kafka_mirror_offsets (read MirrorMaker 2's internal
  topics and the groups, translate offsets release by release, plan and preview the failover).
- topic_drift: kafka_mirror_topic_drift_info.
- preflight: kafka_cluster_info (facts about one cluster and the preflight findings).
- flow_arguments: the options kafka_mirror_status, kafka_mirror_offsets and kafka_mirror_topic_drift_info share.

May import: the standard library, kafka-python, ansible.module_utils, _mm2, _kafka and _ambari. Never plugin_utils
(tests/unit/collection/test_module_utils_layering.py).
"""
