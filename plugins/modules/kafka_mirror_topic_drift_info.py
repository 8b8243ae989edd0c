#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_mirror_topic_drift_info
short_description: Compare the settings of a MirrorMaker 2 flow's remote topics with their source topics
version_added: 0.2.0
description:
  - For every source topic the flow O(source_alias) -> O(target_alias) replicates, reads the topic and its remote topic on the
    target (the cluster of the top-level connection options) and compares partitions, the replication factor (against the
    target's brokers), C(cleanup.policy), C(retention.ms), C(retention.bytes), C(min.insync.replicas), C(max.message.bytes)
    and C(compression.type), as the effective values the brokers report (topic override, else the broker's setting).
  - MirrorMaker 2 creates remote topics with its own settings (before Kafka 2.8 with the target's defaults), never copies
    C(min.insync.replicas) or the replication factor, and syncs the other configs only every
    C(sync.topic.configs.interval.seconds); this report shows where the two sides differ.
  - Each difference is a finding with a severity. V(error) - the difference breaks the mirror - fewer partitions on the target
    (records of the other partitions cannot be written), a target that compacts a topic the source does not (records without
    a key are refused) or deletes by time what the source keeps by key, a smaller C(max.message.bytes) on the target, a
    replication factor below the target's C(min.insync.replicas). V(warning) - it works, with a risk - a missing remote topic, a
    replication factor below what the target's brokers allow, a shorter retention on the target. V(info) - the other differences.
  - Remote topic names follow the replication policy (O(replication_policy), O(replication_policy_separator)) as MirrorMaker 2
    of O(mirrormaker_version) names them; the topics compared are those the flow replicates (O(topics), O(topics_exclude)),
    without MirrorMaker 2's internal and heartbeats topics.
  - RV(alignment) is what the role kafkaops.mirror.kafka_topics applies with C(kafka_topics_align_to_source) to make the
    target match (through kafkaops.mirror.kafka_topic, with check mode and diff).
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.attributes.info_module
  - kafkaops.mirror.kafka_connection
  - kafkaops.mirror.replication_policy
  - kafkaops.mirror.kafka_connection.source_cluster
options:
  source:
    description:
      - Connection to the source cluster, with the same keys as the top-level connection options (which reach the target).
    type: dict
    required: true
  source_alias:
    description: Alias of the source cluster in the MirrorMaker 2 configuration (the prefix of remote topics).
    type: str
    required: true
  target_alias:
    description: Alias of the target cluster; topics that came from it (cycles) are not replicated back and not compared.
    type: str
  mirrormaker_version:
    description:
      - Kafka release MirrorMaker 2 runs (V(2.4.1), V(3.9)); picks which topics are internal in that release (before 3.1 only
        names ending in C(.internal) or C(-internal)). Unset means the rules of the newest release.
    type: str
  topics:
    description:
      - Regular expressions (whole-name match) of the source topics the flow replicates, MirrorMaker 2's C(topics).
      - As in MirrorMaker 2, a comma separates patterns, so C(a, b) is two.
    type: list
    elements: str
    default: ['.*']
  topics_exclude:
    description: Regular expressions of source topics the flow leaves out; unset means MirrorMaker 2's default C(topics.exclude).
    type: list
    elements: str
  fail_on_error:
    description:
      - Fail when a difference breaks the mirror (a finding of severity V(error)); the report is returned either way.
      - V(false) only reports, as the mirror_validation role does to show the drift in its report.
    type: bool
    default: true
seealso:
  - module: kafkaops.mirror.kafka_topic
  - module: kafkaops.mirror.kafka_topic_info
  - module: kafkaops.mirror.kafka_mirror_status
"""

EXAMPLES = r"""
- name: Where do the remote topics differ from the primary's?
  kafkaops.mirror.kafka_mirror_topic_drift_info:
    bootstrap_servers: "{{ hostvars[groups['secondary_kafka'][0]].kafka_bootstrap_servers }}"
    source:
      bootstrap_servers: "{{ hostvars[groups['primary_kafka'][0]].kafka_bootstrap_servers }}"
    source_alias: primary
    target_alias: secondary
    topics: ["orders.*", "payments"]
    fail_on_error: false
  register: drift

- name: Show every difference
  ansible.builtin.debug:
    msg: "{{ drift.findings | map(attribute='message') | list }}"
"""

RETURN = r"""
flow:
  description: The flow, C(<source>-><target>) (C(target) when O(target_alias) is unset).
  returned: always
  type: str
  sample: primary->secondary
target_brokers:
  description: Brokers in the target cluster's metadata, the bound of a remote topic's replication factor.
  returned: always
  type: int
message:
  description: One line - the counts of RV(summary) and the remote topics and settings with errors.
  returned: always
  type: str
  sample: "3 topic(s) compared, 1 in sync, 0 missing on the target, 1 error(s), 1 warning(s), 2 other difference(s): errors in
    primary.orders partitions"
summary:
  description: Counts - topics compared, in sync (no finding), missing on the target, and findings by severity.
  returned: always
  type: dict
  sample: {topics: 3, in_sync: 1, missing: 0, errors: 1, warnings: 1, infos: 2}
topics:
  description: One entry per replicated source topic.
  returned: always
  type: list
  elements: dict
  contains:
    topic:
      description: Source topic.
      type: str
    remote_topic:
      description: Its name on the target under the replication policy.
      type: str
    status:
      description: V(in_sync), V(missing) (no remote topic), or the severity of its worst finding (V(error), V(warning), V(info)).
      type: str
    source:
      description: C(partitions), C(replication_factor) and C(configs) (the compared keys) of the source topic.
      type: dict
    target:
      description: The same of the remote topic, V(null) when it does not exist.
      type: dict
    findings:
      description: The topic's findings, as in RV(findings).
      type: list
      elements: dict
findings:
  description:
    - Every difference, with C(severity), C(check) (the setting, such as V(partitions) or V(cleanup.policy)), C(cluster) (the
      target's alias), C(topic), C(remote_topic), C(source) and C(target) (the two values), C(message) and C(fix).
  returned: always
  type: list
  elements: dict
  sample:
    - severity: error
      check: partitions
      cluster: secondary
      topic: orders
      remote_topic: primary.orders
      source: 8
      target: 4
      message: "orders -> primary.orders: 4 partition(s) on the target, 8 on the source: records of source partitions 4-7 have no
        partition to go to and MirrorMaker 2's writes of them fail"
      fix: "add partitions to the remote topic (Kafka can only grow them): align the remote topic with the source (role
        kafkaops.mirror.kafka_topics, kafka_topics_align_to_source: true)"
alignment:
  description:
    - Entries for the O(kafkaops.mirror.kafka_topic#module:topics) option that make each remote topic match its source topic - a
      missing one created with the source's partitions and replication factor (at most the target's brokers), partitions grown
      (never shrunk), the compared configs set to the source's (C(min.insync.replicas) at most the remote topic's replication
      factor). A replication factor is never changed.
  returned: always
  type: list
  elements: dict
  sample: [{name: primary.orders, partitions: 8, configs: {cleanup.policy: delete}}]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaConnectionError, ensure_kafka_python
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.flow_arguments import flow_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.topic_drift import alignment_entries, drift_report
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.findings import ERROR, finding_text


def main():
    spec = flow_argument_spec(require_source=True, require_target=False, filters=("topics",))
    spec.update(fail_on_error=dict(type="bool", default=True))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    ensure_kafka_python(module)
    try:
        report = drift_report(module.params, KafkaConnection)
    except ValueError as exc:
        module.fail_json(msg="kafka_mirror_topic_drift_info: %s." % exc)
    except KafkaConnectionError as exc:
        module.fail_json(msg=str(exc))
    result = dict(report, alignment=alignment_entries(report))
    errors = [item for item in report["findings"] if item["severity"] == ERROR]
    if errors and module.params["fail_on_error"]:
        details = " | ".join(finding_text(item) for item in errors)
        module.fail_json(msg="Topic settings of flow %s break the mirror (%s): %s" % (report["flow"], report["message"], details), **result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
