#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_mirror_status
short_description: Report (and optionally wait for) the health of one MirrorMaker 2 replication flow
version_added: 0.1.0
description:
  - Reads what MirrorMaker 2 leaves on both clusters for the flow O(source_alias) -> O(target_alias) and reports, per
    source topic-partition, the source end offset, the last offset sync (upstream -> downstream), the target end offset
    and the lag in records; the age of the newest heartbeat; and how many topic-partitions each consumer group has checkpoints for.
  - Lag is computed from the last offset sync so that it stays right on real Kafka, where downstream offsets differ from
    upstream ones. Without an offset sync it compares record counts. It can only overestimate, never hide missing records.
  - From Kafka 3.5 MirrorMaker 2 can write the target in transactions (exactly-once), whose commit markers take offsets.
    For O(mirrormaker_version) 3.5 or later, or unset, the target's records after the last offset sync are therefore
    counted with a C(read_committed) consumer (a short read, MirrorMaker syncs every C(offset.lag.max) records) instead of
    being taken from its end offset.
  - With O(wait=true) it polls until the conditions in O(wait_for) hold or O(timeout) passes, and fails naming the unmet
    conditions. The polls are returned in RV(progress).
  - The top-level connection options reach the B(target) cluster; O(source) takes the same options for the source cluster.
  - Decodes the real MirrorMaker 2 record formats (heartbeats, offset syncs, checkpoints).
  - Reports offset syncs and checkpoints that cannot belong to the current topics (RV(stale_state)), such as those an earlier
    deployment left after the target or a remote topic was deleted and created again, each with the internal topic, the
    partitions and offsets, and the fix; every such finding is also shown as a warning. They do not change RV(healthy).
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.attributes.info_module
  - kafkaops.mirror.kafka_connection
  - kafkaops.mirror.kafka_connection.source_cluster
