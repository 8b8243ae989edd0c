# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the mirrormaker2 role's health wait can expect of each flow, from the MirrorMaker 2 properties it renders.

The wait (module kafka_mirror_status) polls for heartbeats, offset syncs and lag. How soon those can hold is set by
intervals MirrorMaker 2 reads per flow (`<source>-><target>.<key>`, else the top-level `<key>`):

- emit.heartbeats.interval.seconds: MirrorHeartbeatTask writes its first heartbeat one interval after it starts and
  one per interval after that, so the interval must be below the wait's timeout and at most the heartbeat age it
  accepts, or a healthy mirror can never pass.
- refresh.topics.interval.seconds: a source topic that MirrorMaker 2 did not list when it started is replicated only
  after the next refresh. The role restarts a running MirrorMaker that misses topics before it waits (tasks/topics.yml),
  so only a topic created while the role waits depends on it: a warning when the refresh is longer than the timeout.
- refresh.groups.interval.seconds and emit.checkpoints.interval.seconds: when a new group's checkpoints appear; the
  wait checks no checkpoints (the failover role waits for them), so they bound nothing here and are only reported.

MirrorMaker 2 has read these keys, with the same defaults, in every release from 2.4 on, except emit.offset-syncs.enabled
(3.9), which can switch offset syncs off; a release before it always writes them.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.keys import KEYS_SINCE
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import KafkaVersion

CONDITIONS = ("heartbeats", "offset_syncs", "lag")
# MirrorMaker 2's defaults (MirrorConnectorConfig / MirrorSourceConfig / MirrorCheckpointConfig, 2.4.1 to 3.9), used for
# a key the properties leave out.
MM2_DEFAULTS = {
    "emit.heartbeats.enabled": True,
    "emit.heartbeats.interval.seconds": 1,
    "emit.offset-syncs.enabled": True,
    "refresh.topics.enabled": True,
    "refresh.topics.interval.seconds": 600,
    "refresh.groups.enabled": True,
    "refresh.groups.interval.seconds": 600,
    "emit.checkpoints.enabled": True,
    "emit.checkpoints.interval.seconds": 60,
}
INTERVAL_KEYS = ("emit.heartbeats.interval.seconds", "refresh.topics.interval.seconds", "refresh.groups.interval.seconds",
                 "emit.checkpoints.interval.seconds")


def _flag(value):
    return value if isinstance(value, bool) else str(value).strip().lower() == "true"


class _FlowSettings:
    """The value MirrorMaker 2 of `version` reads for one flow: the flow-scoped key, else the top-level one, else its default."""

    def __init__(self, properties, flow, version):
        self.properties, self.prefix, self.version = properties, "%s->%s." % flow, version

    def read(self, key):
        arrival = KEYS_SINCE.get(key)
        if arrival and self.version < arrival[0]:
            return MM2_DEFAULTS[key]
        return self.properties.get(self.prefix + key, self.properties.get(key, MM2_DEFAULTS[key]))

    def seconds(self, key):
        return int(self.read(key))

    def enabled(self, key):
        return _flag(self.read(key))


def _check_flow(name, settings, wait_for, timeout_s, max_heartbeat_age_s, plan):
    errors, warnings = [], []
    heartbeat_interval = settings.seconds("emit.heartbeats.interval.seconds")
    if "heartbeats" in wait_for:
        if heartbeat_interval >= timeout_s:
            errors.append("flow %s: MirrorMaker writes its first heartbeat emit.heartbeats.interval.seconds (%d s) after it starts, so "
                          "mirrormaker2_health_timeout (%d s) ends before one can arrive; raise the timeout above %d or lower the interval"
                          % (name, heartbeat_interval, timeout_s, heartbeat_interval))
        if heartbeat_interval > max_heartbeat_age_s:
            errors.append("flow %s: heartbeats come every %d s (emit.heartbeats.interval.seconds) but mirrormaker2_max_heartbeat_age is %d s, "
                          "so a healthy mirror's newest heartbeat is often older than the limit; set mirrormaker2_max_heartbeat_age to at "
                          "least %d or lower the interval" % (name, heartbeat_interval, max_heartbeat_age_s, heartbeat_interval))
    refresh = settings.seconds("refresh.topics.interval.seconds")
    if not settings.enabled("refresh.topics.enabled"):
        warnings.append("flow %s: refresh.topics.enabled is false, so a topic created on the source while MirrorMaker runs is mirrored "
                        "only after a restart (the role restarts MirrorMaker when it finds such topics)" % name)
    elif refresh > timeout_s:
        warnings.append("flow %s: refresh.topics.interval.seconds (%d s) is longer than mirrormaker2_health_timeout (%d s): a topic created "
                        "on the source while the role waits is not mirrored before the wait ends" % (name, refresh, timeout_s))
    plan["intervals"] = {key: settings.seconds(key) for key in INTERVAL_KEYS}
    return errors, warnings


def health_wait_plan(properties, flows, engine, kafka_version, timeout_s, max_heartbeat_age_s):
    """{"flows": {"A->B": {"wait_for": [...], "intervals": {...}}}, "errors": [...], "warnings": [...]} for the enabled
    `flows` ((source, target) pairs) under the rendered MirrorMaker 2 `properties` (a dict); for engine mm1, whose
    MirrorMaker writes no heartbeats or offset syncs, only the lag can be waited for and no interval applies."""
    version = KafkaVersion.parse(kafka_version)
    result = {"flows": {}, "errors": [], "warnings": []}
    for problem, value in (("mirrormaker2_health_timeout", timeout_s), ("mirrormaker2_max_heartbeat_age", max_heartbeat_age_s)):
        if int(value) <= 0:
            result["errors"].append("%s must be > 0, got %s" % (problem, value))
    if result["errors"]:
        return result
    for source, target in flows:
        name = "%s->%s" % (source, target)
        if engine == "mm1":
            result["flows"][name] = {"wait_for": ["lag"], "intervals": {}}
            continue
        settings = _FlowSettings(properties, (source, target), version)
        wait_for = [condition for condition in CONDITIONS
                    if not (condition == "heartbeats" and not settings.enabled("emit.heartbeats.enabled"))
                    and not (condition == "offset_syncs" and not settings.enabled("emit.offset-syncs.enabled"))]
        plan = {"wait_for": wait_for}
        errors, warnings = _check_flow(name, settings, wait_for, int(timeout_s), int(max_heartbeat_age_s), plan)
        result["flows"][name] = plan
        result["errors"] += errors
        result["warnings"] += warnings
    return result
