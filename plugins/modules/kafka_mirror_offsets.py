#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_mirror_offsets
short_description: Translate consumer-group offsets of a MirrorMaker 2 flow and commit them on the target cluster
version_added: 0.1.0
description:
  - Reads the checkpoints MirrorMaker 2 writes to C(<source_alias>.checkpoints.internal) on the target cluster (the cluster
    of O(bootstrap_servers)) and, with O(offset_syncs=true), the offset-syncs of the flow, and reports for every consumer
    group partition the committed offset on the source, the translated offset on the target, the target end offset and
    whether the group has active members on the target.
  - With O(apply=true), commits the translated offsets to target groups that have no active members; groups with members
    are refused and reported, never touched. A group's offset is never moved backwards unless O(allow_rewind=true).
  - Translation follows MirrorMaker 2 of the release in O(mirrormaker_version) (OffsetSyncStore.translateDownstream, with the
    latest offset sync only up to 3.4.0 and a history of syncs cleared at each re-copy from 3.4.1); a checkpoint for exactly
    the group's offset and the offset syncs are both at or before the exact position, and the further one is taken. When
    neither a checkpoint nor an offset sync covers a group's offset, the partition is reported with
    RV(offsets[].action=no_translation), with the reason for that release, and nothing is guessed.
  - With O(verify=true) (the failover preview, in check mode too), the records themselves say, per group partition, how
    many records the group reads again on the target (RV(offsets[].re_read)) and how many it would skip
    (RV(offsets[].skipped)). A group with a partition that would skip records is not committed and the module fails
    naming the partition.
  - With O(verify=true) and O(position=exact), MirrorMaker's translation is the floor, and the offset committed is the target
    copy of the group's next source record (RV(offsets[].exact_offset)) wherever the records prove it, so the group reads
    nothing again that it consumed on the source (only re-copies MirrorMaker wrote after it); where they prove nothing, the
    translated offset is committed and the preview says how many records are read again.
  - With O(mirrormaker1_group), the flow is MirrorMaker 1's (C(kafka.tools.MirrorMaker)), which keeps topic names but not
    partitions and writes no checkpoints or offset syncs. There is no translation, so the floor is the start of each target
    partition; the module reads each topic the groups committed offsets for, whole, on both clusters, and for each target
    partition commits the first target record that is not the copy of one the group consumed on the source (the copy of its
    next unconsumed record, or a record no source record matches, where nothing past it is proven), so it never skips a
    record the group has not consumed; RV(offsets[].re_read) counts the consumed records read again from there. The same
    preview, refusals and check mode as for MirrorMaker 2; O(verify) is implied.
  - This is the failover step for Kafka 2.4 to 2.6 clusters, where MirrorMaker 2 cannot sync group offsets itself
    (C(sync.group.offsets.enabled), KIP-545, came with 2.7); it works the same on later versions.
