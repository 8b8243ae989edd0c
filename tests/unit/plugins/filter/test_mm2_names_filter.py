# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters mm2_topics_exclude and mm2_remote_prefix, and the expressions that use the first: playbooks/mirror.yml's pre-creation
stage and mirror_validation's topic drift step (rendered)."""
import ast
import re

import jinja2
import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.filter import mm2_names as plugin
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_copy import copy_rule_problems, target_name
from tests.support.checkout import REPO

PLAYBOOK = REPO / "playbooks" / "mirror.yml"
ROLE_DEFAULTS = yaml.safe_load((REPO / "roles" / "kafka_topics" / "defaults" / "main.yml").read_text())


def test_default_exclude_is_mm2s_topics_exclude_default():
    """DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT = ".*[\\-\\.]internal, .*\\.replica, __.*"."""
    regex = re.compile(plugin.mm2_topics_exclude(None))
    assert [name for name in ("a.internal", "a-internal", "a.replica", "__x", "orders", "heartbeats") if regex.fullmatch(name)] == [
        "a.internal", "a-internal", "a.replica", "__x"]


NAMES = ("a.internal", "a-internal", "ops.internal", "mm2-offsets.primary.internal", "mm2-offset-syncs.secondary.internal",
         "primary.checkpoints.internal", "a.replica", "__x", "orders", "heartbeats")


@pytest.mark.parametrize("version", ["2.4.1", "3.9", "3.9.2", "2.4.1.5.0.3000", None, ""])
def test_default_exclude_before_4_0_and_with_the_release_unknown(version):
    """DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT of 2.4.0-3.9, ".*[\\-\\.]internal, .*\\.replica, __.*"; the release not known
    (None, or '' as playbooks pass an unset one): that list, which leaves out more."""
    regex = re.compile(plugin.mm2_topics_exclude(None, version))
    assert plugin.mm2_topics_exclude(None, version) == plugin.mm2_topics_exclude(None)
    assert [name for name in NAMES if not regex.fullmatch(name)] == ["orders", "heartbeats"]


@pytest.mark.parametrize("version", ["4.0", "4.0.0", "4.3.1", "5.0"])
def test_default_exclude_from_4_0(version):
    """KIP-1074 (KAFKA-17200): 4.0's DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT is "mm2.*\\.internal, .*\\.replica, __.*", so a
    user topic named *.internal or *-internal is replicated; MirrorMaker 2's checkpoints topics are left out by
    isInternalTopic, not by this list."""
    regex = re.compile(plugin.mm2_topics_exclude(None, version))
    assert [name for name in NAMES if not regex.fullmatch(name)] == ["a.internal", "a-internal", "ops.internal",
                                                                     "primary.checkpoints.internal", "orders", "heartbeats"]


def test_given_patterns_replace_the_default_with_the_comma_rule():
    regex = re.compile(plugin.mm2_topics_exclude("tmp.*, scratch"))
    assert regex.fullmatch("tmp1") and regex.fullmatch("scratch") and not regex.fullmatch("a.internal")
    assert plugin.mm2_topics_exclude("") == ""
    with pytest.raises(AnsibleFilterError, match=r"'bad\(' is not a regular expression"):
        plugin.mm2_topics_exclude(["bad("])
    # The release only picks the default: given patterns are the same for every release.
    for version in ("3.9.2", "4.3.1", None):
        assert plugin.mm2_topics_exclude("tmp.*, scratch", version) == plugin.mm2_topics_exclude("tmp.*, scratch")


def test_a_version_that_is_not_one_is_refused():
    with pytest.raises(AnsibleFilterError, match=r"version: 'four' is not a Kafka version"):
        plugin.mm2_topics_exclude(None, "four")
    with pytest.raises(AnsibleFilterError, match=r"'bad\(' is not a regular expression.*; version: 'four'"):
        plugin.mm2_topics_exclude(["bad("], "four")


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


def _stage_copy_rules(stage, variables):
    """copy_from's rules as the kafka_topics role builds them from what mirror.yml's stage gives it."""
    names = ("kafka_topics_mirror_source_alias", "kafka_topics_mirror_replication_policy", "kafka_topics_mirror_replication_policy_separator",
             "kafka_topics_mirror_version")
    return _copy_rules(**{name: _render(stage[name], variables).strip() for name in names})


