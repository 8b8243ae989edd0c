#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_topic
short_description: Create, grow, configure and delete Kafka topics in one batched, planned call
version_added: 0.1.0
description:
  - Makes a list of Kafka topics match what is asked, through the Kafka admin API, with one request per kind of change.
  - Plans first (creates, partition increases, config changes, deletions), validates every entry, lets the brokers
    dry-run the plan (O(validate_on_broker)), and only then applies it. Check mode returns the same plan without applying it.
  - A batch with any invalid entry changes nothing; the error names every bad entry.
  - Config changes use incremental alter configs, so only the keys given change; other overrides of the topic stay.
  - Values are compared normalized, so V(604800000) equals V("604800000") and V(true) equals V("true").
  - O(copy_from) makes target topics match the partition counts and per-topic config overrides of another cluster's
    topics, to pre-create them before MirrorMaker 2 instead of relying on auto-create.
  - Needs Kafka 2.4 or later (IncrementalAlterConfigs, CreateTopics with broker defaults).
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.kafka_connection
attributes:
  check_mode:
    support: full
    details:
      - Returns the plan; the brokers still dry-run it (validate_only) when O(validate_on_broker=true).
  diff_mode:
    support: full
    details:
      - One before/after entry per changed topic (partitions, replication factor, the config keys that change).
  idempotent:
    support: full