options:
  source_alias:
    description: Alias of the source cluster in the MirrorMaker 2 configuration (the prefix of remote topics).
    type: str
    required: true
  target_alias:
    description: Alias of the target cluster; names the offset-syncs topic C(mm2-offset-syncs.<target_alias>.internal).
    type: str
  groups:
    description: Regular expressions (full match) selecting the consumer groups.
    type: list
    elements: str
    default: ['.*']
  groups_exclude:
    description:
      - Regular expressions (full match) of groups left out; unset means MirrorMaker 2's default C(groups.exclude)
        (C(console-consumer-.*), C(connect-.*), C(__.*)).
    type: list
    elements: str
  source:
    description:
      - Connection to the source cluster, with the same keys as the top-level connection options.
      - When given, the groups' current committed offsets on the source are read and translated (instead of the offset in the
        latest checkpoint), source groups without any checkpoint are reported, and O(verify) can compare records.
      - Required for O(offset_syncs_topic_location=source) and O(verify=true).
    type: dict
  mirrormaker1_group:
    description:
      - The group.id of a MirrorMaker 1 flow's consumer (the mirrormaker2 role's C(mirrormaker2_mm1_group_id)); makes this a
        MirrorMaker 1 failover (see the description), and that group itself is never moved.
      - Needs O(source); O(offset_syncs) must be V(false). O(position=translated) commits the start of each target partition.
    type: str
  offset_syncs:
    description: Also read the offset-syncs topic and translate the source offsets with it (more current than checkpoints).
    type: bool
    default: false
  offset_syncs_topic_location:
    description:
      - Cluster holding the offset-syncs topic (MirrorMaker 2 C(offset-syncs.topic.location), V(source) by default), the same
        option as in M(kafkaops.mirror.kafka_mirror_status).
      - The alias C(offset_syncs_location) is deprecated and will be removed in kafkaops.mirror 2.0.0.
    type: str
    choices: [source, target]
    default: source
    aliases: [offset_syncs_location]
  mirrormaker_version:
    description:
      - Kafka release that runs MirrorMaker 2 (for example V(2.4.1) or V(3.9.0)); the translation and the reasons follow
        its rules. The failover role passes the release the mirrormaker2 role detects.
      - Unset, offset syncs are translated with the rule of 3.4.1 and later (the latest sync at or before the offset, plus
        one), which never lands past the exact position whichever release wrote them.
    type: str
  replication_policy:
    description: MirrorMaker 2 replication policy of the flow; decides the target topic names.
    type: str
    choices: [default, identity]
    default: default
  replication_policy_separator:
    description: Separator of the default replication policy.
    type: str
    default: .
  apply:
    description: Commit the translated offsets to target groups without active members. V(false) only reports.
    type: bool
    default: false
  allow_rewind:
    description: Allow moving a target group's committed offset backwards to the translated offset.
    type: bool
    default: false
  verify:
    description:
      - The failover preview. Before committing (and in check mode), align the target records from each group's translated
        position with the source records around the group's source offset, by fingerprint (key, value and headers), and
        report how many records the group would read again and how many it would skip (RV(offsets[].preview)). Records are
        counted, not offsets, so transaction markers and compacted gaps do not count. Needs O(source).
      - A group with a partition that would skip records is not committed, and the module fails naming the partition.
    type: bool
    default: false
  verify_window:
    description:
      - Source records read before the group's offset (and twice as many after it), and target records read from the position
        on (twice this many), at first; MirrorMaker C(offset.lag.max) or more. Figures are exact when the target read reaches
        the end of the partition (C(complete) in RV(offsets[].preview)).
      - Where these records settle nothing (the group's next record is further from the translated position, after a burst
        or a re-copy), the window grows fourfold at a time up to O(verify_window_max).
    type: int
    default: 200
  verify_window_max:
    description:
      - The largest window the preview grows to (records, as O(verify_window)); the reads of one partition grow with it.
        At or below O(verify_window), the window does not grow.
    type: int
    default: 51200
  position:
    description:
      - What O(apply=true) commits with O(verify=true). V(exact) - the proven exact position where the records prove it, else
        the translated offset. V(translated) - MirrorMaker's translated offset, always.
      - Without O(verify), the translated offset.
    type: str
    choices: [exact, translated]
    default: exact
  read_timeout:
    description: Seconds allowed for reading each internal topic to its end.
    type: int
    default: 60
  commit_metadata:
    description: Metadata string stored with each committed offset.
    type: str
    default: kafkaops.mirror failover
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.kafka_connection
  - kafkaops.mirror.kafka_connection.source_cluster
attributes:
  check_mode:
    support: full
    details: Reads everything and returns the plan (RV(offsets[].action)) and, with O(verify=true), the preview, without committing.
  diff_mode:
    support: full
    details: Shows each group's committed target offsets before and after.
  idempotent:
    support: full
    details: Once committed, a second run finds the groups at the committed offsets (RV(offsets[].action=up_to_date)).
notes:
  - The broker itself also refuses a commit to a group that has members; the module checks membership first to report it clearly.
  - A translated offset can be C(offset.lag.max) records or more before the exact position (MirrorMaker keeps only the latest
    pending offset sync of a partition while 10 are in flight, so a burst leaves few); consumers re-read, never skip, and
    O(verify=true) counts how many, and with O(position=exact) commits the exact position instead.
  - MirrorMaker before 2.8 never writes checkpoints for simple groups (assign and commit, no group protocol), and before 2.7
    none that translates to offset 0; translate those with O(offset_syncs=true).
seealso:
  - module: kafkaops.mirror.kafka_mirror_status
  - module: kafkaops.mirror.kafka_consumer_group_info
