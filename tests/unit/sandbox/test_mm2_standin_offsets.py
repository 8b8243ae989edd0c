# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in's offset syncs: when MirrorSourceTask emits them and what OffsetSyncStore keeps, version by version.
Expected values are worked out by hand from the Kafka source named in each test. The translation cases shared with
the collection are in tests/unit/mm2_golden."""
import pytest

from sandbox.mm2.behaviour import Behaviour
from sandbox.mm2.sync_emitter import OffsetSyncEmitter
from sandbox.mm2.sync_store import TOO_FAR_BEHIND, OffsetSyncStore

V2_4_1, V3_4_0, V3_4_1, V3_6, V3_7, V3_9 = (2, 4, 1), (3, 4, 0), (3, 4, 1), (3, 6, 0), (3, 7, 0), (3, 9, 0)


def emitted(release, pairs, max_lag=100):
    emitter = OffsetSyncEmitter(Behaviour(release), max_lag)
    return [(u, d) for u, d in pairs for _sync in emitter.copied("t", 0, u, d)]


def test_steady_copy_emits_one_sync_per_lifetime_before_3_4_1():
    """MirrorSourceTask.PartitionState.update at 2.4.1 - 3.4.0: downstream never drifts from lastSync + upstream step."""
    assert emitted(V2_4_1, [(u, u) for u in range(350)]) == [(0, 0)]
    assert emitted(V3_4_0, [(u, u) for u in range(350)]) == [(0, 0)]


def test_steady_copy_emits_every_offset_lag_max_from_3_4_1():
    """3.4.1+: translatedOffsetTooStale = downstream - (lastSyncDownstream + 1) >= offset.lag.max."""
    assert emitted(V3_4_1, [(u, u) for u in range(350)]) == [(0, 0), (101, 101), (202, 202), (303, 303)]


def test_downstream_drift_emits_before_3_4_1():
    """2.4.1: record u=10 landing at d=110 (100 duplicates before it) drifts 110 - (0 + 10) = 100 >= 100."""
    pairs = [(u, u) for u in range(10)] + [(10, 110), (11, 111)]
    assert emitted(V2_4_1, pairs) == [(0, 0), (10, 110)]


def test_gap_and_truncation_emit_in_every_release():
    """skippedUpstreamRecord (compaction, transaction markers) and truncatedDownstreamTopic (the remote topic was recreated)."""
    pairs = [(0, 0), (1, 1), (5, 2), (6, 0)]
    for release in (V2_4_1, V3_9):
        assert emitted(release, pairs) == [(0, 0), (5, 2), (6, 0)]


def test_a_new_process_emits_again_at_its_first_record():
    """noPreviousSyncThisLifetime: after a crash the task re-copies from its last commit and syncs that first record."""
    assert emitted(V3_9, [(500, 1000), (501, 1001)]) == [(500, 1000)]


def test_delayed_syncs_go_out_at_commit_from_3_7():
    """OffsetSyncWriter (3.7+): the newest non-urgent sync per partition waits in delayedOffsetSyncs until
    promoteDelayedOffsetSyncs at the task's commit; before 3.7 there is no such queue."""
    for release, at_commit in ((V3_7, [("t", 0, 149, 149)]), (V3_6, [])):
        emitter = OffsetSyncEmitter(Behaviour(release), 100)
        for u in range(150):
            emitter.copied("t", 0, u, u)
        assert emitter.committed() == at_commit, release
        assert emitter.committed() == []


def live_store(release, pairs, topic="t"):
    store = OffsetSyncStore(Behaviour(release))
    store.finish_initial_read()
    for u, d in pairs:
        store.add(topic, 0, u, d)
    return store


def test_history_is_spaced_exponentially_from_3_4_1():
    """OffsetSyncStore.updateSyncArray: with syncs 0, 101, 202 the first slots hold 202 until invariant B
    (syncs[7].upstream <= syncs[8].upstream + 2^8 - 2^7) lets 101 stay at slot 8, then 0 fills the rest."""
    for release in (V3_4_1, V3_9):
        store = live_store(release, [(0, 0), (101, 101), (202, 202)])
        assert store.syncs[("t", 0)][7].upstream == 202 and store.syncs[("t", 0)][8].upstream == 101, release
        assert store.history("t", 0) == [(202, 202), (101, 101), (0, 0)], release


def test_upstream_rewind_clears_the_history():
    """updateSyncArray: upstreamOffset < syncs[0].upstreamOffset -> clearSyncArray (every slot the new sync)."""
    store = live_store(V3_9, [(0, 0), (101, 101), (202, 202), (150, 300)])
    assert store.history("t", 0) == [(150, 300)]


def test_no_translation_before_the_first_read_to_the_end():
    """translateDownstream (3.4.1+): `if (!readToEnd) return OptionalLong.empty()`."""
    store = OffsetSyncStore(Behaviour(V3_9))
    store.add("t", 0, 0, 0)
    assert store.translate("t", 0, 5) is None
    store.finish_initial_read()
    assert store.translate("t", 0, 5) == 1


@pytest.mark.parametrize("release, kept", [
    # 3.4.1 - 3.7.0: while reading to the end, every sync clears the array: only the newest survives a restart.
    (V3_4_1, [(202, 202)]), (V3_7, [(202, 202)]),
    # 3.7.1+: CheckpointStore read the checkpoints, so OffsetSyncStore.start(false) keeps the whole history.
    ((3, 7, 1), [(202, 202), (101, 101), (0, 0)]), (V3_9, [(202, 202), (101, 101), (0, 0)]),
])
def test_history_read_at_start(release, kept):
    store = OffsetSyncStore(Behaviour(release))
    for u in (0, 101, 202):
        store.add("t", 0, u, u)
    store.finish_initial_read()
    assert store.history("t", 0) == kept
    assert store.translate("t", 0, 150) == (102 if len(kept) > 1 else TOO_FAR_BEHIND)


def test_java_long_overflow_of_the_last_slot_is_respected():
    """invariantB for j = 63 computes 1L << 63 (negative in Java): the bound is negative, so slot 63 always satisfies B
    and keeps the earliest sync (the class comment's invariant D)."""
    store = live_store(V3_9, [(u * 1000, u * 1000) for u in range(70)])
    history = store.history("t", 0)
    assert history[0] == (69000, 69000) and history[-1] == (0, 0)
    assert store.translate("t", 0, 69000) == 69000 and store.translate("t", 0, 0) == 0