options:
  topics:
    description:
      - The topics, each with its own options. Mutually exclusive with O(name).
    type: list
    elements: dict
    suboptions:
      name:
        description: Topic name, 1 to 249 characters of V(a-z), V(A-Z), V(0-9), V(.), V(_) and V(-).
        type: str
        required: true
      partitions:
        description:
          - Number of partitions. A new topic without it gets the broker default (C(num.partitions)).
          - An existing topic with fewer partitions is grown; asking for fewer than it has is an error (Kafka cannot remove partitions).
        type: int
      replication_factor:
        description:
          - Replication factor of a new topic (broker default C(default.replication.factor) when unset).
          - Must not exceed the live brokers. For an existing topic a different value is reported in
            RV(replication_factor_mismatches) and a warning, and not changed (that needs a partition reassignment).
        type: int
      configs:
        description: Topic config overrides to set, such as C(retention.ms). Keys not given are left as they are.
        type: dict
      state:
        description: Whether the topic should exist. Defaults to O(state).
        type: str
        choices: [present, absent]
  name:
    description: A single topic (same as a one-entry O(topics)); O(partitions), O(replication_factor), O(configs) apply to it.
    type: str
  partitions:
    description: Partitions of O(name), see O(topics[].partitions).
    type: int
  replication_factor:
    description: Replication factor of O(name), see O(topics[].replication_factor).
    type: int
  configs:
    description: Config overrides of O(name), see O(topics[].configs).
    type: dict
  state:
    description: State of O(name), and the default state of O(topics) entries.
    type: str
    choices: [present, absent]
    default: present
  allow_internal:
    description:
      - Allow O(state=absent) on Kafka internal topics (C(__*)) and MirrorMaker 2 internals (C(heartbeats), C(*.heartbeats),
        C(*.internal), C(mm2-*)). Without it, asking to delete one is an error.
    type: bool
    default: false
  validate_on_broker:
    description:
      - Before changing anything, send the planned creates, partition increases and config changes with C(validate_only), so that the
        brokers report per topic what they would refuse (unknown config keys, invalid values, create policies).
      - Set to V(false) only for brokers that do not honour C(validate_only).
    type: bool
    default: true
  copy_from:
    description:
      - Another cluster whose topics the target topics should match (partition counts and per-topic config overrides).
      - Explicit O(topics) entries take precedence over copied ones with the same target name.
      - A target topic that already has more partitions than its source (made by hand, or by MirrorMaker 1 through the target's
        auto-create with the broker's C(num.partitions)) is left as it is with a warning, where an explicit entry asking for
        fewer partitions than a topic has is an error.
      - Never copied - Kafka's internal topics (C(__*)), MirrorMaker 2's own (C(mm2-*), checkpoints and heartbeats topics) and
        the topics MirrorMaker 2 of O(copy_from.mirrormaker_version) treats as internal and never replicates - before Kafka 4.0
        every C(*.internal) and C(*-internal) topic. From 4.0 (KIP-1074) MirrorMaker 2 replicates such a user topic
        (C(ops.internal)), so it is copied when O(copy_from.mirrormaker_version) is 4.0 or later; unset, the rule before 4.0 applies.
    type: dict
    suboptions:
      bootstrap_servers:
        description: Brokers of the source cluster. The other connection options have the same meaning as for the target.
        type: list
        elements: str
        required: true
      security_protocol:
        description: Protocol of the source listener.
        type: str
        default: PLAINTEXT
        choices: [PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL]
      sasl_mechanism:
        description: SASL mechanism at the source.
        type: str
        choices: [PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI]
      sasl_kerberos_service_name:
        description: Kerberos service name of the source brokers.
        type: str
      sasl_kerberos_principal:
        description: Kerberos principal to log in as at the source, with O(copy_from.sasl_kerberos_keytab) (C(kinit), see O(sasl_kerberos_principal)).
        type: str
      sasl_kerberos_keytab:
        description: Keytab of O(copy_from.sasl_kerberos_principal), a path on the host that runs the module.
        type: path
      sasl_plain_username:
        description: SASL user at the source.
        type: str
      sasl_plain_password:
        description: SASL password at the source.
        type: str
      ssl_cafile:
        description: CA bundle for the source brokers.
        type: path
      ssl_certfile:
        description: Client certificate for the source.
        type: path
      ssl_keyfile:
        description: Private key of O(copy_from.ssl_certfile).
        type: path
      ssl_password:
        description: Password of O(copy_from.ssl_keyfile).
        type: str
      ssl_check_hostname:
        description: Whether source broker certificates must match their host names.
        type: bool
        default: true
      request_timeout_ms:
        description: Request timeout at the source, in milliseconds.
        type: int
        default: 30000
      api_version:
        description: Kafka version of the source to assume instead of asking it.
        type: str
      topics:
        description: Regular expression that whole source topic names must match to be copied.
        type: str
        default: ".*"
      exclude:
        description: Regular expression; source topics whose whole name matches are not copied.
        type: str
      rename_prefix:
        description:
          - Prefix added to each copied topic name on the target. Mutually exclusive with O(copy_from.source_alias).
          - To pre-create the topics MirrorMaker 2 writes, use O(copy_from.source_alias) instead (a prefix misses the names its
            replication policy forms differently, such as C(app-heartbeats) under the identity policy).
        type: str
        default: ""
      source_alias:
        description:
          - Alias MirrorMaker 2 gives the source cluster. When set, copied topics are named as MirrorMaker 2 names remote topics
            (C(ReplicationPolicy.formatRemoteTopic)) under O(copy_from.replication_policy) and O(copy_from.replication_policy_separator).
        type: str
        version_added: 0.2.0
      replication_policy:
        description:
          - MirrorMaker 2's replication policy, with O(copy_from.source_alias); V(default) when unset.
          - V(default) (DefaultReplicationPolicy) names a copy C(<source_alias><separator><topic>); V(identity)
            (IdentityReplicationPolicy, Kafka 3.0+) keeps the name, except names ending in C(heartbeats), which it prefixes like V(default).
        type: str
        choices: [default, identity]
        version_added: 0.2.0
      replication_policy_separator:
        description: C(replication.policy.separator) of MirrorMaker 2, with O(copy_from.source_alias); V(.) when unset.
        type: str
        version_added: 0.2.0
      sync_topic_configs:
        description:
          - Whether MirrorMaker 2 syncs the topic configs of the flow (its C(sync.topic.configs.enabled), on by default).
          - With O(copy_from.source_alias), an entry of O(topics) (or O(name)) that sets configs on a copied remote topic is
            warned about when that sync will undo them. Before Kafka 3.5 MirrorMaker replaces all configs of the remote topic
            with the source's; from 3.5 it sets the source's and deletes the overrides the source does not have, except the
            keys of its C(config.properties.exclude) (taken to be O(copy_from.exclude_configs)).
        type: bool
        default: true
        version_added: 0.2.0
      mirrormaker_version:
        description:
          - Kafka release MirrorMaker 2 runs (V(2.4.1), V(3.9), V(4.3.1)), for the rule of O(copy_from.sync_topic_configs); unset warns by both rules.
          - It also decides which source topics are internal and never copied (see O(copy_from)); unset, those of a release before 4.0.
          - O(copy_from.replication_policy=identity) with a release before 3.0 (which has no IdentityReplicationPolicy) is refused.
        type: str
        version_added: 0.2.0
      replication_factor:
        description: Replication factor of copied topics. Default is the source topic's, capped at the target's live brokers.
        type: int
      exclude_configs:
        description:
          - Regular expressions of config keys not to copy. The default is MirrorMaker 2's own exclusion list
            (throttled replicas, timestamp type and difference, unclean leader election, min.insync.replicas).
        type: list
        elements: str
        default:
          - follower\.replication\.throttled\.replicas
          - leader\.replication\.throttled\.replicas
          - message\.timestamp\.difference\.max\.ms
          - message\.timestamp\.type
          - unclean\.leader\.election\.enable
          - min\.insync\.replicas
notes:
  - Topic deletion is asynchronous in Kafka; a topic deleted and recreated at once may briefly be refused by the broker.
  - The role kafkaops.mirror.kafka_topics runs this module with the inventory's connection settings.
seealso:
  - module: kafkaops.mirror.kafka_topic_info
"""

EXAMPLES = r"""
- name: Create or align topics in one call
  kafkaops.mirror.kafka_topic:
    bootstrap_servers: "{{ kafka_bootstrap_servers }}"
    topics:
      - name: orders
        partitions: 8
        replication_factor: 3
        configs:
          retention.ms: 604800000
          cleanup.policy: delete
      - name: old-orders
        state: absent

- name: One topic
  kafkaops.mirror.kafka_topic:
    bootstrap_servers: wn0-second.example.internal.cloudapp.net:9092
    name: payments
    partitions: 12
    configs:
      min.insync.replicas: 2

- name: Pre-create the primary's topics on the secondary as MirrorMaker 2 will name them
  kafkaops.mirror.kafka_topic:
    bootstrap_servers: "{{ hostvars[groups['secondary_kafka'][0]].kafka_bootstrap_servers }}"
    copy_from:
      bootstrap_servers: "{{ hostvars[groups['primary_kafka'][0]].kafka_bootstrap_servers }}"
      topics: "orders|payments.*"
      exclude: ".*-tmp"
      source_alias: primary
      replication_policy: default
"""

RETURN = r"""
created:
  description: Topics created (in check mode, that would be created).
  returned: always
  type: list
  elements: str
  sample: [orders]
updated:
  description: Existing topics whose partitions or configs changed (or would change).
  returned: always
  type: list
  elements: str
  sample: [payments]
deleted:
  description: Topics deleted (or that would be deleted).
  returned: always
  type: list
  elements: str
  sample: [old-orders]
changes:
  description:
    - Per changed topic, the action (V(create), V(update), V(delete)) and the relevant state before and after
      (partitions, replication factor, the config keys that change). V(null) for a side that does not exist;
      a V(null) partitions or replication_factor of a new topic means the broker default.
  returned: always
  type: dict
  sample:
    payments:
      action: update
      before: {partitions: 6, configs: {retention.ms: "86400000"}}
      after: {partitions: 12, configs: {retention.ms: "604800000"}}
replication_factor_mismatches:
  description: Existing topics whose replication factor differs from the one requested; they were not changed.
  returned: always
  type: dict
  sample: {orders: {current: 1, requested: 3}}
plan:
  description: On failure, the plan that was not (fully) applied, with the same keys as a successful result.
  returned: failure
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnectionError, ensure_kafka_python
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_ensure import TopicTaskError, ensure_topics, kafka_topic_argument_spec


def main():
    module = AnsibleModule(**kafka_topic_argument_spec())
    ensure_kafka_python(module)
    try:
        result = ensure_topics(module.params, module.check_mode)
    except KafkaConnectionError as exc:
        module.fail_json(msg=str(exc), changed=False)
    except TopicTaskError as exc:
        module.fail_json(msg=str(exc), **_with_diff(module, exc.result))
    for warning in result.pop("warnings"):
        module.warn(warning)
    module.exit_json(**_with_diff(module, result))


def _with_diff(module, result):
    result = dict(result)
    diff = result.pop("diff", [])
    result.pop("warnings", None)
    return dict(result, diff=diff) if module._diff else result


if __name__ == "__main__":
    main()