author: kafkaops.mirror developers (@kafkaops)
"""

EXAMPLES = r"""
- name: Show what failover would commit for the orders groups
  kafkaops.mirror.kafka_mirror_offsets:
    bootstrap_servers: [wn0-second:9092]
    source_alias: primary
    groups: ['orders-.*']
  register: plan

- name: Fail over the groups of a MirrorMaker 1 flow (topic names kept, partitions not)
  kafkaops.mirror.kafka_mirror_offsets:
    bootstrap_servers: [wn0-second:9092]
    source_alias: primary
    source:
      bootstrap_servers: [wn0-primar:9092]
    mirrormaker1_group: kafkaops-mirrormaker1
    apply: true

- name: Translate with the source's current offsets and offset-syncs, commit, and verify by fingerprint
  kafkaops.mirror.kafka_mirror_offsets:
    bootstrap_servers: [wn0-second:9092]
    source_alias: primary
    target_alias: secondary
    source:
      bootstrap_servers: [wn0-primar:9092]
    offset_syncs: true
    mirrormaker_version: 2.4.1
    apply: true
    verify: true
"""

RETURN = r"""
offsets:
  description: One entry per group, target topic and partition.
  returned: always
  type: list
  elements: dict
  contains:
    group:
      description: Consumer group.
      type: str
      returned: always
    topic:
      description: Topic name on the target (remote name under the replication policy).
      type: str
      returned: always
    source_topic:
      description: Topic name on the source.
      type: str
      returned: always
    partition:
      description: Partition.
      type: int
      returned: always
    source_offset:
      description: The group's committed offset on the source (null without O(source), and with O(mirrormaker1_group)).
      type: int
      returned: always
    source_offsets:
      description: With O(mirrormaker1_group), the group's committed offsets of the topic on the source, by source partition.
      type: dict
      returned: with O(mirrormaker1_group)
    partitioning:
      description:
        - With O(mirrormaker1_group), V(kept) when the records prove that MirrorMaker 1 left every record in its partition
          number (same partition count, each target record the copy of one in the source partition of that number), else V(by_key).
      type: str
      returned: with O(mirrormaker1_group), when the topic is on the target
    checkpoint_upstream_offset:
      description: Source offset of the latest checkpoint (null when none).
      type: int
      returned: always
    checkpoint_downstream_offset:
      description: Target offset of the latest checkpoint (null when none).
      type: int
      returned: always
    translated_offset:
      description: MirrorMaker's translation of the source offset on the target, the floor (null when there is no translation).
      type: int
      returned: always
    exact_offset:
      description:
        - With O(verify=true) and O(position=exact), the target offset of the copy of the group's next source record, where the
          records prove that no record the group has not consumed lies before it (else null).
      type: int
      returned: always
    commit_offset:
      description: The offset a commit sets, RV(offsets[].exact_offset) where proven, else RV(offsets[].translated_offset).
      type: int
      returned: always
    basis:
      description: >-
        What the translation came from, V(offset_sync), V(checkpoint) or V(checkpoint_behind); V(partition_start) for a
        MirrorMaker 1 flow.
      type: str
      returned: always
    target_committed_offset:
      description: The group's committed offset on the target before this run.
      type: int
      returned: always
    target_end_offset:
      description: End offset of the target partition (null when the topic is missing).
      type: int
      returned: always
    active:
      description: Whether the group has active members on the target.
      type: bool
      returned: always
    action:
      description: V(commit), V(up_to_date), V(refused_active), V(would_rewind), V(target_behind), V(would_skip) or V(no_translation).
      type: str
      returned: always
    reason:
      description: Why this action.
      type: str
      returned: always
    translation:
      description: How the translated offset was obtained (release rule, sync or checkpoint used), or why there is none.
      type: str
      returned: always
    preview:
      description:
        - With O(verify=true), what the group meets at the translated position - C(status) (V(exact), V(re_read), V(skip),
          V(at_end), V(not_mirrored), V(unverified)), C(re_read) and C(skipped) record counts, C(missing) (source records after
          the last one on the target, not copied yet; the partition is then V(target_behind)), C(complete) (the target read
          reached the end of the partition and no later re-copy goes below the offset) and C(detail).
        - C(exact_offset) and C(re_read_at_exact), the exact position the records prove and what it reads again (null when
          none is proven, whatever O(position)); C(window), the window the preview was read with.
      type: dict
      returned: when previewed
    re_read:
      description: With O(verify=true), records the group would read again on the target from RV(offsets[].commit_offset) (null when not counted).
      type: int
      returned: when previewed
    skipped:
      description: With O(verify=true), source records the group would never read on the target (must be 0; null when not counted).
      type: int
      returned: when previewed
