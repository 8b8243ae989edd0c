# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare one source partition with its target partition in a single streaming pass, in the task that reads both.

MM2 keeps partition numbers and the order within a partition, so the k-th copy of a fingerprint on the source
is matched with the k-th copy on the target (identical records may legitimately occur several times on the
source; copies beyond the source's count are duplicates). Matching first-in first-out per fingerprint, in
whatever order the two sides are read, pairs exactly those copies, so a partition is classified as a whole
while only the records still waiting for their counterpart are held.

The wait is bounded: a record without a counterpart among the next `window` records of its side leaves the
task as residue, and so does every later copy of its fingerprint (the copies matched before it are the first
ones, as in a whole-partition match). Every record that ends without a counterpart leaves as residue too,
unclassified: whether it is missing, pending, expired, a duplicate or unexpected depends on where the
partition's first and last matches lie, which only the end of the pass knows (see residue.py). What else
leaves the task is the summary below: counts, match range, order violations, offset-sync anchors and the
first copy after every checkpoint.
"""
from __future__ import annotations

import heapq
from bisect import bisect_right
from collections import deque

from .slices import SOURCE, TARGET

# Whether the source has a fingerprint that was matched and forgotten: yes, no, or unknown (the window forgot).
SEEN, NOT_SEEN, SEEN_UNKNOWN = True, False, None
_BLOOM_MAX_BITS = 1 << 24  # 2 MB per partition: about 1 % false positives at 1.7M matched records
_NO_OFFSET = 1 << 62


class _MatchedFilter:
    """Which fingerprints were matched: exactly for the last `window` of them, and a Bloom filter for all,
    whose "no" is exact (its "maybe" makes a forgotten duplicate's status unknown, settled in residue.py)."""

    def __init__(self, window, expected):
        self.window = window
        self.current, self.previous = set(), set()
        bits = 1 << 10
        while bits < min(16 * expected, _BLOOM_MAX_BITS):
            bits <<= 1
        self.mask = bits - 1
        self.bloom = bytearray(bits >> 3) if window else None

    def add(self, fp):
        current = self.current
        current.add(fp)
        bloom = self.bloom
        if bloom is None:
            return
        if len(current) >= self.window:
            self.previous, self.current = current, set()
        bits = int.from_bytes(fp[:8], "little")
        first, second = bits & self.mask, (bits >> 32) & self.mask
        bloom[first >> 3] |= 1 << (first & 7)
        bloom[second >> 3] |= 1 << (second & 7)

    def seen(self, fp):
        if fp in self.current or fp in self.previous:
            return SEEN
        bloom = self.bloom
        if bloom is None:
            return NOT_SEEN  # unbounded window: every matched fingerprint is still held
        bits = int.from_bytes(fp[:8], "little")
        first, second = bits & self.mask, (bits >> 32) & self.mask
        if bloom[first >> 3] & (1 << (first & 7)) and bloom[second >> 3] & (1 << (second & 7)):
            return SEEN_UNKNOWN
        return NOT_SEEN


class PartitionMatch:
    """Feed every record of one partition pair with add(); summary() and the residue rows afterwards.

    `window`: records per side a record may wait for its counterpart (0: no limit, the whole partition is held if
    need be). `syncs`: MM2 offset syncs (upstream, downstream) of this partition whose offsets are both in range.
    `checkpoint_upstreams`: upstream offsets of the partition's latest checkpoints.
    """

    def __init__(self, window, sample_limit, syncs=(), checkpoint_upstreams=(), expected_records=0):
        self.window = window
        self.sample_limit = sample_limit
        self.waiting = ({}, {})  # per side: fp -> deque of offsets (target: [offset, seen]) waiting for a counterpart
        self.arrivals = (deque(), deque())  # per side: (offset, fp) in offset order; entries matched since are skipped
        self.spilled = set()  # fingerprints whose copies go to the residue from now on
        self.residue = []  # (side, offset, fp, seen)
        self.counts = [0, 0]
        self.matched = 0
        self.first_matched_source = self.first_matched_target = self.last_matched_source = None
        self.shift = None  # target offset minus source offset of the latest match
        self.filter = _MatchedFilter(window, expected_records)
        self.held_pairs = []  # heap of (target offset, source offset) not yet in target order
        self.previous_source = None
        self.order_violations = 0
        self.violation_samples = []
        self.anchor_upstreams = {}
        self.anchor_downstreams = {}
        self.anchors = sorted(set(syncs))
        for upstream, downstream in self.anchors:
            self.anchor_upstreams[upstream] = None
            self.anchor_downstreams[downstream] = None
        self.checkpoint_upstreams = sorted(set(checkpoint_upstreams))
        self.first_copy_from = [None] * len(self.checkpoint_upstreams)  # per upstream bucket: least target offset

    def add(self, side, offset, fp):
        self.counts[side] += 1
        if side == SOURCE:
            if offset in self.anchor_upstreams:
                self.anchor_upstreams[offset] = fp
        elif offset in self.anchor_downstreams:
            self.anchor_downstreams[offset] = fp
        if fp in self.spilled:
            self.residue.append((side, offset, fp, self.filter.seen(fp) if side == TARGET else None))
            return
        other = self.waiting[1 - side]
        counterparts = other.get(fp)
        if counterparts:
            if side == TARGET:
                counterpart = counterparts.popleft()
                self._matched(counterpart, offset, fp)
            else:
                counterpart, _seen = counterparts.popleft()
                for entry in counterparts:  # the source has this fingerprint: later target copies are duplicates
                    entry[1] = SEEN
                self._matched(offset, counterpart, fp)
            if not counterparts:
                del other[fp]
            arrivals = self.arrivals[1 - side]
            if arrivals and arrivals[0][0] == counterpart:  # read in step, the counterpart is the oldest arrival: keep the window short
                arrivals.popleft()
            if self.held_pairs:
                self._release_held()
            return
        mine = self.waiting[side]
        entry = offset if side == SOURCE else [offset, self.filter.seen(fp)]
        if fp in mine:
            mine[fp].append(entry)
        else:
            mine[fp] = deque((entry,))
        arrivals = self.arrivals[side]
        arrivals.append((offset, fp))
        if self.window and len(arrivals) > self.window:
            self._spill_oldest(side)

    def _live_head(self, side):
        """The oldest record of `side` still waiting, dropping arrivals matched since; None when none waits."""
        arrivals = self.arrivals[side]
        while arrivals:
            offset, fp = arrivals[0]
            if self._waits(side, offset, fp):
                return offset, fp
            arrivals.popleft()
        return None

    def _waits(self, side, offset, fp):
        """Whether the arrival (offset, fp) of `side` still waits: copies of a fingerprint are matched oldest first."""
        queued = self.waiting[side].get(fp)
        return bool(queued) and (queued[0] if side == SOURCE else queued[0][0]) <= offset

    def _spill_oldest(self, side):
        """The window is full: its oldest record, if it still waits, goes to the residue."""
        offset, fp = self.arrivals[side].popleft()
        if self._waits(side, offset, fp):
            self._spill(fp)
            if self.held_pairs:
                self._release_held()

    def _spill(self, fp):
        """Every waiting copy of `fp` to the residue, and every later one too."""
        self.spilled.add(fp)
        for side in (SOURCE, TARGET):
            for entry in self.waiting[side].pop(fp, ()):
                self.residue.append((SOURCE, entry, fp, None) if side == SOURCE else (TARGET, entry[0], fp, entry[1]))

    def _matched(self, source_offset, target_offset, fp):
        self.matched += 1
        if self.first_matched_source is None or source_offset < self.first_matched_source:
            self.first_matched_source = source_offset
        if self.first_matched_target is None or target_offset < self.first_matched_target:
            self.first_matched_target = target_offset
        if self.last_matched_source is None or source_offset > self.last_matched_source:
            self.last_matched_source = source_offset
        self.shift = target_offset - source_offset
        self.filter.add(fp)
        if self.checkpoint_upstreams:
            bucket = bisect_right(self.checkpoint_upstreams, source_offset) - 1
            if bucket >= 0 and (self.first_copy_from[bucket] is None or target_offset < self.first_copy_from[bucket]):
                self.first_copy_from[bucket] = target_offset
        # Order is judged in target order; a target record still waiting may yet be matched before this one.
        if self.held_pairs or (self.waiting[TARGET] and self._earliest_waiting_target() < target_offset):
            heapq.heappush(self.held_pairs, (target_offset, source_offset))
        else:
            self._in_target_order(target_offset, source_offset)

    def _earliest_waiting_target(self):
        head = self._live_head(TARGET)
        return _NO_OFFSET if head is None else head[0]

    def _release_held(self, everything=False):
        limit = _NO_OFFSET if everything else self._earliest_waiting_target()
        held = self.held_pairs
        while held and held[0][0] < limit:
            target_offset, source_offset = heapq.heappop(held)
            self._in_target_order(target_offset, source_offset)

    def _in_target_order(self, target_offset, source_offset):
        """Matched pairs arrive here in target order: a record copied after one that is later on the source breaks it."""
        if self.previous_source is not None and source_offset < self.previous_source:
            self.order_violations += 1
            if len(self.violation_samples) < self.sample_limit:
                self.violation_samples.append(target_offset)
        self.previous_source = source_offset

    def finish(self):
        """End of both sides: what still waits has no counterpart in this partition."""
        for side in (SOURCE, TARGET):
            for fp in list(self.waiting[side]):
                self._spill(fp)
        self._release_held(everything=True)

    def anchor_results(self):
        """(checked, mismatches, first mismatching syncs): a sync says source record u was copied as target record d."""
        mismatches = [(upstream, downstream) for upstream, downstream in self.anchors
                      if self.anchor_upstreams[upstream] is None or self.anchor_upstreams[upstream] != self.anchor_downstreams[downstream]]
        return len(self.anchors), len(mismatches), mismatches[:self.sample_limit]

    def first_copies_after(self):
        """{checkpoint upstream offset: least target offset of a matched source record at or after it (None: none)}."""
        result, least = {}, None
        for index in range(len(self.checkpoint_upstreams) - 1, -1, -1):
            candidate = self.first_copy_from[index]
            if candidate is not None and (least is None or candidate < least):
                least = candidate
            result[self.checkpoint_upstreams[index]] = least
        return result
