# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters mm2_topics_exclude and mm2_remote_prefix, and playbooks/mirror.yml's pre-creation stage (its expressions rendered)."""
import re

import jinja2
import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.filter import mm2_names as plugin
from ansible_collections.kafkaops.mirror.plugins.module_utils.kafka_topic_copy import target_name
from tests.support.checkout import REPO

PLAYBOOK = REPO / "playbooks" / "mirror.yml"
ROLE_DEFAULTS = yaml.safe_load((REPO / "roles" / "kafka_topics" / "defaults" / "main.yml").read_text())


def test_default_exclude_is_mm2s_topics_exclude_default():
    """DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT = ".*[\\-\\.]internal, .*\\.replica, __.*"."""
    regex = re.compile(plugin.mm2_topics_exclude(None))
    assert [name for name in ("a.internal", "a-internal", "a.replica", "__x", "orders", "heartbeats") if regex.fullmatch(name)] == [
        "a.internal", "a-internal", "a.replica", "__x"]


def test_given_patterns_replace_the_default_with_the_comma_rule():
    regex = re.compile(plugin.mm2_topics_exclude("tmp.*, scratch"))
    assert regex.fullmatch("tmp1") and regex.fullmatch("scratch") and not regex.fullmatch("a.internal")
    assert plugin.mm2_topics_exclude("") == ""
    with pytest.raises(AnsibleFilterError, match=r"'bad\(' is not a regular expression"):
        plugin.mm2_topics_exclude(["bad("])


@pytest.mark.parametrize("policy, separator, prefix", [("default", ".", "primary."), ("default", "_", "primary_"), ("identity", ".", "")])
def test_remote_prefix(policy, separator, prefix):
    """DefaultReplicationPolicy / IdentityReplicationPolicy.formatRemoteTopic of a name not ending in heartbeats."""
    assert plugin.mm2_remote_prefix("primary", policy, separator) == prefix
    with pytest.raises(AnsibleFilterError, match="not one of default, identity"):
        plugin.mm2_remote_prefix("primary", "prefix")


def _playbook_expressions():
    plays = yaml.safe_load(PLAYBOOK.read_text())
    for play in plays:
        for role in play.get("roles", []):
            if isinstance(role, dict) and role.get("role") == "kafkaops.mirror.kafka_topics":
                return role["vars"]
    raise AssertionError("playbooks/mirror.yml has no kafka_topics stage")


def _render(expression, variables):
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
    environment.filters.update({"kafkaops.mirror." + name: function for name, function in plugin.FilterModule().filters().items()})
    return environment.from_string(expression).render(**variables)


@pytest.mark.parametrize("variables, exclude, names", [
    ({}, plugin.mm2_topics_exclude(None), ["primary.app-heartbeats", "primary.orders"]),
    # IdentityReplicationPolicy.formatRemoteTopic keeps `orders` and prefixes `app-heartbeats` (looksLikeHeartbeat).
    ({"mirror_topics_exclude": "tmp.*", "mirrormaker2_replication_policy": "identity"}, "(?:tmp.*)", ["orders", "primary.app-heartbeats"]),
    ({"mirrormaker2_replication_policy_separator": "_"}, plugin.mm2_topics_exclude(None), ["primary_app-heartbeats", "primary_orders"]),
])
def test_mirror_playbook_pre_creates_under_mm2s_names(variables, exclude, names):
    stage = _playbook_expressions()
    variables = dict(variables, hostvars={"p0": {"kafka_cluster_alias": "primary"}}, groups={"primary_kafka": ["p0"]})
    assert _render(stage["kafka_topics_copy_exclude"], variables) == exclude
    assert "kafka_topics_copy_rename_prefix" not in stage
    rules = {"source_alias": _render(ROLE_DEFAULTS["kafka_topics_mirror_source_alias"], dict(variables, kafka_topics_source_group="primary_kafka")),
             "replication_policy": _render(stage["kafka_topics_mirror_replication_policy"], variables),
             "replication_policy_separator": _render(stage["kafka_topics_mirror_replication_policy_separator"], variables)}
    assert sorted(target_name(topic, rules) for topic in ("orders", "app-heartbeats")) == names
