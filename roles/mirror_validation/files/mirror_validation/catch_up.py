# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait until the target has caught up with the source snapshot before comparing."""
from __future__ import annotations

import time

from .errors import ValidationUnavailable


def partitions_behind(pairs, target_offsets, latest_syncs):
    """(pair, partition) whose target end has not reached the snapshot according to MM2's offset syncs.

    A sync (u -> d) says source offset u became target offset d; records after u follow one by one,
    so the snapshot end e is reached when the target end is at least d + (e - u).
    Partitions without a sync cannot be judged this way and are never reported behind.
    """
    behind = []
    for pair in pairs:
        for partition, (_begin, source_end) in sorted(pair.source_offsets.items()):
            sync = latest_syncs.get((pair.index, partition))
            if sync is None:
                continue
            upstream, downstream = sync
            target_end = target_offsets.get(pair.index, {}).get(partition, (0, 0))[1]
            if target_end < downstream + (source_end - upstream):
                behind.append((pair.index, partition))
    return behind


def at_snapshot(pairs, target_offsets, latest_syncs):
    """Whether MM2's offset syncs put every target partition exactly at the source snapshot: each source partition has a
    sync (u -> d) and its target end is d + (e - u), neither short of it nor beyond (duplicates, records copied after
    the snapshot), and the target has no records in partitions the source lacks. The target read up to these ends is
    then the snapshot's copy, whatever MM2 copies after it: there is nothing to wait for."""
    for pair in pairs:
        targets = target_offsets.get(pair.index, {})
        for partition, (_begin, source_end) in pair.source_offsets.items():
            sync = latest_syncs.get((pair.index, partition))
            if sync is None or partition not in targets or targets[partition][1] != sync[1] + (source_end - sync[0]):
                return False
        if any(end > begin for partition, (begin, end) in targets.items() if partition not in pair.source_offsets):
            return False
    return True


def wait_for_target(read_target_offsets, pairs, latest_syncs, timeout_s, interval_s, clock=time.monotonic, sleep=time.sleep):
    """Poll the target end offsets until they stop moving and no partition is behind (at once when at_snapshot).

    `read_target_offsets()` returns {pair index: {partition: (begin, end)}}. Returns (last poll,
    partitions still behind). At the timeout, a target that stopped moving short of the snapshot is
    compared anyway: gaps before its last copied record are losses, the records after it are reported
    as pending (exit code 2). A target still moving cannot be validated and raises ValidationUnavailable.
    """
    deadline = clock() + timeout_s
    previous = read_target_offsets()
    if at_snapshot(pairs, previous, latest_syncs):
        return previous, []
    while True:
        sleep(interval_s)
        current = read_target_offsets()
        behind = partitions_behind(pairs, current, latest_syncs)
        settled = current == previous
        if settled and (not behind or clock() >= deadline):
            return current, behind
        if clock() >= deadline:
            raise ValidationUnavailable(
                "the target end offsets were still moving after %.0f s of waiting for the source snapshot; check MirrorMaker 2's"
                " lag, or raise --catch-up-timeout" % timeout_s
            )
        previous = current
