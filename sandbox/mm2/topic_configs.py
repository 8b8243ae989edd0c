# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Remote topic configs as MirrorSourceConnector sets them: at creation, and every sync.topic.configs.interval.seconds.

Written from MirrorSourceConnector (createTopicPartitions / createNewTopics, targetConfig, syncTopicConfigs,
updateTopicConfigs / incrementalAlterConfigs) at 2.4.1, 2.8.0, 3.1.0, 3.1.1, 3.5.0 and 3.9:
- creation: no configs before 2.8; 2.8 - 3.1 every config the source describes (defaults included, the
  exclude list not applied); 3.1.1+ the non-default, non-read-only, non-sensitive, non-static-broker configs
  that config.properties.exclude lets through. Creation ignores sync.topic.configs.enabled.
- periodic sync (sync.topic.configs.enabled, first run at start): before 3.5 the deprecated AlterConfigs,
  so the remote topic ends up with exactly the synced set (its other overrides are dropped); 3.5+
  IncrementalAlterConfigs: SET what is set on the source, DELETE what is a default there, nothing else.
"""
from __future__ import annotations

import logging

from kafka.admin import ConfigResource, ConfigResourceType

from sandbox.mm2.behaviour import CREATE_WITH_ALL_CONFIGS, CREATE_WITHOUT_CONFIGS, INCREMENTAL_CONFIGS

LOG = logging.getLogger("sandbox.mm2")


def _is_default(entry):
    return entry.get("config_source") == "DEFAULT_CONFIG"


def _copyable(entry):
    return not entry.get("read_only") and not entry.get("is_sensitive") and entry.get("config_source") != "STATIC_BROKER_CONFIG"


class TopicConfigSync:
    def __init__(self, flow, source, target):
        self.flow, self.source, self.target = flow, source, target
        # use.incremental.alter.configs (3.5+): requested (default) or required use IncrementalAlterConfigs, never does not.
        self.incremental = (flow.behaviour.config_sync == INCREMENTAL_CONFIGS
                            and str(flow.get("use.incremental.alter.configs") or "requested").strip() != "never")

    def _describe(self, clients, topics):
        if not topics:
            return {}
        # Quirk (tansu 0.6.0): it describes only the keys that were set, flagged as defaults, so nothing is copied from a tansu source.
        described = clients.admin().describe_configs([ConfigResource(ConfigResourceType.TOPIC, t) for t in topics], config_filter="all")
        return described.get("topic", {})

    def _set_on_source(self, entries):
        return {key: entry["value"] for key, entry in entries.items()
                if not _is_default(entry) and _copyable(entry) and self.flow.config_properties.replicates(key) and entry.get("value") is not None}

    def for_new_topic(self, topic):
        """The configs MirrorSourceConnector creates the remote topic of `topic` with."""
        mode = self.flow.behaviour.new_topic_configs
        if mode == CREATE_WITHOUT_CONFIGS:
            return {}
        entries = self._describe(self.source, [topic]).get(topic, {})
        if mode == CREATE_WITH_ALL_CONFIGS:
            return {key: entry["value"] for key, entry in entries.items() if entry.get("value") is not None}
        return self._set_on_source(entries)

    def sync(self, topics):
        """syncTopicConfigs for source topics whose remote topics exist."""
        if not topics:
            return
        described = self._describe(self.source, sorted(topics))
        remote_names = {topic: self.flow.records.remote_topic(topic) for topic in described}
        # The deprecated AlterConfigs replaces the whole set; sent here as IncrementalAlterConfigs SET + DELETE of every other
        # override, because kafka-python 3's AlterConfigs path re-adds the omitted keys and tansu has no AlterConfigs.
        current = {} if self.incremental else self._describe(self.target, sorted(remote_names.values()))
        resources = []
        for topic, entries in sorted(described.items()):
            remote = remote_names[topic]
            wanted = self._set_on_source(entries)
            if self.incremental:
                ops = {key: ("SET", value) for key, value in wanted.items()}
                # use.defaults.from=target (DefaultConfigPropertyFilter.shouldReplicateSourceDefault false): source defaults are deleted.
                ops.update({key: ("DELETE", None) for key, entry in entries.items()
                            if _is_default(entry) and _copyable(entry) and self.flow.config_properties.replicates(key)})
            else:
                ops = {key: ("SET", value) for key, value in wanted.items()}
                ops.update({key: ("DELETE", None) for key, entry in current.get(remote, {}).items()
                            if key not in wanted and entry.get("config_source") == "DYNAMIC_TOPIC_CONFIG"})
            if ops:
                resources.append(ConfigResource(ConfigResourceType.TOPIC, remote, configs=ops))
        if not resources:
            return
        results = self.target.admin().alter_configs(resources, raise_on_unknown=False, incremental=True)
        failed = {name: result for name, result in results.get("topic", {}).items() if result != "OK"}
        for name, error in failed.items():
            LOG.warning("%s: could not alter configuration of topic %s: %s", self.flow.name, name, error)
        LOG.info("%s: synced configs of %d remote topics", self.flow.name, len(resources) - len(failed))