options:
  source:
    description:
      - Connection to the source cluster, with the same keys as the top-level connection options (O(bootstrap_servers),
        O(security_protocol), O(sasl_mechanism), O(sasl_plain_username), O(sasl_plain_password), O(ssl_cafile), and so on).
    type: dict
    required: true
  source_alias:
    description: Alias of the source cluster in the MirrorMaker 2 configuration.
    type: str
    required: true
  target_alias:
    description: Alias of the target cluster in the MirrorMaker 2 configuration.
    type: str
    required: true
  replication_policy:
    description: Replication policy of the flow; decides the remote topic names.
    type: str
    choices: [default, identity]
    default: default
  replication_policy_separator:
    description:
      - MirrorMaker's C(replication.policy.separator), used by both policies for the C(<source>.heartbeats) name and, from Kafka 3.1
        (KIP-690), in the internal topics' names (C(<source>_checkpoints_internal) with V(_)).
    type: str
    default: .
  offset_syncs_topic_location:
    description:
      - Cluster that holds the offset-syncs topic (MirrorMaker's C(offset-syncs.topic.location), Kafka 3.0+).
      - It is named after the other cluster, C(mm2-offset-syncs.<target>.internal) on the source and
        C(mm2-offset-syncs.<source>.internal) on the target.
    type: str
    choices: [source, target]
    default: source
  mirrormaker_version:
    description:
      - Kafka release MirrorMaker 2 runs (V(2.4.1), V(3.9)); picks the internal topic names of that release (before 3.1 they
        always use C(.)), and whether the target may hold transactions (3.5+). Unset means the rules of the newest release.
    type: str
  topics:
    description:
      - Regular expressions (whole-name match) of the source topics the flow replicates.
      - As in MirrorMaker 2's C(topics) (and the other pattern options here), a comma separates patterns, so C(a, b) is two.
    type: list
    elements: str
    default: ['.*']
  topics_exclude:
    description: Regular expressions of source topics the flow leaves out; unset means MirrorMaker's default exclusions.
    type: list
    elements: str
  groups:
    description: Regular expressions of the consumer groups whose checkpoints are counted.
    type: list
    elements: str
    default: ['.*']
  groups_exclude:
    description: Regular expressions of groups not counted; unset means MirrorMaker's default exclusions.
    type: list
    elements: str
  wait:
    description: Poll until the conditions in O(wait_for) hold, failing after O(timeout) seconds.
    type: bool
    default: false
  wait_for:
    description:
      - V(heartbeats) - a heartbeat of this flow (emitted, or replicated from the source) at most O(max_heartbeat_age) seconds old.
      - V(offset_syncs) - every source partition that has records has an offset sync.
      - V(lag) - every remote topic exists and no partition lags more than O(max_lag) records; with O(mirrormaker1_group), also
        that the group has a member.
      - Unset, all three; with O(mirrormaker1_group), V(lag), the only one MirrorMaker 1 has.
    type: list
    elements: str
    choices: [heartbeats, offset_syncs, lag]
  mirrormaker1_group:
    description:
      - The flow is MirrorMaker 1's (C(kafka.tools.MirrorMaker), Kafka up to 3.9), and this is its consumer group on the source.
      - MirrorMaker 1 keeps topic names (O(replication_policy) must be V(identity)), partitions the records again on the
        target, and writes no heartbeats, offset syncs or checkpoints. A partition's lag is its end offset minus the group's
        committed offset, which MirrorMaker 1 commits only after its producer flushed; RV(partitions[].committed_offset) has it,
        and RV(group) the group's state and members (none means MirrorMaker 1 is not consuming).
    type: str
  max_lag:
    description: Largest acceptable lag of a partition, in records.
    type: int
    default: 0
  max_heartbeat_age:
    description: Oldest acceptable heartbeat, in seconds.
    type: int
    default: 60
  accept_catching_up:
    description:
      - With O(wait=true), a flow that misses only its lag limit at the O(timeout) but is replicating and catching up (records
        reach the target and the lag falls over the second half of the wait, every lagging partition moved) does not fail the
        module; RV(catch_up) has the estimate. A stuck flow fails either way, naming what does not move.
      - For a first deployment in front of a backlog that no wait window can clear.
    type: bool
    default: false
  timeout:
    description: Seconds to wait with O(wait=true).
    type: int
    default: 300
  poll_interval:
    description: Seconds between polls with O(wait=true).
    type: int
    default: 5
seealso:
  - module: kafkaops.mirror.kafka_topic
"""

EXAMPLES = r"""
- name: Wait until primary -> secondary has caught up
  kafkaops.mirror.kafka_mirror_status:
    bootstrap_servers: "{{ hostvars[groups['secondary_kafka'][0]].kafka_bootstrap_servers }}"
    source:
      bootstrap_servers: "{{ hostvars[groups['primary_kafka'][0]].kafka_bootstrap_servers }}"
    source_alias: primary
    target_alias: secondary
    wait: true
    max_lag: 100
    timeout: 600
  register: mirror

- name: Show the lag per topic-partition
  ansible.builtin.debug:
    msg: "{{ mirror.partitions | map(attribute='lag') | list }}"
"""

RETURN = r"""
flow:
  description: The flow, C(<source>-><target>).
  returned: always
  type: str
  sample: primary->secondary
healthy:
  description: Whether every condition of O(wait_for) holds.
  returned: always
  type: bool
unmet:
  description: Conditions of O(wait_for) that do not hold.
  returned: always
  type: list
  elements: str
partitions:
  description: One entry per replicated source topic-partition.
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
    partition:
      description: Partition number (the same on both sides).
      type: int
    source_end_offset:
      description: End offset of the source partition.
      type: int
    remote_topic_exists:
      description: Whether the remote topic exists on the target.
      type: bool
    target_end_offset:
      description: End offset of the remote partition, null when the remote topic does not exist (and with O(mirrormaker1_group)).
      type: int
    last_offset_sync:
      description: Newest offset sync, C(upstream) and C(downstream) offsets, or null.
      type: dict
    committed_offset:
      description: With O(mirrormaker1_group), the group's committed offset (null before its first commit); absent otherwise.
      type: int
    lag:
      description: Source records not yet on the target.
      type: int
    has_records:
      description: Whether the source partition holds records.
      type: bool
topics:
  description: The replicated source topics.
  returned: always
  type: list
  elements: str
lag_total:
  description: Sum of RV(partitions[].lag).
  returned: always
  type: int
lag_max:
  description: Largest RV(partitions[].lag).
  returned: always
  type: int
heartbeats:
  description:
    - C(emitted_age_s) is the age of the newest heartbeat of this flow in the target's C(heartbeats) topic.
    - C(replicated_age_s) is the age of the newest record of C(<source>.heartbeats) on the target, which proves records travel end to end.
  returned: always
  type: dict
  sample: {"emitted_age_s": 0.8, "replicated_age_s": 1.2}
checkpoints:
  description: Group name to the number of topic-partitions it has checkpoints for on the target.
  returned: always
  type: dict
  sample: {"orders-app": 3}
checkpoint_age_s:
  description:
    - Group name to the age in seconds of the newest checkpoint MirrorMaker 2 wrote for it (the checkpoint record's timestamp).
    - A group whose age grows while it commits offsets on the source is not being checkpointed any more.
  returned: for a MirrorMaker 2 flow
  type: dict
  version_added: 0.3.0
  sample: {"orders-app": 4.2}
offset_syncs_topic:
  description: Name of the offset-syncs topic that was read (on the cluster O(offset_syncs_topic_location) names).
  returned: always
  type: str
offset_syncs_topic_exists:
  description:
    - Whether the offset-syncs topic exists. MirrorMaker 2 creates it when its source connector starts; without it no
      offset sync is written, and the wait for offset syncs says so.
  returned: for a MirrorMaker 2 flow
  type: bool
group:
  description: With O(mirrormaker1_group), the group's C(id), C(state) and number of C(members) on the source.
  returned: with O(mirrormaker1_group)
  type: dict
  sample: {"id": "mirrormaker1", "state": "Stable", "members": 2}
problems:
  description: Records that could not be decoded and remote topics that are missing.
  returned: always
  type: list
  elements: str
stale_state:
  description:
    - Findings about stale MirrorMaker 2 state, each with C(severity) (V(error) where a translation or a failover would land on
      the wrong record, else V(warning)), C(check) (V(stale_offset_syncs) or V(stale_checkpoints)), C(cluster) (where the
      internal topic is), C(message) and C(fix).
    - Offset syncs whose target offset is at or beyond the end of the remote partition, or that show the remote topic recreated
      while MirrorMaker ran; checkpoints beyond the end (a warning before Kafka 3.4.1, whose translation runs ahead while the
      copy lags) or written before their remote topic was recreated; syncs and checkpoints of topics that no longer exist.
  returned: always
  type: list
  elements: dict
  sample:
    - severity: error
      check: stale_offset_syncs
      cluster: primary
      message: "mm2-offset-syncs.secondary.internal on primary holds offset syncs whose target offset is at or beyond the end ..."
      fix: "stop MirrorMaker 2, delete mm2-offset-syncs.secondary.internal on primary ..."
catch_up:
  description:
    - With O(wait=true), when the wait ended with conditions unmet, whether the flow is replicating and catching up or stuck,
      from the wait's reads (else null). C(verdict) is V(catching_up) or V(stuck); C(reason) says why (for V(stuck), what does
      not move); C(copied_per_s) (records reaching the target) and C(net_catch_up_per_s) (lag fall) over the second half of the
      wait; C(lag_total); C(eta_s) and C(eta), when the lag is gone at that rate (V(catching_up) only); C(stalled), lagging
      partitions that copied nothing during the whole wait.
  returned: always
  type: dict
  sample: {"verdict": "catching_up", "copied_per_s": 812.5, "net_catch_up_per_s": 790.0, "lag_total": 52000, "eta_s": 65.8,
           "eta": "66 s", "stalled": [], "reason": "replicating and catching up: ..."}
progress:
  description:
    - One entry per poll, with C(elapsed_s), C(lag_total), C(lag_max) and C(unmet).
    - A poll whose read failed with an error the Kafka client calls retriable (a leader moving or a broker restarting during a
      rolling restart, a request timing out) has C(read_error) instead, and null lag; the wait goes on. When no read answers
      before O(timeout), the module fails with the last such error.
  returned: always
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaConnectionError, ensure_kafka_python
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import MirrorStatusError, run_status, status_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.findings import finding_text


def main():
    module = AnsibleModule(argument_spec=status_argument_spec(), supports_check_mode=True)
    ensure_kafka_python(module)
    try:
        result = run_status(module.params, KafkaConnection)
    except (KafkaConnectionError, MirrorStatusError) as exc:
        module.fail_json(msg=str(exc), changed=False, **getattr(exc, "result", {}))
    for item in result["stale_state"]:
        module.warn(finding_text(item))
    if result.get("catch_up"):
        module.warn("flow %s is not within its lag limit yet, %s" % (result["flow"], result["catch_up"]["reason"]))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