groups:
  description: Per group, its state on the target and overall status (V(commit), V(up_to_date), V(refused_active), V(incomplete)).
  returned: always
  type: list
  elements: dict
committed:
  description: Groups and partitions committed (or that would be, in check mode), as C(group) to C(topic:partition) to offset.
  returned: always
  type: dict
refused:
  description: Groups with active members on the target that were not touched.
  returned: always
  type: list
  elements: str
would_skip:
  description: >-
    Group partitions whose translated position would skip records, as C(group topic:partition) followed by the detail;
    their groups are not committed.
  returned: always
  type: list
  elements: str
preview_totals:
  description:
    - C(partitions) previewed with figures; C(re_read), records read again in total from the offsets committed (or that would
      be); C(re_read_translated), from MirrorMaker's translated offsets; C(exact), partitions whose exact position is proven
      and committed; C(skipped) in total; C(unverified), partitions not verifiable.
  returned: always
  type: dict
  sample: {"partitions": 6, "re_read": 0, "re_read_translated": 1086, "exact": 6, "skipped": 0, "unverified": 0}
mirrormaker_version:
  description: The release whose rules were applied (null when unknown).
  returned: always
  type: str
untranslated:
  description: Entries of RV(offsets) with no translation, C("group topic:partition").
  returned: always
  type: list
  elements: str
checkpoints_found:
  description: Whether the checkpoints topic exists on the target.
  returned: always
  type: bool
offset_syncs_found:
  description: Whether the offset-syncs topic exists (null when O(offset_syncs=false)).
  returned: always
  type: bool
undecodable:
  description: Internal-topic records that did not decode (skipped).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnectionError, KafkaError, ensure_kafka_python
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import connection_option_errors
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.flow_arguments import flow_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets import run_offsets
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offsets_plan import OffsetsError, option_problems
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import OFFSET_SYNCS_LOCATIONS


def main():
    spec = flow_argument_spec(require_source=False, require_target=False, filters=("groups",))
    spec.update(
        mirrormaker1_group=dict(type="str"),
        offset_syncs=dict(type="bool", default=False),
        offset_syncs_topic_location=dict(type="str", choices=list(OFFSET_SYNCS_LOCATIONS), default="source", aliases=["offset_syncs_location"],
                                         deprecated_aliases=[dict(name="offset_syncs_location", version="2.0.0",
                                                                  collection_name="kafkaops.mirror")]),
        apply=dict(type="bool", default=False),
        allow_rewind=dict(type="bool", default=False),
        verify=dict(type="bool", default=False),
        verify_window=dict(type="int", default=200),
        verify_window_max=dict(type="int", default=51200),
        position=dict(type="str", choices=["exact", "translated"], default="exact"),
        read_timeout=dict(type="int", default=60),
        commit_metadata=dict(type="str", default="kafkaops.mirror failover"),
    )
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    problems = option_problems(module.params)
    if module.params["source"] is not None:
        problems += [f"option source: {message}" for message in connection_option_errors(module.params["source"])]
    if problems:
        module.fail_json(msg="kafka_mirror_offsets: invalid options, nothing was read or changed: " + "; ".join(problems) + ".")
    ensure_kafka_python(module)
    try:
        result = run_offsets(module.params, check_mode=module.check_mode, diff=module._diff)
    except (KafkaConnectionError, OffsetsError) as exc:
        module.fail_json(msg=str(exc))
    except KafkaError as exc:
        module.fail_json(msg=f"kafka_mirror_offsets: Kafka request failed ({type(exc).__name__}: {exc}); nothing more was committed. "
                             f"Check the connection options and that the clusters are healthy, then run again.")
    if result["would_skip"]:
        module.fail_json(msg="kafka_mirror_offsets: at the translated offsets these group partitions would skip records, so their "
                             "groups were not committed: " + "; ".join(result["would_skip"]) + ". Check the offset syncs and "
                             "checkpoints (a stale mm2-offset-syncs topic from an earlier deployment does this) and set these "
                             "offsets by hand.", **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
