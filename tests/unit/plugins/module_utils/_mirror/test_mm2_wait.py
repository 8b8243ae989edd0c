# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health wait's plan: which conditions each flow can meet, and timeouts that could never be met."""
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.wait import health_wait_plan

FLOW = ("primary", "secondary")


def plan(properties=None, version="3.9", timeout=300, max_age=60, engine="mm2", flows=(FLOW,)):
    return health_wait_plan(properties or {}, list(flows), engine, version, timeout, max_age)


def test_defaults_wait_for_everything_and_report_mm2_defaults():
    result = plan()
    assert result["errors"] == [] and result["warnings"] == ["flow primary->secondary: refresh.topics.interval.seconds (600 s) is longer "
                                                             "than mirrormaker2_health_timeout (300 s): a topic created on the source while "
                                                             "the role waits is not mirrored before the wait ends"]
    assert result["flows"]["primary->secondary"] == {
        "wait_for": ["heartbeats", "offset_syncs", "lag"],
        "intervals": {"emit.heartbeats.interval.seconds": 1, "refresh.topics.interval.seconds": 600,
                      "refresh.groups.interval.seconds": 600, "emit.checkpoints.interval.seconds": 60}}


def test_flow_scoped_key_wins_over_top_level_and_strings_are_read():
    result = plan({"refresh.topics.interval.seconds": "900", "primary->secondary.refresh.topics.interval.seconds": "60"})
    assert result["flows"]["primary->secondary"]["intervals"]["refresh.topics.interval.seconds"] == 60
    assert result["warnings"] == []


def test_heartbeat_interval_longer_than_the_timeout_is_refused_naming_both_numbers():
    errors = plan({"primary->secondary.emit.heartbeats.interval.seconds": 400, "refresh.topics.interval.seconds": 60}, max_age=500)["errors"]
    assert len(errors) == 1
    assert "emit.heartbeats.interval.seconds (400 s)" in errors[0] and "mirrormaker2_health_timeout (300 s)" in errors[0]


def test_heartbeat_interval_longer_than_the_accepted_age_is_refused_naming_both_numbers():
    errors = plan({"emit.heartbeats.interval.seconds": 90, "refresh.topics.interval.seconds": 60})["errors"]
    assert len(errors) == 1 and "every 90 s" in errors[0] and "mirrormaker2_max_heartbeat_age is 60 s" in errors[0]


def test_disabled_heartbeats_are_not_waited_for_and_their_interval_does_not_matter():
    result = plan({"primary->secondary.emit.heartbeats.enabled": "false", "primary->secondary.emit.heartbeats.interval.seconds": 900,
                   "refresh.topics.interval.seconds": 60})
    assert result["errors"] == [] and result["flows"]["primary->secondary"]["wait_for"] == ["offset_syncs", "lag"]


def test_offset_syncs_switched_off_from_3_9_only():
    switched_off = {"emit.offset-syncs.enabled": False, "refresh.topics.interval.seconds": 60}
    assert plan(switched_off)["flows"]["primary->secondary"]["wait_for"] == ["heartbeats", "lag"]
    # Before 3.9 MirrorMaker does not read the key and always writes offset syncs.
    assert plan(switched_off, version="3.8.1")["flows"]["primary->secondary"]["wait_for"] == ["heartbeats", "offset_syncs", "lag"]


def test_topic_refresh_disabled_is_a_warning():
    warnings = plan({"refresh.topics.enabled": "false"})["warnings"]
    assert len(warnings) == 1 and "refresh.topics.enabled is false" in warnings[0]


def test_mm1_waits_for_the_lag_only():
    assert plan(engine="mm1", version="2.3")["flows"] == {"primary->secondary": {"wait_for": ["lag"], "intervals": {}}}


def test_non_positive_timeout_is_refused():
    assert plan(timeout=0)["errors"] == ["mirrormaker2_health_timeout must be > 0, got 0"]
