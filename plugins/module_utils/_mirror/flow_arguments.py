# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The argument spec that names a MirrorMaker 2 flow and reaches both of its clusters, shared by the modules that read one.

kafka_mirror_status, kafka_mirror_topic_drift_info and kafka_mirror_offsets reach the target with the top-level connection
options (doc fragment kafkaops.mirror.kafka_connection) and the source with `source` (its suboptions come from
kafkaops.mirror.kafka_connection.source_cluster), name the flow with the options _mm2/flow_options.flow_names() checks,
and select what the flow replicates with MirrorMaker's own filters. Each module adds its own options.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import kafka_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.flow_options import replication_policy_argument_spec


def flow_argument_spec(require_source, require_target, filters):
    """A fresh argument spec: the target's connection options, `source` with the same options nested, the flow's names, and
    for each of `filters` ("topics", "groups") the pair of options of MirrorMaker's filter (`topics` and `topics.exclude`):
    regular expressions of what is selected (all by default) and of what is left out (MirrorMaker's default exclusions when
    unset)."""
    spec = kafka_connection_argument_spec()
    spec.update(
        source=dict(type="dict", required=require_source, options=kafka_connection_argument_spec()),
        source_alias=dict(type="str", required=True),
        target_alias=dict(type="str", required=require_target),
        mirrormaker_version=dict(type="str"),
        **replication_policy_argument_spec(),
    )
    for selected in filters:
        spec[selected] = dict(type="list", elements="str", default=[".*"])
        spec[selected + "_exclude"] = dict(type="list", elements="str")
    return spec
