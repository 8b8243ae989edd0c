# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offset translations worked out by hand from Apache Kafka's MirrorMaker 2 sources, one case per rule.

Each case is what MirrorCheckpointTask of `release` would checkpoint for a group committed at `group_offset` on the
source, given the offset syncs it read (`at_start` before its first read to the end, `live` after it) and, when
set, the checkpoint it wrote. `expected` None means no checkpoint (no translation). `product` says whether the
collection's own translation (kafka_mirror_offsets, failover) must give the same answer: False where the real
behaviour is a MirrorMaker 2 bug or an artefact of when MM2 started that a failover tool must not copy.
"""
from __future__ import annotations

from dataclasses import dataclass, field

RECOPY_SYNCS = [(u, u) for u in range(0, 1000, 101)] + [(500, 1000), (601, 1101), (702, 1202)]


@dataclass(frozen=True)
class Golden:
    name: str
    release: tuple
    group_offset: int
    expected: int | None
    rule: str
    live: list = field(default_factory=list)
    at_start: list = field(default_factory=list)
    checkpoint: tuple | None = None  # (upstream, downstream) of the checkpoint MM2 wrote for this group partition
    product: bool = True

    @property
    def all_syncs(self):
        return list(self.at_start) + list(self.live)


CASES = [
    Golden("2.4.1 steady copy has one sync: d + (g - u)", (2, 4, 1), 93, 93,
           "OffsetSyncStore.translateDownstream (2.4.1): latest sync (0, 0) -> 0 + (93 - 0); MirrorSourceTask.PartitionState "
           "(2.4.1 - 3.4.0) emitted no other sync because downstream never drifted from lastSync + upstream step",
           live=[(0, 0)]),
    Golden("2.4.1 exact checkpoint beats the lone first sync", (2, 4, 1), 93, 93,
           "MirrorCheckpointTask (2.4.1) wrote checkpoint 93 -> 93 from the sync (0, 0) by d + (g - u); "
           "re-translating it to 0 + 1 would re-read 92 records",
           live=[(0, 0)], checkpoint=(93, 93)),
    Golden("3.4.0 latest sync after a re-copy", (3, 4, 0), 700, 1200,
           "OffsetSyncStore.translateDownstream (3.3.0 - 3.4.0): latest sync (500, 1000), written when the restarted task "
           "re-copied from 500 -> 1000 + (700 - 500)",
           live=[(0, 0), (500, 1000)]),
    Golden("3.4.1+ history restarts at an upstream rewind", (3, 9, 0), 700, 1102,
           "OffsetSyncStore.updateSyncArray (3.4.1+): sync (500, 1000) is below syncs[0] = (909, 909), so clearSyncArray; "
           "then (601, 1101) and (702, 1202) are added; lookupLatestSync(700) = (601, 1101) -> 1101 + 1. The pre-crash "
           "sync (606, 606) is gone",
           live=RECOPY_SYNCS),
    Golden("3.4.1+ group on a sync", (3, 9, 0), 101, 101,
           "OffsetSyncStore.translateDownstream (3.4.1+): upstreamStep 0 when g == u -> d",
           live=[(0, 0), (101, 101)]),
    Golden("3.4.1+ group past a sync", (3, 9, 0), 150, 102,
           "OffsetSyncStore.translateDownstream (3.4.1+): g > u -> d + 1 (never more: unknown how many records between)",
           live=[(0, 0), (101, 101)]),
    Golden("3.4.1+ group before every sync", (3, 9, 0), 100, None,
           "translateDownstream: offsetSync.upstreamOffset() > upstreamOffset -> -1, dropped by checkpointsForGroup",
           live=[(500, 500)]),
    Golden("2.4.1 group before the latest sync", (2, 4, 1), 10, None,
           "translateDownstream (2.4.1): latest sync (50, 50) is after 10 -> -1, dropped by `downstreamOffset() > 0`",
           live=[(50, 50)]),
    Golden("3.3+ partition without syncs", (3, 4, 0), 50, None,
           "OffsetSyncStore.translateDownstream (3.3.0+): Optional.empty() without a sync -> no checkpoint", live=[]),
    Golden("3.7.1+ history read at start", (3, 9, 0), 150, 102,
           "MirrorCheckpointTask (3.7.1+): CheckpointStore read OK -> OffsetSyncStore.start(false), the whole history is "
           "built while reading -> (101, 101) -> 102",
           at_start=[(0, 0), (101, 101), (202, 202)]),
    Golden("2.7+ group at 0 on sync (0, 0)", (2, 7, 0), 0, 0,
           "MirrorCheckpointTask.checkpointsForGroup (2.7+): `downstreamOffset() >= 0` keeps 0", live=[(0, 0)]),
    # MirrorMaker 2 behaviour that a failover tool must not copy:
    Golden("2.4.1 partition without syncs reads as (-1, -1)", (2, 4, 1), 50, 50,
           "OffsetSyncStore.latestOffsetSync (< 3.3.0): computeIfAbsent(new OffsetSync(tp, -1, -1)) -> -1 + (50 + 1); "
           "a bug fixed in 3.3.0 (checkpoints with no sync behind them)", live=[], product=False),
    Golden("2.4.1 - 2.6 never checkpoint downstream 0", (2, 4, 1), 0, None,
           "MirrorCheckpointTask.checkpointsForGroup (< 2.7.0): `downstreamOffset() > 0`", live=[(0, 0)], product=False),
    Golden("3.4.1 - 3.7.0 keep only the newest sync read at start", (3, 4, 1), 150, None,
           "OffsetSyncStore.updateSyncArray (3.4.1 - 3.7.0): `!readToEnd` -> clearSyncArray for every sync read at start, "
           "only (202, 202) is left, after 150 -> -1", at_start=[(0, 0), (101, 101), (202, 202)], product=False),
]
