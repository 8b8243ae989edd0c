# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one rule for records read from MirrorMaker 2's internal topics (checkpoints, offset-syncs, heartbeats).

MirrorMaker 2 never writes a tombstone (null value) there, and its own readers (OffsetSyncStore.handleRecord,
MirrorClient.remoteConsumerOffsets, CheckpointStore) deserialize every record. A tombstone can only come from someone
cleaning the compacted topic by hand: it carries no offset, so it is skipped, not reported. Any other record that does not
decode is reported with its topic, partition and offset, and skipped.

The reader of those topics, which applies this rule, is _kafka/internal_topic_reader.py (it needs kafka-python; this
package is standard library only).
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import MirrorRecordError


def decode_records(records, codec, topic):
    """([decoded record], [problem message]) for consumer records of `topic`, in order; codec: Checkpoint, OffsetSync or Heartbeat."""
    decoded, problems = [], []
    for record in records:
        if record.value is None:
            continue
        try:
            decoded.append(codec.decode(record.key, record.value))
        except MirrorRecordError as exc:
            problems.append("%s[%d]@%d: %s" % (topic, record.partition, record.offset, exc))
    return decoded, problems
