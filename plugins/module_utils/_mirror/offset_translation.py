# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How MirrorMaker 2 translates a consumer group's source offset to the target, release by release (pure, no I/O).

Rules, each read in Apache Kafka's connect/mirror sources at the tag named:
- 2.4.1 to 3.4.0, OffsetSyncStore.translateDownstream: only the latest offset sync (u, d) of the partition is kept;
  g >= u translates to d + (g - u), g < u to nothing ("too far in the past"). MirrorSourceTask.PartitionState.update
  emits a sync on the first record, an upstream gap, a downstream truncation or a drift >= offset.lag.max, so d + (g - u)
  is at or before the exact position.
- 3.4.1 on (KAFKA-14666, KAFKA-13659): a bounded history of up to 64 syncs per partition with exponentially growing
  spacing, cleared whenever a sync's upstream offset is below the latest one (MirrorMaker re-copies after a crash and
  the old syncs no longer describe the target); g translates with the latest kept sync at or before it to d (g == u) or
  d + 1 (g > u). 3.5.2 (KAFKA-15202) changed which older syncs the history keeps; both variants are reproduced.
- Checkpoints (MirrorCheckpointConnector.findConsumerGroups, MirrorCheckpointTask.checkpointsForGroup): before 2.8
  simple groups (assign + commit, no group protocol) never get one; before 2.7 a translation to offset 0 gets none.

The history here replays the whole offset-syncs topic as a store that was running throughout (MirrorMaker clears it
while re-reading the topic at each start, so it keeps at most what is kept here): every sync it keeps was written after
the last rewind, so a translation from it never lands past the exact position.
"""
from __future__ import annotations

from collections import namedtuple

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import KafkaVersion

# First releases of each behaviour.
BOUNDED_HISTORY_SINCE = KafkaVersion(3, 4, 1)  # KAFKA-14666: OffsetSyncStore keeps syncs behind the latest one
SPACED_HISTORY_SINCE = KafkaVersion(3, 5, 2)  # KAFKA-15202: variably spaced syncs
SIMPLE_GROUP_CHECKPOINTS_SINCE = KafkaVersion(2, 8, 0)  # PR 9545: checkpoints for groups with static assignment
ZERO_OFFSET_CHECKPOINTS_SINCE = KafkaVersion(2, 7, 0)  # checkpointsForGroup: downstreamOffset() > 0 became >= 0
SYNCS_PER_PARTITION = 64  # OffsetSyncStore.SYNCS_PER_PARTITION (Long.SIZE)
_LONG = 1 << 64

Translation = namedtuple("Translation", "offset basis reason")


def parse_version(text):
    """KafkaVersion of `text`, or None when empty (the release that runs MirrorMaker is unknown)."""
    return KafkaVersion.parse(text) if text not in (None, "") else None


def _java_long(value):
    """`value` wrapped to a signed 64-bit integer, as Java's long arithmetic does."""
    value %= _LONG
    return value - _LONG if value >= 1 << 63 else value


class _Sync:
    """One offset-sync record; identity matters (OffsetSyncStore compares syncs with ==, i.e. by reference)."""

    __slots__ = ("upstream", "downstream")

    def __init__(self, upstream, downstream):
        self.upstream = upstream
        self.downstream = downstream


def _invariant_b(i_sync, j_sync, i, j):
    bound = _java_long(_java_long(j_sync.upstream + _java_long(1 << j)) - _java_long(1 << i))
    return i_sync is j_sync or bound < 0 or i_sync.upstream <= bound


def _invariant_c(i_sync, j_sync, i):
    bound = j_sync.upstream + (1 << max(i - 2, 0))
    return i_sync is j_sync or (bound >= 0 and i_sync.upstream >= bound)


