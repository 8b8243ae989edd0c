# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OffsetSyncStore: the offset syncs MirrorCheckpointTask reads, and how it translates a group's offset with them.

Written from OffsetSyncStore at 2.4.1, 3.3.0, 3.4.0, 3.4.1, 3.5.1, 3.5.2 and 3.9 (3.7.1 for CheckpointStore's effect on
start), independently of the collection's translation, which is what the stand-in checks.

- Before 3.4.1 only the latest sync of a partition is kept and g translates to d + (g - u); g < u gives -1
  ("too far in the past"). Before 3.3.0 a partition without any sync reads as the sync (-1, -1), so g
  translates to g itself; from 3.3.0 it gives no translation.
- From 3.4.1 up to 64 syncs per partition are kept, spaced about exponentially (invariants B and C of the
  class comment); a sync whose upstream offset is below the newest one clears the history (the upstream
  rewound, e.g. a task re-copied after a crash). The sync closest at or before g gives d when g == u, else
  d + 1. Nothing is translated before the first read to the end of the topic, and while reading to it every
  sync replaces the whole history unless the checkpoints topic was read first (3.7.1+, CheckpointStore).
"""
from __future__ import annotations

from sandbox.mm2.behaviour import HISTORY, LATEST, LATEST_OR_IDENTITY

SYNCS_PER_PARTITION = 64  # OffsetSyncStore.SYNCS_PER_PARTITION = Long.SIZE
TOO_FAR_BEHIND = -1  # translateDownstream's OptionalLong.of(-1L): no checkpoint is written for it


def _long(value):
    """Java long arithmetic (two's complement, 64 bits): 1L << 63 is negative, and the invariants rely on it."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


class _Sync:
    """One offset sync; compared by identity, as OffsetSyncStore compares its OffsetSync objects with ==."""

    __slots__ = ("upstream", "downstream")

    def __init__(self, upstream, downstream):
        self.upstream, self.downstream = upstream, downstream

    def __repr__(self):
        return "%d:%d" % (self.upstream, self.downstream)


def _invariant_b(i_sync, j_sync, i, j):
    bound = _long(_long(j_sync.upstream + _long(1 << j)) - _long(1 << i))
    return i_sync is j_sync or bound < 0 or i_sync.upstream <= bound


def _invariant_c(i_sync, j_sync, i):
    bound = _long(j_sync.upstream + (1 << max(i - 2, 0)))
    return i_sync is j_sync or (bound >= 0 and i_sync.upstream >= bound)


def _update_3_4_1(syncs, sync):
    """updateSyncArray as of 3.4.1 - 3.5.1: the most recently discarded sync may move one slot down."""
    replacement, old_value = sync, syncs[0]
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


def _update_3_5_2(syncs, original, sync):
    """updateSyncArray as of 3.5.2+ (in 3.6.0 too): any sync of the original array may be promoted, newest to oldest."""
    replacement, index = sync, 0
    syncs[0] = replacement
    for current in range(1, SYNCS_PER_PARTITION):
        previous = current - 1
        while True:
            old_value = original[index]
            is_recent = _invariant_b(syncs[previous], old_value, previous, current)
            separated_from_previous = _invariant_c(syncs[previous], old_value, previous)
            following = current + 1
            separated_from_next = following >= SYNCS_PER_PARTITION or _invariant_c(old_value, syncs[following], current)
            duplicate = index + 1 < SYNCS_PER_PARTITION and old_value is original[index + 1]
            promote = is_recent and separated_from_previous and separated_from_next
            if promote:
                replacement = old_value
            skip = duplicate or not separated_from_previous
            if promote or skip:
                index += 1
            if not (index < current and skip):
                break
        if _invariant_b(syncs[previous], syncs[current], previous, current):
            break
        syncs[current] = replacement


class OffsetSyncStore:
    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.syncs = {}  # (topic, partition) -> latest _Sync (before 3.4.1) or a list of SYNCS_PER_PARTITION _Sync
        self.read_to_end = False

    def add(self, topic, partition, upstream, downstream):
        """OffsetSyncStore.handleRecord for one record of the offset-syncs topic, in topic order."""
        key, sync = (topic, partition), _Sync(upstream, downstream)
        if self.behaviour.translation != HISTORY:
            self.syncs[key] = sync
            return
        existing = self.syncs.get(key)
        only_latest = not self.read_to_end and not self.behaviour.history_survives_restart
        if existing is None or only_latest or upstream < existing[0].upstream:
            self.syncs[key] = [sync] * SYNCS_PER_PARTITION
            return
        updated = list(existing)
        if self.behaviour.since(3, 5, 2):
            _update_3_5_2(updated, existing, sync)
        else:
            _update_3_4_1(updated, sync)
        self.syncs[key] = updated

    def finish_initial_read(self):
        """The first read to the end of the offset-syncs topic is done (OffsetSyncStore.start)."""
        self.read_to_end = True

    def history(self, topic, partition):
        """The distinct (upstream, downstream) syncs kept for a partition, newest first."""
        kept = self.syncs.get((topic, partition))
        if kept is None:
            return []
        kept = kept if isinstance(kept, list) else [kept]
        distinct = []
        for sync in kept:
            if not distinct or distinct[-1] is not sync:
                distinct.append(sync)
        return [(sync.upstream, sync.downstream) for sync in distinct]

    def translate(self, topic, partition, upstream_offset):
        """translateDownstream: the downstream offset, TOO_FAR_BEHIND, or None (no translation at all)."""
        key = (topic, partition)
        mode = self.behaviour.translation
        if mode in (LATEST, LATEST_OR_IDENTITY):
            sync = self.syncs.get(key)
            if sync is None:
                if mode == LATEST:
                    return None
                sync = _Sync(-1, -1)  # latestOffsetSync's computeIfAbsent(new OffsetSync(tp, -1, -1))
            if sync.upstream > upstream_offset:
                return TOO_FAR_BEHIND
            return sync.downstream + (upstream_offset - sync.upstream)
        if not self.read_to_end or key not in self.syncs:
            return None
        syncs = self.syncs[key]
        sync = next((s for s in syncs if s.upstream <= upstream_offset), syncs[-1])
        if sync.upstream > upstream_offset:
            return TOO_FAR_BEHIND
        return sync.downstream + (0 if upstream_offset == sync.upstream else 1)
