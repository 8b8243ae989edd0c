# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
import pytest

from mirror_validation.catch_up import at_snapshot, partitions_behind, wait_for_target
from mirror_validation.errors import ValidationUnavailable
from mirror_validation.topic_pairs import TopicPair
from tests.support.fake_clock import FakeClock


def pair():
    return TopicPair(0, "orders", "primary.orders", 2, 2, source_offsets={0: (0, 100), 1: (0, 50)})


@pytest.mark.parametrize("target_ends, syncs, behind", [
    ({0: 100, 1: 50}, {(0, 0): (90, 90), (0, 1): (40, 40)}, []),
    ({0: 99, 1: 50}, {(0, 0): (90, 90), (0, 1): (40, 40)}, [(0, 0)]),
    # the target numbering may be shifted (target began later): only the distance after the sync counts
    ({0: 15, 1: 50}, {(0, 0): (90, 5)}, []),
    ({0: 0, 1: 0}, {}, []),  # without syncs nothing can be called behind
])
def test_partitions_behind(target_ends, syncs, behind):
    offsets = {0: {p: (0, end) for p, end in target_ends.items()}}
    assert partitions_behind([pair()], offsets, syncs) == behind


def test_wait_returns_once_offsets_stop_moving_and_reach_the_snapshot():
    polls = iter([{0: {0: (0, 80), 1: (0, 50)}}, {0: {0: (0, 100), 1: (0, 50)}}, {0: {0: (0, 100), 1: (0, 50)}}])
    clock = FakeClock()
    result = wait_for_target(lambda: next(polls), [pair()], {(0, 0): (90, 90)}, 60, 5, clock=clock, sleep=clock.sleep)
    assert result == ({0: {0: (0, 100), 1: (0, 50)}}, [])
    assert clock.now == 10


def test_a_target_that_stopped_short_is_compared_after_the_timeout():
    clock = FakeClock()
    result = wait_for_target(lambda: {0: {0: (0, 99), 1: (0, 50)}}, [pair()], {(0, 0): (90, 90)}, 20, 5, clock=clock, sleep=clock.sleep)
    assert result == ({0: {0: (0, 99), 1: (0, 50)}}, [(0, 0)])
    assert clock.now == 20


def test_a_target_still_moving_at_the_timeout_cannot_be_validated():
    clock = FakeClock()
    ends = iter(range(1000))
    with pytest.raises(ValidationUnavailable, match="still moving after 20 s"):
        wait_for_target(lambda: {0: {0: (0, next(ends)), 1: (0, 50)}}, [pair()], {}, 20, 5, clock=clock, sleep=clock.sleep)


SYNCED = {(0, 0): (90, 90), (0, 1): (40, 40)}


@pytest.mark.parametrize("target_ends, syncs, exact", [
    ({0: 100, 1: 50}, SYNCED, True),
    ({0: 15, 1: 50}, {(0, 0): (90, 5), (0, 1): (40, 40)}, True),  # shifted numbering
    ({0: 101, 1: 50}, SYNCED, False),  # beyond: a duplicate, or a record copied after the snapshot
    ({0: 99, 1: 50}, SYNCED, False),  # short of it
    ({0: 100, 1: 50}, {(0, 0): (90, 90)}, False),  # a partition without a sync cannot be judged
    ({0: 100, 1: 50, 2: 3}, SYNCED, False),  # records in a partition the source lacks
    ({0: 100, 1: 50, 2: 0}, SYNCED, True),
])
def test_at_snapshot(target_ends, syncs, exact):
    assert at_snapshot([pair()], {0: {p: (0, end) for p, end in target_ends.items()}}, syncs) is exact


def test_a_target_its_syncs_put_at_the_snapshot_is_not_waited_for():
    clock = FakeClock()
    result = wait_for_target(lambda: {0: {0: (0, 100), 1: (0, 50)}}, [pair()], SYNCED, 60, 5, clock=clock, sleep=clock.sleep)
    assert result == ({0: {0: (0, 100), 1: (0, 50)}}, []) and clock.now == 0
