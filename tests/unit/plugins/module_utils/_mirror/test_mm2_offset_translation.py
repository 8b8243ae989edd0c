# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offset translation per MirrorMaker 2 release (plugins/module_utils/_mirror/offset_translation.py).

Every expected figure is derived by hand from Apache Kafka's connect/mirror sources at the tag in the case's name
(class.method), not computed with the code under test.
"""
from __future__ import annotations

import random

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offset_translation import (
    SyncHistory,
    checkpoint_gap_reason,
    parse_version,
    translate,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint

V241, V270, V340, V341, V350, V352, V390 = (parse_version(text) for text in ("2.4.1", "2.7.0", "3.4.0", "3.4.1", "3.5.0", "3.5.2", "3.9.0"))


def cp(upstream, downstream):
    return Checkpoint("app", "primary.orders", 0, upstream, downstream, "")


# (case, version, syncs in topic order, group offset, expected target offset)
LATEST_SYNC_CASES = [
    # 2.4.1 OffsetSyncStore.translateDownstream: offsetSync.downstreamOffset() + (upstreamOffset - offsetSync.upstreamOffset()).
    # MirrorSourceTask.PartitionState.update emits only the first sync on a steady copy: (0, 0) stands for the whole partition.
    ("2.4.1 OffsetSyncStore.translateDownstream steady copy", V241, [(0, 0)], 93, 93),
    ("2.4.1 OffsetSyncStore.translateDownstream after a gap sync", V241, [(0, 0), (120, 118)], 130, 128),
    # "Offset is too far in the past to translate accurately": only the latest sync is kept (handleRecord puts it in a map).
    ("3.4.0 OffsetSyncStore.translateDownstream latest sync after g", V340, [(100, 100), (200, 205)], 150, None),
    ("3.4.0 OffsetSyncStore.handleRecord latest in topic order", V340, [(0, 0), (1000, 1000), (500, 1001)], 700, 1201),
]


@pytest.mark.parametrize("case, version, syncs, group_offset, expected", LATEST_SYNC_CASES, ids=[c[0] for c in LATEST_SYNC_CASES])
def test_latest_sync_only_up_to_3_4_0(case, version, syncs, group_offset, expected):
    offset, _sync, reason = SyncHistory.of(version, syncs).translate(group_offset)
    assert offset == expected, case
    assert reason


def test_3_4_1_history_after_two_syncs():
    """3.5.2+ OffsetSyncStore.updateSyncArray, by hand for (0, 0) then (10, 10): syncs[0] = (10, 10); at index c the old
    (0, 0) fails invariantB(syncs[c-1], old, c-1, c) (bound 0 + 2^c - 2^(c-1) = 2^(c-1) < 10) until c = 5 (bound 16), where
    it is promoted and invariantB holds: indexes 0-4 keep (10, 10), 5-63 keep (0, 0). lookupLatestSync then gives the
    latest kept sync at or before g, and translateDownstream d (g == u) or d + 1."""
    for version in (V341, V350, V352, V390, None):
        history = SyncHistory.of(version, [(0, 0), (10, 10)])
        assert history.kept() == [(10, 10), (0, 0)], version
        assert history.translate(5)[0] == 1
        assert history.translate(10)[0] == 10
        assert history.translate(15)[0] == 11
    # The same two syncs up to 3.4.0: latest only, g before it has no translation, after it d + (g - u).
    assert SyncHistory.of(V340, [(0, 0), (10, 10)]).translate(5)[0] is None
    assert SyncHistory.of(V340, [(0, 0), (10, 10)]).translate(15)[0] == 15


def test_3_4_1_rewind_clears_the_history():
    """3.4.1 OffsetSyncStore.updateSyncArray: `syncs[0].upstreamOffset() > upstreamOffset` -> clearSyncArray. After a crash
    MirrorMaker re-copies from the committed source offset 500 (target already holds 0..1000 at 0..1000) and emits
    (500, 1001): the old syncs are gone, so 500 translates to 1001 (not 501 from the old (500, 500)), and 499 to nothing
    (lookupLatestSync falls back to syncs[63] = (500, 1001), ahead of g: -1)."""
    syncs = [(0, 0), (500, 500), (1000, 1000), (500, 1001)]
    for version in (V341, V390):
        history = SyncHistory.of(version, syncs)
        assert history.kept() == [(500, 1001)]
        assert history.translate(500)[0] == 1001
        assert history.translate(700)[0] == 1002
        assert history.translate(499)[0] is None


def test_3_4_1_history_after_three_syncs():
    """OffsetSyncStore.updateSyncArray by hand, (0, 0), (100, 103), (200, 210): after the second sync indexes 0-7 hold
    (100, 103) (invariantB bound 2^(c-1) reaches 100 at c = 8). With (200, 210) at index 0, (100, 103) fails invariantB
    until c = 8 (bound 100 + 2^7 = 228), where it is promoted (invariantC against (0, 0) at index 9: 0 + 2^6 <= 100);
    at c = 9 invariantB(syncs[8], syncs[9]) holds (bound 0 + 2^9 - 2^8 = 256): 0-7 (200, 210), 8 (100, 103), 9-63 (0, 0).
    Same for 3.4.1 (oldValue chain) and 3.5.2+ (original array). translateDownstream: d, or d + 1 after the sync."""
    for version in (V341, V352, V390):
        history = SyncHistory.of(version, [(0, 0), (100, 103), (200, 210)])
        assert history.kept() == [(200, 210), (100, 103), (0, 0)], version
        assert [history.translate(g)[0] for g in (200, 250, 100, 150, 50, 0)] == [210, 211, 103, 104, 1, 0]


@pytest.mark.parametrize("version", [V341, V352, None])
def test_history_never_translates_past_the_exact_position(version):
    """OffsetSyncStore invariants A and D: syncs[0] is the latest sync, every kept sync came after the last rewind, so the
    translation is at or before the exact position of any copy made in order (here: each source offset u at u + 3)."""
    rng = random.Random(7)
    upstream, syncs = 0, []
    for _step in range(400):
        upstream += rng.randint(1, 40)
        syncs.append((upstream, upstream + 3))
    history = SyncHistory.of(version, syncs)
    kept = history.kept()
    assert kept[0] == syncs[-1] and len(kept) <= 64 and len(kept) > 5
    assert [u for u, _d in kept] == sorted((u for u, _d in kept), reverse=True)
    for group_offset in range(syncs[0][0], upstream + 50, 7):
        offset = history.translate(group_offset)[0]
        assert offset is not None and offset <= group_offset + 3


# (case, version, source offset, checkpoint, syncs or None, expected offset, expected basis)
TRANSLATE_CASES = [
    ("source offset unknown: the checkpoint as it is", V390, None, cp(1500, 1498), None, 1498, "checkpoint"),
    ("nothing known", V390, None, None, None, None, None),
    # Issue: 2.4.1 with one (0, 0) sync and an exact checkpoint for 93: the checkpoint, never (0, 0) + 1.
    ("2.4.1 MirrorCheckpointTask.checkpoint exact beats a coarse sync", V241, 93, cp(93, 93), [(0, 0)], 93, "checkpoint"),
    ("unknown release, exact checkpoint beats a coarse sync", None, 93, cp(93, 93), [(0, 0)], 93, "checkpoint"),
    # MirrorCheckpointTask.checkpoint wrote 41 -> 1 while its OffsetSyncStore held only (0, 0); the syncs read now give
    # (33, 33) + 1: the further of the two, both at or before the exact position.
    ("3.9 syncs further than an early exact checkpoint", V390, 41, cp(41, 1), [(0, 0), (11, 11), (22, 22), (33, 33), (44, 44)],
     34, "offset_sync"),
    ("3.9 syncs when the checkpoint is older", V390, 1510, cp(1500, 1498), [(1000, 990), (1500, 1498)], 1499, "offset_sync"),
    ("no sync at or before g, a checkpoint behind g", V390, 999, cp(900, 889), [(1000, 990)], 889, "checkpoint_behind"),
    ("checkpoint ahead of g (group rewound): would skip", V390, 1400, cp(1500, 1498), None, None, None),
    ("3.4.0 latest sync ahead of g, no checkpoint", V340, 150, None, [(100, 100), (200, 205)], None, None),
    ("checkpoint for offset 0", V390, 0, cp(0, 0), None, 0, "checkpoint"),
]


@pytest.mark.parametrize("case, version, source_offset, checkpoint, syncs, offset, basis", TRANSLATE_CASES, ids=[c[0] for c in TRANSLATE_CASES])
def test_translate(case, version, source_offset, checkpoint, syncs, offset, basis):
    history = None if syncs is None else SyncHistory.of(version, syncs)
    result = translate(source_offset, checkpoint, history, version)
    assert (result.offset, result.basis) == (offset, basis), case
    assert result.reason


def test_simple_groups_have_no_checkpoints_before_2_8():
    """2.7.0 MirrorCheckpointConnector.findConsumerGroups: .filter(x -> !x.isSimpleConsumerGroup()); gone in 2.8.0."""
    reason = translate(40, None, None, V270, simple_group=True).reason
    assert "never checkpoints simple groups" in reason and "offset_syncs=true" in reason
    assert "wait" not in reason.lower()
    later = checkpoint_gap_reason(parse_version("2.8.0"), True, 40)
    assert "simple" not in later and "refresh.groups.interval.seconds" in later


def test_no_checkpoint_to_offset_zero_before_2_7():
    """2.4.1 MirrorCheckpointTask.checkpointsForGroup: .filter(x -> x.downstreamOffset() > 0); >= 0 from 2.7.0."""
    assert "offset 0" in checkpoint_gap_reason(V241, False, 1)
    assert "offset 0" not in checkpoint_gap_reason(V270, False, 1)


def test_parse_version():
    assert parse_version("") is None and parse_version(None) is None
    assert str(parse_version("3.4.1")) == "3.4.1"
    with pytest.raises(ValueError):
        parse_version("latest")
