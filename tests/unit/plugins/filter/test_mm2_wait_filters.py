# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters kafkaops.mirror.mm2_health_wait and kafkaops.mirror.mm2_pickup as the mirrormaker2 role calls them."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.filter import mm2_config as config_plugin
from ansible_collections.kafkaops.mirror.plugins.filter import mm2_pickup as pickup_plugin

MODEL = {
    "kafka_version": "3.9",
    "clusters": [{"alias": "primary", "bootstrap_servers": "a:9092", "broker_count": 1},
                 {"alias": "secondary", "bootstrap_servers": "b:9092", "broker_count": 1}],
    "flows": [{"source": "primary", "target": "secondary"}, {"source": "secondary", "target": "primary", "enabled": False}],
}


def test_rendered_intervals_reach_the_plan_of_enabled_flows_only():
    plan = config_plugin.mm2_health_wait(MODEL, 300, 60)
    assert list(plan["flows"]) == ["primary->secondary"]
    assert plan["flows"]["primary->secondary"]["intervals"]["refresh.topics.interval.seconds"] == 60
    assert plan["warnings"] == []


def test_unmeetable_timeout_fails_before_anything_changes():
    model = dict(MODEL, flows=[{"source": "primary", "target": "secondary", "emit_heartbeats_interval_seconds": 120}])
    expected = r"(?s)nothing was changed.*emit.heartbeats.interval.seconds \(120 s\).*mirrormaker2_health_timeout \(100 s\)"
    with pytest.raises(AnsibleFilterError, match=expected):
        config_plugin.mm2_health_wait(model, 100, 200)


def test_invalid_model_fails_like_mm2_config():
    with pytest.raises(AnsibleFilterError, match="tasks.max"):
        config_plugin.mm2_health_wait(dict(MODEL, properties={"task.max": 2}), 300, 60)


def test_pickup_reads_loop_results_and_skips_skipped_listings():
    statuses = [{"flow": "primary->secondary", "partitions": [
        {"topic": "orders", "remote_topic": "primary.orders", "partition": 0, "has_records": True, "last_offset_sync": None,
         "remote_topic_exists": True, "target_end_offset": 0}]}]
    listings = [{"item": {"source": "primary", "target": "secondary"}, "topics": {"primary.orders": {}, "primary.gone": {}}},
                {"item": {"source": "secondary", "target": "primary"}, "skipped": True}]
    result = pickup_plugin.mm2_pickup(statuses, listings, {}, config_plugin.mm2_health_wait(MODEL, 300, 60))
    assert result["without_source"] == ["primary.gone (primary->secondary)"]
    assert result["restart_reasons"] == ["primary->secondary: 1 source topic(s) with records and no offset sync: orders"]
    assert pickup_plugin.mm2_pickup(statuses, listings, {}, config_plugin.mm2_health_wait(dict(MODEL, engine="mm1", kafka_version="2.3"), 300, 60)
                                    )["restart_reasons"] == []  # MirrorMaker 1 writes no offset syncs
    with pytest.raises(AnsibleFilterError, match="replication policy 'mirror' is not one of default, identity"):
        pickup_plugin.mm2_pickup(statuses, listings, {}, config_plugin.mm2_health_wait(MODEL, 300, 60), "mirror")
    underscored = pickup_plugin.mm2_pickup(statuses, [dict(listings[0], topics={"primary_orders": {}, "primary_checkpoints_internal": {}})], {},
                                           config_plugin.mm2_health_wait(MODEL, 300, 60), "default", "_", "3.9")
    assert underscored["without_source"] == ["primary_orders (primary->secondary)"]  # its partitions are named primary.orders above
    assert pickup_plugin.FilterModule().filters()["mm2_pickup"] is pickup_plugin.mm2_pickup
    assert config_plugin.FilterModule().filters()["mm2_health_wait"] is config_plugin.mm2_health_wait
