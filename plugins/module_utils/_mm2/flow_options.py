# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one check of the options that describe a MirrorMaker 2 flow, shared by the modules that read one.

kafka_mirror_status, kafka_mirror_offsets and kafka_mirror_topic_drift_info take the same flow options (source_alias,
target_alias, replication_policy, replication_policy_separator, offset_syncs_topic_location where they read the offset
syncs, mirrormaker_version). flow_names() checks them and builds the flow's FlowNames, with one message per bad option;
each module adds the checks of its own options and says how it fails.
"""
from __future__ import annotations

from collections import namedtuple

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import DEFAULT_SEPARATOR, POLICIES, FlowNames
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import KafkaVersion

Flow = namedtuple("Flow", "names version problems")


def replication_policy_argument_spec():
    """The module options that choose a flow's replication policy and its separator (doc fragment
    kafkaops.mirror.replication_policy), for every module that names a flow's topics."""
    return dict(
        replication_policy=dict(type="str", default="default", choices=list(POLICIES)),
        replication_policy_separator=dict(type="str", default=DEFAULT_SEPARATOR),
    )


def _blank(value):
    return value is None or not str(value).strip()


def flow_names(params, require_target=False):
    """Flow(names, version, problems) of the flow options in `params` (module parameters).

    names: the FlowNames, None when an option is bad; version: the KafkaVersion of mirrormaker_version, None when unset or
    bad; problems: one message per bad option (empty when names is set). target_alias may be unset (None, as '') unless
    require_target; it must differ from source_alias.
    """
    problems = []
    source, target = params.get("source_alias"), params.get("target_alias")
    if _blank(source):
        problems.append("source_alias must not be empty")
    if require_target and _blank(target):
        problems.append("target_alias must not be empty")
    elif not _blank(source) and source == target:
        problems.append("source_alias and target_alias are both %r" % (source,))
    separator = params.get("replication_policy_separator", DEFAULT_SEPARATOR)
    if not separator:
        problems.append("replication_policy_separator must not be empty")
    version = None
    if params.get("mirrormaker_version"):
        try:
            version = KafkaVersion.parse(params["mirrormaker_version"])
        except ValueError as exc:
            problems.append("mirrormaker_version: %s" % exc)
    names = None
    if not problems:
        try:
            names = FlowNames(source, target, params.get("replication_policy") or "default", separator,
                              params.get("offset_syncs_topic_location") or "source", version)
        except ValueError as exc:
            problems.append(str(exc))
    return Flow(names, version, problems)