@pytest.mark.parametrize("variables, exclude, names", [
    ({}, plugin.mm2_topics_exclude(None), ["primary.app-heartbeats", "primary.orders"]),
    # IdentityReplicationPolicy.formatRemoteTopic keeps `orders` and prefixes `app-heartbeats` (looksLikeHeartbeat).
    ({"mirror_topics_exclude": "tmp.*", "mirrormaker2_replication_policy": "identity"}, "(?:tmp.*)", ["orders", "primary.app-heartbeats"]),
    ({"mirrormaker2_replication_policy_separator": "_"}, plugin.mm2_topics_exclude(None), ["primary_app-heartbeats", "primary_orders"]),
    # The release the stage's pre_task sets (mirrormaker2's tasks/version.yml) picks MirrorMaker 2's default exclude.
    ({"mirrormaker2_kafka_version_resolved": "3.9.2"}, plugin.mm2_topics_exclude(None, "3.9.2"), ["primary.app-heartbeats", "primary.orders"]),
    ({"mirrormaker2_kafka_version_resolved": "4.3.1"}, plugin.mm2_topics_exclude(None, "4.3.1"), ["primary.app-heartbeats", "primary.orders"]),
    # MirrorMaker 1 keeps every name, heartbeats topics included, in every release it has: the runbooks' 2.4.1 (whose
    # MirrorMaker 2 has no identity policy: the module refused the copy when the stage named it so) and 3.x.
    ({"mirrormaker2_engine": "mm1", "mirrormaker2_kafka_version_resolved": "2.4.1"}, plugin.mm2_topics_exclude(None, "2.4.1"),
     ["app-heartbeats", "orders"]),
    ({"mirrormaker2_engine": "mm1", "mirrormaker2_kafka_version_resolved": "3.2.0"}, plugin.mm2_topics_exclude(None, "3.2.0"),
     ["app-heartbeats", "orders"]),
])
def test_mirror_playbook_pre_creates_under_the_names_mirrormaker_writes(variables, exclude, names):
    stage = _playbook_expressions()
    variables = dict(variables, hostvars={"p0": {"kafka_cluster_alias": "primary"}}, groups={"primary_kafka": ["p0"]})
    assert _render(stage["kafka_topics_copy_exclude"], variables) == exclude
    assert "kafka_topics_copy_rename_prefix" not in stage
    rules = _stage_copy_rules(stage, variables)
    assert copy_rule_problems(rules) == []
    assert sorted(target_name(topic, rules) for topic in ("orders", "app-heartbeats")) == names


def test_mirror_playbook_copies_a_user_internal_topic_when_4_x_runs_mirrormaker():
    """KIP-1074: with MirrorMaker 2 of 4.x the stage's exclude no longer leaves out `ops.internal` (it is replicated), and the
    release reaches copy_from as kafka_topics_mirror_version; with 3.9 or the release unknown it stays out."""
    stage = _playbook_expressions()
    base = dict(hostvars={"p0": {"kafka_cluster_alias": "primary"}}, groups={"primary_kafka": ["p0"]})
    for version, copied in (("4.3.1", True), ("3.9.2", False), (None, False)):
        variables = dict(base, mirrormaker2_kafka_version_resolved=version) if version else base
        exclude = re.compile(_render(stage["kafka_topics_copy_exclude"], variables))
        assert (not exclude.fullmatch("ops.internal")) is copied, version
        assert exclude.fullmatch("mm2-offsets.primary.internal") and exclude.fullmatch("__consumer_offsets"), version
        assert _render(stage["kafka_topics_mirror_version"], variables) == (version or "")


def _drift_task():
    tasks = yaml.safe_load((REPO / "roles" / "mirror_validation" / "tasks" / "main.yml").read_text())
    [task] = [task for task in tasks if "kafkaops.mirror.kafka_mirror_topic_drift_info" in task]
    return task["kafkaops.mirror.kafka_mirror_topic_drift_info"]


@pytest.mark.parametrize("version, left_out", [
    ("4.3.1", ["a.replica", "mm2-offsets.primary.internal", "tmp1"]),
    ("3.9.2", ["a-internal", "a.replica", "mm2-offsets.primary.internal", "ops.internal", "tmp1"]),
])
def test_the_validation_drift_step_uses_the_release_s_default_exclude(version, left_out):
    """mirror_validation's drift step with mirror_validation_exclude set: MirrorMaker 2's default topics.exclude of the release
    that runs it (the role's version.yml sets mirrormaker2_kafka_version_resolved first) plus the validation's own pattern."""
    expression = _drift_task()["topics_exclude"]
    # A template that is one expression gives Ansible its value (a list here); plain Jinja2 renders it as Python's repr.
    variables = {"mirrormaker2_kafka_version_resolved": version, "mirror_validation_exclude": "tmp.*", "omit": "__omit__"}
    patterns = ast.literal_eval(_render(expression, variables))
    assert patterns == [plugin.mm2_topics_exclude(None, version), "tmp.*"]
    regexes = [re.compile(pattern) for pattern in patterns]
    names = ("ops.internal", "a-internal", "mm2-offsets.primary.internal", "a.replica", "tmp1", "orders")
    assert sorted(name for name in names if any(regex.fullmatch(name) for regex in regexes)) == left_out
    assert _render(expression, dict(variables, mirror_validation_exclude="")) == "__omit__"


def _copy_rules(**variables):
    """roles/kafka_topics' copy_from rules (the Align task's _kafka_topics_copy_rules) rendered; `combine` as Ansible's."""
    tasks = yaml.safe_load((REPO / "roles" / "kafka_topics" / "tasks" / "main.yml").read_text())
    [task] = [task for task in tasks if "kafkaops.mirror.kafka_topic" in task]
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
    environment.filters["combine"] = lambda base, extra: dict(base, **extra)
    defaults = {key: value for key, value in ROLE_DEFAULTS.items() if key.startswith("kafka_topics_copy_") or key.startswith("kafka_topics_mirror_")}
    values = dict(defaults, kafka_topics_mirror_source_alias="primary")
    values.update(variables)
    return ast.literal_eval(environment.from_string(task["vars"]["_kafka_topics_copy_rules"]).render(**values))


@pytest.mark.parametrize("naming", [{}, {"kafka_topics_copy_rename_prefix": "primary."}])
def test_the_kafka_topics_role_passes_the_release_to_copy_from(naming):
    """The release decides which source topics copy_from leaves out as internal under either naming (KIP-1074); unset, None."""
    assert _copy_rules(kafka_topics_mirror_version="4.3.1", **naming)["mirrormaker_version"] == "4.3.1"
    assert _copy_rules(**naming)["mirrormaker_version"] is None
    assert ("source_alias" in _copy_rules(**naming)) is (not naming)