def _update_chained(syncs, sync):
    """OffsetSyncStore.updateSyncArray of 3.4.1 to 3.5.1 (after the rewind check)."""
    replacement = sync
    old_value = syncs[0]
    syncs[0] = replacement
    for current in range(1, SYNCS_PER_PARTITION):
        previous = current - 1
        is_recent = _invariant_b(syncs[previous], old_value, previous, current)
        separated_from_previous = _invariant_c(syncs[previous], old_value, previous)
        following = current + 1
        separated_from_next = following >= SYNCS_PER_PARTITION or _invariant_c(old_value, syncs[following], current)
        if is_recent and separated_from_previous and separated_from_next:
            replacement = old_value
        if _invariant_b(syncs[previous], syncs[current], previous, current):
            break
        old_value = syncs[current]
        syncs[current] = replacement


def _update_spaced(syncs, original, sync):
    """OffsetSyncStore.updateSyncArray of 3.5.2 on (after the rewind check); `original` is the array before the update."""
    replacement = sync
    replacement_index = 0
    syncs[0] = replacement
    for current in range(1, SYNCS_PER_PARTITION):
        previous = current - 1
        while True:
            old_value = original[replacement_index]
            is_recent = _invariant_b(syncs[previous], old_value, previous, current)
            separated_from_previous = _invariant_c(syncs[previous], old_value, previous)
            following = current + 1
            separated_from_next = following >= SYNCS_PER_PARTITION or _invariant_c(old_value, syncs[following], current)
            next_replacement = replacement_index + 1
            duplicate = next_replacement < SYNCS_PER_PARTITION and old_value is original[next_replacement]
            promote = is_recent and separated_from_previous and separated_from_next
            if promote:
                replacement = old_value
            skip_old_value = duplicate or not separated_from_previous
            if promote or skip_old_value:
                replacement_index += 1
            if not (replacement_index < current and skip_old_value):
                break
        if _invariant_b(syncs[previous], syncs[current], previous, current):
            break
        syncs[current] = replacement


class SyncHistory:
    """What MirrorMaker of `version` keeps of one partition's offset syncs, fed in topic order; translate() as it does.

    version None (unknown release) keeps the 3.4.1+ history: its d / d + 1 rule never lands past the exact position
    whichever release wrote the syncs.
    """

    def __init__(self, version=None):
        self.version = version
        self.bounded = version is None or version >= BOUNDED_HISTORY_SINCE
        self._syncs = None

    @classmethod
    def of(cls, version, pairs):
        history = cls(version)
        for upstream, downstream in pairs:
            history.add(upstream, downstream)
        return history

    def add(self, upstream, downstream):
        """OffsetSyncStore.handleRecord for one sync of this partition."""
        sync = _Sync(upstream, downstream)
        if not self.bounded or self._syncs is None or upstream < self._syncs[0].upstream:
            self._syncs = [sync] * SYNCS_PER_PARTITION
            return
        original = list(self._syncs)
        if self.version is None or self.version >= SPACED_HISTORY_SINCE:
            _update_spaced(self._syncs, original, sync)
        else:
            _update_chained(self._syncs, sync)

    def kept(self):
        """The distinct (upstream, downstream) syncs kept, latest first."""
        kept, seen = [], set()
        for sync in self._syncs or []:
            if id(sync) not in seen:
                seen.add(id(sync))
                kept.append((sync.upstream, sync.downstream))
        return kept

    def translate(self, upstream_offset):
        """(target offset or None, the sync used or None, reason)."""
        if self._syncs is None:
            return None, None, "no offset sync for this partition"
        if not self.bounded:
            latest = self._syncs[0]
            if latest.upstream > upstream_offset:
                return None, (latest.upstream, latest.downstream), (
                    f"the latest offset sync ({latest.upstream} -> {latest.downstream}) is after source offset {upstream_offset}, "
                    f"and MirrorMaker {self.version} keeps only the latest one")
            return (latest.downstream + upstream_offset - latest.upstream, (latest.upstream, latest.downstream),
                    f"latest offset sync {latest.upstream} -> {latest.downstream} plus {upstream_offset - latest.upstream} "
                    f"(MirrorMaker {self.version}: d + (g - u))")
        chosen = next((sync for sync in self._syncs if sync.upstream <= upstream_offset), None)
        if chosen is None:
            earliest = self._syncs[-1]
            return None, (earliest.upstream, earliest.downstream), (
                f"the earliest offset sync kept since the last rewind ({earliest.upstream} -> {earliest.downstream}) is after "
                f"source offset {upstream_offset}")
        step = 0 if upstream_offset == chosen.upstream else 1
        rule = f"MirrorMaker {self.version}" if self.version is not None else "release unknown, the rule of 3.4.1+ which never skips"
        return (chosen.downstream + step, (chosen.upstream, chosen.downstream),
                f"offset sync {chosen.upstream} -> {chosen.downstream}" + (" (exact)" if step == 0 else " plus 1") + f" ({rule})")


