# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare one source partition with its target partition in a single streaming pass, in the task that reads both.

MM2 keeps partition numbers and the order within a partition, so the k-th copy of a fingerprint on the source
is matched with the k-th copy on the target (identical records may legitimately occur several times on the
source; copies beyond the source's count are duplicates). Matching first-in first-out per fingerprint, in
whatever order the two sides are read, pairs exactly those copies, so a partition is classified as a whole
while only the records still waiting for their counterpart are held.

Runs of records equal on both sides, a healthy mirror's case, are matched in one step (match_run) without
waiting; records are fed one by one where the sides part.

The wait is bounded: when more than `window` records of a side wait for a counterpart, the oldest leaves the
task as residue, and so does every later copy of its fingerprint (the copies matched before it are the first
ones, as in a whole-partition match). `exempt` fingerprints, those a first read left in the residue, wait
without that bound when a partition is read again, and whether the source had them is known exactly: they
are the residue, so what a task holds is still a window plus the residue, never the partition. Every
record that ends without a counterpart leaves as residue too, unclassified: whether it is missing, pending,
expired, a duplicate or unexpected depends on where the partition's first and last matches lie, which only
the end of the pass knows (see residue.py). What else leaves the task is the summary below: counts, match
range, order violations, offset-sync anchors and the first copy after every checkpoint.
"""
from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import deque
from functools import partial

from .slices import SOURCE, TARGET

# Whether the source has a fingerprint that was matched and forgotten: yes, no, or unknown (the window forgot).
SEEN, NOT_SEEN, SEEN_UNKNOWN = True, False, None
_BLOOM_MAX_SLOTS = 1 << 24  # 16 MB per partition: about 3 % false positives at 1.7M matched records
_NO_OFFSET = 1 << 62


def coarse_keys(keys, values):
    """What the Bloom filter and the conflict check below know of a record: a hash of its key and value, equal for
    records with equal fingerprints (the converse need not hold). Computed in C for a whole batch."""
    return list(map(hash, zip(keys, values)))


class _MatchedFilter:
    """Which records were matched: their fingerprints exactly for about the last `window` of them, and a Bloom filter
    of their coarse keys for all, whose "no" is exact (its "maybe" makes a forgotten duplicate's status unknown,
    settled in residue.py).

    Runs matched whole (match_run) come with a way to compute their fingerprints, called only when a question comes:
    a partition that never parts from its mirror never asks, and each record is hashed at most once.
    """

    def __init__(self, window, expected, exempt=frozenset()):
        self.window = window
        self.exempt = exempt
        self.exempt_matched = set()  # the exempt fingerprints matched so far: exact, never forgotten
        self.current, self.previous = set(), set()
        self.unhashed, self.unhashed_count = deque(), 0  # (count, fingerprints callable) of matched runs, oldest first
        slots = 1 << 10
        while slots < min(16 * expected, _BLOOM_MAX_SLOTS):
            slots <<= 1
        self.mask = slots - 1
        self.bloom = bytearray(slots) if window else None  # a byte per slot: one store sets it

    def add(self, fps, coarse):
        """Remember matched records by their fingerprints `fps` and coarse keys `coarse`."""
        self._mark(coarse)
        self._remember(fps)

    def add_unhashed(self, count, fps_of, coarse):
        """Remember `count` matched records whose fingerprints `fps_of()` gives, by their coarse keys `coarse`."""
        self._mark(coarse)
        self.unhashed.append((count, fps_of))
        self.unhashed_count += count
        if self.bloom is not None:
            while self.unhashed_count - self.unhashed[0][0] >= self.window:  # forgotten but by the Bloom filter
                forgotten_count, forgotten = self.unhashed.popleft()
                self.unhashed_count -= forgotten_count
                if self.exempt:
                    self.exempt_matched.update(self.exempt.intersection(forgotten()))

    def _mark(self, coarse):
        bloom = self.bloom
        if bloom is not None:
            mask = self.mask
            # A plain loop: about twice as fast as map() over bloom.__setitem__ on CPython 3.8 to 3.13 (measured).
            for key in coarse:
                bloom[key & mask] = 1
                bloom[(key >> 32) & mask] = 1

    def _remember(self, fps):
        if self.exempt:
            self.exempt_matched.update(self.exempt.intersection(fps))
        current = self.current
        current.update(fps)
        if self.bloom is not None and len(current) >= self.window:
            self.previous, self.current = current, set()

    def seen(self, fp, coarse):
        while self.unhashed:
            self._remember(self.unhashed.popleft()[1]())
        self.unhashed_count = 0
        if fp in self.exempt:
            return SEEN if fp in self.exempt_matched else NOT_SEEN
        if fp in self.current or fp in self.previous:
            return SEEN
        bloom = self.bloom
        if bloom is None:
            return NOT_SEEN  # unbounded window: every matched fingerprint is still held
        if bloom[coarse & self.mask] and bloom[(coarse >> 32) & self.mask]:
            return SEEN_UNKNOWN
        return NOT_SEEN


class PartitionMatch:
    """Feed every record of one partition pair with add(), or runs of records that are equal on both sides with
    match_run(); summary() and the residue rows afterwards.

    `window`: records per side a record may wait for its counterpart (0: no limit, the whole partition is held if
    need be). `syncs`: MM2 offset syncs (upstream, downstream) of this partition whose offsets are both in range.
    `checkpoint_upstreams`: upstream offsets of the partition's latest checkpoints. `exempt`: fingerprints whose
    records wait outside the window (see the module's docstring).
    """

    def __init__(self, window, sample_limit, syncs=(), checkpoint_upstreams=(), expected_records=0, exempt=frozenset()):
        self.window = window
        self.exempt = exempt
        self.exempt_targets = []  # heap of (offset, fp) of exempt target records that waited, kept out of the window
        self.sample_limit = sample_limit
        self.waiting = ({}, {})  # per side: fp -> deque of offsets (target: [offset, seen]) waiting for a counterpart
        self.arrivals = (deque(), deque())  # per side: (offset, fp) in offset order; entries matched since are skipped
        self.spilled = set()  # fingerprints whose copies go to the residue from now on
        self.conflicting = set()  # coarse keys of every record that waited or went to the residue
        self.residue = []  # (side, offset, fp, seen)
        self.counts = [0, 0]
        self.matched = 0
        self.first_matched_source = self.first_matched_target = self.last_matched_source = None
        self.shift = None  # target offset minus source offset of the latest match
        self.shift_at = -1  # the target offset of the latest match
        self.filter = _MatchedFilter(window, expected_records, exempt)
        # heap of matched runs [first target offset, first source offset, last source offset, last target offset] not
        # yet in target order; a run that goes on from the last one held joins it, so that a record waiting long holds
        # one entry per place where the sides part, not one per batch.
        self.held_pairs = []
        self.last_held = None
        self.previous_source = None
        self.order_violations = 0
        self.violation_samples = []
        self.anchor_upstreams = {}
        self.anchor_downstreams = {}
        self.anchors = sorted(set(syncs))
        for upstream, downstream in self.anchors:
            self.anchor_upstreams[upstream] = None
            self.anchor_downstreams[downstream] = None
        self.anchor_offsets = (sorted(self.anchor_upstreams), sorted(self.anchor_downstreams))
        self.checkpoint_upstreams = sorted(set(checkpoint_upstreams))
        self.first_copy_from = [None] * len(self.checkpoint_upstreams)  # per upstream bucket: least target offset

    def add(self, side, offset, fp, coarse):
        """One record of `side` with its fingerprint `fp` and coarse key `coarse` (coarse_keys)."""
        self.counts[side] += 1
        if side == SOURCE:
            if offset in self.anchor_upstreams:
                self.anchor_upstreams[offset] = fp
        elif offset in self.anchor_downstreams:
            self.anchor_downstreams[offset] = fp
        if fp in self.spilled:
            self.residue.append((side, offset, fp, self.filter.seen(fp, coarse) if side == TARGET else None))
            return
        other = self.waiting[1 - side]
        counterparts = other.get(fp)
        if counterparts:
            if side == TARGET:
                counterpart = counterparts.popleft()
                self._matched((counterpart,), (offset,))
            else:
                counterpart, _seen = counterparts.popleft()
                for entry in counterparts:  # the source has this fingerprint: later target copies are duplicates
                    entry[1] = SEEN
                self._matched((offset,), (counterpart,))
            self.filter.add((fp,), (coarse,))
            if not counterparts:
                del other[fp]
            arrivals = self.arrivals[1 - side]
            if arrivals and arrivals[0][0] == counterpart:  # read in step, the counterpart is the oldest arrival: keep the window short
                arrivals.popleft()
            if self.held_pairs:
                self._release_held()
            return
        mine = self.waiting[side]
        entry = offset if side == SOURCE else [offset, self.filter.seen(fp, coarse)]
        self.conflicting.add(coarse)
        if fp in mine:
            mine[fp].append(entry)
        else:
            mine[fp] = deque((entry,))
        if fp in self.exempt:
            if side == TARGET:
                heapq.heappush(self.exempt_targets, (offset, fp))
            return
        arrivals = self.arrivals[side]
        arrivals.append((offset, fp))
        if self.window and len(arrivals) > self.window:
            self._spill_oldest(side)

    def match_run(self, sources, targets, coarse, fps_of):
        """Match source offsets `sources` with target offsets `targets` pair by pair: records read in order on each side
        that the caller found equal on both. `coarse`: their coarse keys; `fps_of(start, end)`: the fingerprints of
        pairs start..end, computed only if needed.

        Takes the longest first part of the run whose fingerprints no waiting or spilled record has (a record that
        has one must be matched first in first out, by add()) and returns its length. Matching such a run in one
        step gives what add() would for each of its records: every earlier copy of these fingerprints is matched.
        """
        taken, fps = len(sources), None
        if self.conflicting and not self.conflicting.isdisjoint(coarse):
            fps = fps_of(0, taken)
            waiting_source, waiting_target = self.waiting
            spilled = self.spilled
            taken = next((index for index, fp in enumerate(fps) if fp in waiting_source or fp in waiting_target or fp in spilled), taken)
            sources, targets, coarse, fps = sources[:taken], targets[:taken], coarse[:taken], fps[:taken]
        if not taken:
            return 0
        self.counts[SOURCE] += taken
        self.counts[TARGET] += taken
        for side, offsets, anchored in ((SOURCE, sources, self.anchor_upstreams), (TARGET, targets, self.anchor_downstreams)):
            if anchored:
                wanted = self.anchor_offsets[side]
                for offset in wanted[bisect_left(wanted, offsets[0]):bisect_right(wanted, offsets[-1])]:
                    index = bisect_left(offsets, offset)
                    if offsets[index] == offset:
                        anchored[offset] = fps[index] if fps is not None else fps_of(index, index + 1)[0]
        if fps is None:
            self.filter.add_unhashed(taken, partial(fps_of, 0, taken), coarse)
        else:
            self.filter.add(fps, coarse)
        self._matched(sources, targets)
        return taken

    def matched_before(self, fp, coarse):
        """Whether a record with fingerprint `fp` may have been matched already (a target copy of it is then likely a
        duplicate, which needs no source record to come)."""
        return self.filter.seen(fp, coarse) is not NOT_SEEN

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

    def _matched(self, sources, targets):
        """A run of matched pairs: source and target offsets each increasing."""
        self.matched += len(sources)
        first_source, first_target, last_source = sources[0], targets[0], sources[-1]
        if self.first_matched_source is None or first_source < self.first_matched_source:
            self.first_matched_source = first_source
        if self.first_matched_target is None or first_target < self.first_matched_target:
            self.first_matched_target = first_target
        if self.last_matched_source is None or last_source > self.last_matched_source:
            self.last_matched_source = last_source
        self.shift, self.shift_at = targets[-1] - last_source, targets[-1]
        if self.checkpoint_upstreams:
            self._first_copies(sources, targets)
        # Order is judged in target order; a target record still waiting may yet be matched before this run. No other
        # record's target offset lies within a run's, so a run is judged as a whole.
        if self.held_pairs or (self.waiting[TARGET] and self._earliest_waiting_target() < first_target):
            self._hold(first_target, first_source, last_source, targets[-1])
        else:
            self._in_target_order(first_target, first_source, last_source)

    def _first_copies(self, sources, targets):
        """Per checkpoint upstream bucket, the least target offset of the run's pairs whose source lies in it: the
        target offset of the bucket's first source record in the run."""
        upstreams, first_copy_from = self.checkpoint_upstreams, self.first_copy_from
        index = 0
        while index < len(sources):
            bucket = bisect_right(upstreams, sources[index]) - 1
            if bucket >= 0 and (first_copy_from[bucket] is None or targets[index] < first_copy_from[bucket]):
                first_copy_from[bucket] = targets[index]
            if bucket + 1 >= len(upstreams):
                return
            index = bisect_left(sources, upstreams[bucket + 1], index)

    def _earliest_waiting_target(self):
        head = self._live_head(TARGET)
        exempt = self.exempt_targets
        while exempt and not self._waits(TARGET, *exempt[0]):
            heapq.heappop(exempt)
        return min(_NO_OFFSET if head is None else head[0], exempt[0][0] if exempt else _NO_OFFSET)

    def _hold(self, first_target, first_source, last_source, last_target):
        last = self.last_held
        if last is not None and last[3] + 1 == first_target and last[2] + 1 == first_source:
            last[2], last[3] = last_source, last_target  # judged alike: within a run the source offsets increase
            return
        self.last_held = [first_target, first_source, last_source, last_target]
        heapq.heappush(self.held_pairs, self.last_held)

    def _release_held(self, everything=False):
        limit = _NO_OFFSET if everything else self._earliest_waiting_target()
        held = self.held_pairs
        while held and held[0][0] < limit:
            first_target, first_source, last_source, _last_target = entry = heapq.heappop(held)
            if entry is self.last_held:
                self.last_held = None
            self._in_target_order(first_target, first_source, last_source)

    def _in_target_order(self, first_target, first_source, last_source):
        """Matched runs arrive here in target order: a record copied after one that is later on the source breaks it.
        Within a run the source offsets increase."""
        if self.previous_source is not None and first_source < self.previous_source:
            self.order_violations += 1
            if len(self.violation_samples) < self.sample_limit:
                self.violation_samples.append(first_target)
        self.previous_source = last_source

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
