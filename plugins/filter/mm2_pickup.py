# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter kafkaops.mirror.mm2_pickup: what a running MirrorMaker does not replicate yet (plugin_utils/mm2_pickup)."""
from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ReplicationPolicy, parse_release
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_pickup import pickup_plan


def _listings(results):
    """kafka_topic_info results of a loop over flows (skipped ones have no topics) -> {flow: [topic names]}."""
    return {"%s->%s" % (result["item"]["source"], result["item"]["target"]): sorted(result["topics"])
            for result in results or [] if "topics" in result}


def mm2_pickup(statuses, remote_listings=None, topic_changes=None, health_plan=None, replication_policy="default", separator=".",
               kafka_version=None):
    """replication_policy, separator, kafka_version: the flows' naming (mirrormaker2_replication_policy and _separator, the
    release that runs MirrorMaker), which tells MirrorMaker's internal and heartbeats topics from remote data topics."""
    try:
        flows_with_syncs = {flow for flow, plan in ((health_plan or {}).get("flows") or {}).items() if "offset_syncs" in plan["wait_for"]}
        policy = ReplicationPolicy(replication_policy, separator, parse_release(kafka_version))
        return pickup_plan(statuses, _listings(remote_listings), topic_changes, flows_with_syncs, policy)
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("mm2_pickup: expected kafka_mirror_status results and kafka_topic changes: %s" % exc) from None


class FilterModule:
    def filters(self):
        return {"mm2_pickup": mm2_pickup}