def checkpoint_gap_reason(version, simple_group, source_offset):
    """Why MirrorMaker wrote no checkpoint for a group partition, and what to do; for the release that runs it."""
    if version is not None and simple_group and version < SIMPLE_GROUP_CHECKPOINTS_SINCE:
        return (f"MirrorMaker {version} never checkpoints simple groups (assign + commit, no group protocol; "
                f"MirrorCheckpointConnector.findConsumerGroups before 2.8): translate with offset syncs (offset_syncs=true) "
                f"or set the offset by hand")
    if version is not None and version < ZERO_OFFSET_CHECKPOINTS_SINCE and source_offset is not None and source_offset <= 1:
        return (f"MirrorMaker {version} writes no checkpoint that translates to offset 0 "
                f"(MirrorCheckpointTask.checkpointsForGroup before 2.7); the group has consumed at most one record")
    return ("MirrorMaker writes a group's checkpoints only after it found the group (refresh.groups.interval.seconds) "
            "and translated its offset (emit.checkpoints.interval.seconds) with an offset sync at or before it")


def translate(source_offset, checkpoint, history, version=None, simple_group=False):
    """Translation(offset, basis, reason) of one group partition; offset None when there is no safe translation.

    source_offset: the group's committed offset on the source (None when unknown: the checkpoint is used as it is).
    checkpoint: the latest Checkpoint of the group partition, or None.
    history: SyncHistory of the source partition, or None when offset syncs were not read.
    Order: a checkpoint for exactly this offset (MirrorMaker translated it itself) or the offset syncs, whichever is further
    (a checkpoint written while the copy was still behind the group holds an early sync's d + 1; both are at or before the
    exact position), then an older checkpoint (re-reads, never skips). A checkpoint ahead of the offset, or nothing, gives no
    translation: never guessed.
    """
    if source_offset is None:
        if checkpoint is None:
            return Translation(None, None, "no checkpoint for this group partition and the source group offset is unknown")
        return Translation(checkpoint.downstream_offset, "checkpoint",
                           f"checkpoint: source offset {checkpoint.upstream_offset} -> target offset {checkpoint.downstream_offset}")
    exact = checkpoint if checkpoint is not None and checkpoint.upstream_offset == source_offset else None
    offset, sync_reason = None, None
    if history is not None:
        offset, _sync, sync_reason = history.translate(source_offset)
    if exact is not None and (offset is None or exact.downstream_offset >= offset):
        return Translation(exact.downstream_offset, "checkpoint",
                           f"checkpoint for source offset {source_offset} -> target offset {exact.downstream_offset}")
    if offset is not None:
        further = f"; further than the checkpoint's target offset {exact.downstream_offset}" if exact is not None else ""
        return Translation(offset, "offset_sync", sync_reason + further)
    if checkpoint is not None:
        upstream = checkpoint.upstream_offset
        if upstream < source_offset:
            return Translation(checkpoint.downstream_offset, "checkpoint_behind",
                               f"latest checkpoint is for source offset {upstream}, the group is now at {source_offset}: "
                               f"the records after it are read again (a later checkpoint, or offset_syncs=true, gives fewer)")
        return Translation(None, None,
                           f"the latest checkpoint is for source offset {upstream}, after the group's offset {source_offset} "
                           f"(the group was rewound on the source): using it would skip records; read offset syncs or wait for a new checkpoint")
    gap = checkpoint_gap_reason(version, simple_group, source_offset)
    if history is None:
        return Translation(None, None, f"no checkpoint for this group partition (source offset {source_offset}): {gap}")
    return Translation(None, None, f"no checkpoint, and no offset sync translates source offset {source_offset} ({sync_reason}): {gap}")
