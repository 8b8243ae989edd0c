# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one check of a flow's options (plugins/module_utils/_mm2/flow_options.py) and the three modules that use it."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets_plan import option_problems
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import MirrorStatusError, flow_options
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.topic_drift import flow_filter
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.flow_options import flow_names
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import KafkaVersion


def flow(**overrides):
    base = {"source_alias": "primary", "target_alias": "secondary", "replication_policy": "default", "replication_policy_separator": ".",
            "offset_syncs_topic_location": "source", "mirrormaker_version": None}
    base.update(overrides)
    return base


def test_a_good_flow_gives_its_names_and_release():
    names, version, problems = flow_names(flow(replication_policy_separator="_", mirrormaker_version="3.9", offset_syncs_topic_location="target"))
    assert problems == [] and version == KafkaVersion(3, 9, 0)
    assert names.checkpoints_topic == "primary_checkpoints_internal" and names.offset_syncs_topic == "mm2-offset-syncs_primary_internal"
    assert names.remote_topic("orders") == "primary_orders"


def test_options_a_module_does_not_have_take_mirrormaker_2s_defaults():
    """kafka_mirror_topic_drift_info has no offset_syncs_topic_location; kafka_mirror_offsets' target_alias is optional."""
    names, version, problems = flow_names({"source_alias": "primary", "replication_policy": "default", "replication_policy_separator": "."})
    assert problems == [] and version is None
    assert names.target_alias is None and names.offset_syncs_location == "source" and names.offset_syncs_topic is None


@pytest.mark.parametrize("overrides, require_target, message", [
    ({"source_alias": " "}, False, "source_alias must not be empty"),
    ({"source_alias": None}, False, "source_alias must not be empty"),
    ({"target_alias": ""}, True, "target_alias must not be empty"),
    ({"target_alias": "primary"}, False, "source_alias and target_alias are both 'primary'"),
    ({"replication_policy_separator": ""}, False, "replication_policy_separator must not be empty"),
    # Before, kafka_mirror_offsets let this through to fail with a traceback once it read the topics.
    ({"replication_policy": "identity", "replication_policy_separator": None}, False, "replication_policy_separator must not be empty"),
    ({"mirrormaker_version": "newest"}, False, "mirrormaker_version: 'newest' is not a Kafka version"),
    ({"mirrormaker_version": "2.4.1", "replication_policy": "identity"}, False, "replication policy identity needs MirrorMaker 2 of Kafka 3.0"),
    ({"mirrormaker_version": "2.4.1", "offset_syncs_topic_location": "target"}, False, "needs MirrorMaker 2 of Kafka 3.0 or later (KIP-716)"),
])
def test_each_bad_option_is_one_message_and_no_names(overrides, require_target, message):
    names, _version, problems = flow_names(flow(**overrides), require_target=require_target)
    assert names is None and len(problems) == 1 and message in problems[0], problems


def test_an_unset_target_is_allowed_unless_required():
    assert flow_names(flow(target_alias=None)).problems == []
    assert flow_names(flow(target_alias=None), require_target=True).problems == ["target_alias must not be empty"]


def test_every_bad_option_is_named_at_once():
    problems = flow_names(flow(source_alias="", replication_policy_separator="", mirrormaker_version="x"), require_target=True).problems
    assert [problem.split(":")[0].split(" ")[0] for problem in problems] == ["source_alias", "replication_policy_separator", "mirrormaker_version"]


STATUS = {"topics": [".*"], "topics_exclude": None, "groups": [".*"], "groups_exclude": None, "max_lag": 0, "max_heartbeat_age": 60,
          "timeout": 10, "poll_interval": 1}
OFFSETS = {"groups": [".*"], "groups_exclude": None, "offset_syncs": False, "verify": False, "verify_window": 10, "read_timeout": 5}
DRIFT = {"topics": [".*"], "topics_exclude": None}


def _message(check, error, params):
    """What check(params) raises as `error`, '' when it raises nothing."""
    try:
        check(params)
    except error as exc:
        return str(exc)
    return ""


def _status(params):
    return _message(flow_options, MirrorStatusError, dict(STATUS, **params))


def _offsets(params):
    return "; ".join(option_problems(dict(OFFSETS, **params)))


def _drift(params):
    return _message(flow_filter, ValueError, dict(DRIFT, **params))


@pytest.mark.parametrize("overrides, message", [
    ({"source_alias": ""}, "source_alias must not be empty"),
    ({"target_alias": "primary"}, "source_alias and target_alias are both 'primary'"),
    ({"replication_policy_separator": ""}, "replication_policy_separator must not be empty"),
    ({"mirrormaker_version": "newest"}, "mirrormaker_version: 'newest' is not a Kafka version"),
    ({"mirrormaker_version": "2.7.0", "replication_policy": "identity"}, "replication policy identity needs MirrorMaker 2 of Kafka 3.0"),
])
@pytest.mark.parametrize("check", [_status, _offsets, _drift], ids=["kafka_mirror_status", "kafka_mirror_offsets", "kafka_mirror_topic_drift_info"])
def test_the_three_modules_say_the_same_about_the_same_flow_option(check, overrides, message):
    assert message in check(flow(**overrides))
    assert check(flow()) == ""
