# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a running MirrorMaker misses, told from kafka_mirror_status results and this run's pre-creation."""
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_pickup import pickup_plan

SYNC = {"upstream": 0, "downstream": 0}
FLOWS = {"primary->secondary"}  # the flows that write offset syncs


def partition(topic, number=0, records=True, sync=True, remote_exists=True):
    return {"topic": topic, "remote_topic": "primary." + topic, "partition": number, "has_records": records,
            "last_offset_sync": SYNC if sync else None, "remote_topic_exists": remote_exists,
            "target_end_offset": 10 if remote_exists else None}


def status(*partitions):
    return {"flow": "primary->secondary", "partitions": list(partitions), "topics": sorted({p["topic"] for p in partitions})}


def test_everything_replicated_needs_no_restart():
    result = pickup_plan([status(partition("orders"), partition("empty", records=False, sync=False))], {}, {}, FLOWS)
    assert result["restart_reasons"] == [] and result["without_source"] == []


def test_partition_with_records_and_no_sync_is_missed():
    result = pickup_plan([status(partition("orders"), partition("clicks", 0, sync=False), partition("clicks", 1, sync=False))], {}, {}, FLOWS)
    assert result["restart_reasons"] == ["primary->secondary: 1 source topic(s) with records and no offset sync: clicks"]


def test_without_offset_syncs_only_missing_and_pre_created_topics_count():
    statuses = [status(partition("orders", sync=False), partition("new", sync=False, remote_exists=False))]
    assert pickup_plan(statuses, {}, {}, set())["restart_reasons"] == ["primary->secondary: 1 remote topic(s) missing: primary.new"]


def test_remote_topics_created_or_grown_by_this_run_count_and_config_changes_do_not():
    changes = {
        "primary.fresh": {"action": "create", "before": None, "after": {"partitions": 2}},
        "primary.grown": {"action": "update", "before": {"partitions": 2}, "after": {"partitions": 4}},
        "primary.retuned": {"action": "update", "before": {"configs": {"retention.ms": "1"}}, "after": {"configs": {"retention.ms": "2"}}},
        "primary.other-flow": {"action": "create", "before": None, "after": {"partitions": 1}},
    }
    statuses = [status(partition("fresh", records=False, sync=False), partition("grown"), partition("retuned"))]
    reasons = pickup_plan(statuses, {}, changes, FLOWS)["restart_reasons"]
    assert reasons == ["primary->secondary: 2 remote topic(s) created or given partitions by this run's pre-creation: primary.fresh, primary.grown"]


def test_long_lists_are_cut():
    statuses = [status(*[partition("t%02d" % n, sync=False) for n in range(12)])]
    assert pickup_plan(statuses, {}, {}, FLOWS)["restart_reasons"][0].endswith("t09 and 2 more")


def test_remote_topics_without_a_replicated_source_are_reported():
    listing = {"primary->secondary": ["primary.orders", "primary.deleted"]}
    result = pickup_plan([status(partition("orders"))], listing, {}, FLOWS)
    assert result["without_source"] == ["primary.deleted (primary->secondary)"] and result["restart_reasons"] == []


def test_internal_and_heartbeats_topics_are_told_apart_by_the_replication_policy():
    """ReplicationPolicy.isInternalTopic / isHeartbeatsTopic (connect/mirror-client): primary.heartbeats is MirrorMaker's,
    primary.app-heartbeats is a remote data topic, and so is reported when its source is gone; a 3.1+ MirrorMaker with
    separator '_' names its internal topics primary_checkpoints_internal."""
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import ReplicationPolicy

    listed = ["primary.orders", "primary.heartbeats", "primary.app-heartbeats", "primary.checkpoints.internal", "primary.gone"]
    result = pickup_plan([status(partition("orders"))], {"primary->secondary": listed}, {}, FLOWS)
    assert result["without_source"] == ["primary.app-heartbeats (primary->secondary)", "primary.gone (primary->secondary)"]

    underscored = ReplicationPolicy("default", "_", (3, 9, 0))
    statuses = [{"flow": "primary->secondary", "partitions": [dict(partition("orders"), remote_topic="primary_orders")]}]
    listed = ["primary_orders", "primary_heartbeats", "primary_checkpoints_internal", "primary_gone"]
    assert pickup_plan(statuses, {"primary->secondary": listed}, {}, FLOWS, underscored)["without_source"] == ["primary_gone (primary->secondary)"]
