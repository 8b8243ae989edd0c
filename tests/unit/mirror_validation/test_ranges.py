# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Partitions cut into ranges at MM2's offset syncs, and partitions read again with their residue exempt from the
window, report what the whole partition held at once (window 0) reports: on the issue's cases and on random mirrors.
"""
import random

import pytest

from mirror_validation import comparison
from mirror_validation.errors import ValidationUnavailable
from mirror_validation.job import partition_work
from mirror_validation.partition_match import PartitionMatch
from mirror_validation.slices import SOURCE, TARGET, PartitionWork, Slice, split_work
from mirror_validation.spark_io import RESIDUE, _compare_in_step, compare_works

from tests.support.mirrors import LetterReaders, _records, compare_mirror, count_rows, topic_pair

NAMES = ("source_count", "target_count", "missing", "duplicates", "unexpected", "order_violations", "expired", "pending")


def report(result):
    counts, samples, misplaced, anchors, summaries, _stats = result
    return (count_rows(counts, NAMES), samples, misplaced, anchors,
            {key: summary["first_copies_after"] for key, summary in summaries.items()})


def fifo_pairs(source, target):
    """(source offset, target offset) of each record's first-in first-out copy: true offset syncs for these letters."""
    waiting, pairs = {}, []
    for offset, letter in enumerate(source):
        waiting.setdefault(letter, []).append(offset)
    for offset, letter in enumerate(target):
        if waiting.get(letter):
            pairs.append((waiting[letter].pop(0), offset))
    return pairs


def monotone(pairs):
    kept = []
    for upstream, downstream in sorted(pairs):
        if not kept or (upstream > kept[-1][0] and downstream > kept[-1][1]):
            kept.append((upstream, downstream))
    return kept


def test_a_large_partition_is_cut_at_syncs_that_increase_on_both_sides():
    work = PartitionWork(Slice(SOURCE, 0, "t", 0, 0, 100, False), Slice(TARGET, 0, "p.t", 0, 5, 105, False), 5,
                         ((0, 5), (30, 35), (60, 65), (90, 95)), (10,))
    ranges = split_work(work, 80)
    assert [(part.source.start, part.source.end, part.target.start, part.target.end) for part in ranges] == [
        (0, 30, 5, 35), (30, 60, 35, 65), (60, 100, 65, 105)]
    assert [part.syncs for part in ranges] == [((0, 5),), ((30, 35),), ((60, 65), (90, 95))]
    assert [part.shift for part in ranges] == [5, 5, 5] and all(part.checkpoint_upstreams == (10,) for part in ranges)
    assert split_work(work, 200) == [work]  # small enough
    assert split_work(work._replace(syncs=()), 80) == [work._replace(syncs=())]  # nothing to cut at
    rewound = work._replace(syncs=((0, 5), (30, 35), (60, 30)))  # MirrorMaker started again from an older offset
    assert split_work(rewound, 80) == [rewound]


EDGE = [
    # (name, source, target): 24 records, syncs every 4 offsets where the copy allows, ranges of 8 + 8 offsets
    ("clean", "ABCDEFGHIJKLMNOPQRSTUVWX", "ABCDEFGHIJKLMNOPQRSTUVWX"),
    ("duplicate burst at a range edge", "ABCDEFGHIJKLMNOPQRSTUVWX", "ABCDEFGHEFGHIJKLMNOPQRSTUVWX"),
    ("a record lost at a range edge", "ABCDEFGHIJKLMNOPQRSTUVWX", "ABCDEFGIJKLMNOPQRSTUVWX"),
    ("a record copied into the next range", "ABCDEFGHIJKLMNOPQRSTUVWX", "ABCDEFGIJKHLMNOPQRSTUVWX"),
    ("junk in a later range", "ABCDEFGHIJKLMNOPQRSTUVWX", "ABCDEFGHIJKLMNOPZQRSTUVWX"),
    ("a record of an earlier range copied again late", "ABCDEFGHIJKLMNOPQRSTUVWX", "ABCDEFGHIJKLMNOPQRSTUVWXC"),
    ("identical records in two ranges, the first copy lost", "ABCDAFGHIJKLMNOPQRSTAVWX", "ABCDFGHIJKLMNOPQRSTAVWX"),
]


@pytest.mark.parametrize("window", [0, 1, 2, 100])
@pytest.mark.parametrize("case", EDGE, ids=[case[0] for case in EDGE])
def test_ranges_report_what_the_whole_partition_does(case, window):
    _name, source, target = case
    syncs = {0: monotone(fifo_pairs(source, target))[::4]}
    whole = compare_mirror({0: source}, {0: target}, syncs=syncs, window=0)
    ranges = compare_mirror({0: source}, {0: target}, syncs=syncs, window=window, budget=16)
    assert ranges[5]["partitions_split"] == 1 and ranges[5]["ranges"] >= 2
    assert report(ranges) == report(whole)


def test_the_issues_cases_across_ranges_and_partitions():
    """A record moved to another partition, retention-expired heads on both sides, a partition with no syncs: split
    partitions and whole ones in one comparison."""
    source = {0: "ABCDEFGHIJKLMNOP", 1: "abcdefghijklmnop", 2: "qrstuvwxyz"}
    target = {0: "ABCDEFGHJKLMNOP", 1: "abcdefghijklmnopI", 2: "tuvwxyz"}
    syncs = {0: [(0, 0), (4, 4), (8, 8), (12, 11)], 1: [(2, 0), (6, 4), (10, 8)]}
    begins = dict(source_begin={1: 2}, target_begin={1: 0, 2: 3})
    whole = compare_mirror(source, target, syncs=syncs, window=0, **begins)
    ranges = compare_mirror(source, target, syncs=syncs, window=1, budget=10, **begins)
    assert ranges[5]["partitions_split"] == 2
    assert report(ranges) == report(whole)
    counts, samples, misplaced = report(whole)[:3]
    assert counts == [(0, 16, 15, 1, 0, 0, 0, 0, 0), (1, 16, 17, 0, 0, 1, 0, 0, 0), (2, 10, 7, 0, 0, 0, 0, 3, 0)]
    assert misplaced == {(0, 0): [{"source_offset": 8, "target_partition": 1, "target_offset": 16}]}
    assert samples[(0, 2)] == {"expired_on_target": [0, 1, 2]}


def mutate(rng, letters):
    """A copy of `letters` with MirrorMaker-like faults: losses, redelivered runs, moves, junk."""
    out = list(letters)
    for _fault in range(rng.randint(0, 4)):
        fault = rng.choice(("lose", "redeliver", "move", "junk"))
        if not out:
            break
        at = rng.randrange(len(out))
        if fault == "lose":
            del out[at]
        elif fault == "redeliver":
            out[at:at] = out[max(0, at - rng.randint(1, 6)):at]
        elif fault == "move":
            out.insert(rng.randrange(len(out) + 1), out.pop(at))
        else:
            out.insert(at, rng.choice("0123456789"))
    return "".join(out)


@pytest.mark.parametrize("seed", range(40))
def test_random_mirrors_report_alike_in_ranges_with_any_window(seed):
    rng = random.Random(seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij"
    source = {partition: "".join(rng.choice(alphabet) for _letter in range(rng.randint(10, 40))) for partition in range(2)}
    target = {partition: mutate(rng, text) for partition, text in source.items()}
    syncs = {partition: monotone(fifo_pairs(source[partition], target[partition]))[::rng.randint(2, 5)] for partition in source}
    whole = report(compare_mirror(source, target, syncs=syncs, window=0))
    for window, budget in ((1, 12), (2, 20), (3, 10 ** 9), (5, 16)):
        assert report(compare_mirror(source, target, syncs=syncs, window=window, budget=budget)) == whole, (window, budget)


class PeakMatch(PartitionMatch):
    """A PartitionMatch that keeps the most fingerprints and held runs it had at once."""

    peak = 0

    def _held(self):
        held = (sum(len(queue) for side in self.waiting for queue in side.values()) + len(self.filter.current)
                + len(self.filter.previous) + len(self.filter.exempt_matched) + len(self.held_pairs))
        self.peak = max(self.peak, held)

    def add(self, *args):
        super().add(*args)
        self._held()

    def match_run(self, *args):
        taken = super().match_run(*args)
        self._held()
        return taken


def test_a_partition_read_again_holds_a_window_and_its_residue():
    """20,000 records, 80 of them copied after the rest (MM2's sync says where the copy goes on): the first read
    leaves those that waited past the window as residue, the second holds them and a window of the others, never the
    partition's matched fingerprints."""
    size, window = 20000, 50
    source = ["%05d" % offset for offset in range(size)]
    target = source[:100] + source[180:] + source[100:180]
    pair = topic_pair({0: source}, {0: target})
    work = partition_work(pair, 0, [(0, 0), (180, 100)], ())
    readers = LetterReaders(_records({0: source}, {}), _records({0: target}, {}))
    first = [item for kind, item in compare_works(readers, [work], window, 10) if kind == RESIDUE]
    exempt = frozenset(row[4] for row in first)
    assert 0 < len(exempt) <= 80
    matcher = PeakMatch(window, 10, work.syncs, expected_records=2 * size, exempt=exempt)
    _compare_in_step(readers, work._replace(exempt=exempt), matcher)
    matcher.finish()
    assert matcher.residue == [] and matcher.matched == size and matcher.order_violations == 1
    assert matcher.peak <= 2 * len(exempt) + 4 * window, matcher.peak


def test_a_redelivered_burst_longer_than_the_window_leaves_only_its_copies():
    """MirrorMaker restarted from an old commit: 500 records copied again, ten times the window. The reader takes the
    second copies without waiting for source records, so only they leave the task."""
    size, window = 20000, 50
    source = ["%05d" % offset for offset in range(size)]
    target = source[:1000] + source[500:]
    pair = topic_pair({0: source}, {0: target})
    readers = LetterReaders(_records({0: source}, {}), _records({0: target}, {}))
    residue = [item for kind, item in compare_works(readers, [partition_work(pair, 0, (), ())], window, 10) if kind == RESIDUE]
    assert sorted(row[3] for row in residue) == list(range(1000, 1500)) and {row[2] for row in residue} == {TARGET}


def test_a_partition_that_does_not_settle_is_an_error_that_says_what_to_raise(monkeypatch):
    """Each read again exempts more fingerprints from the window; when the reads run out the job says what to raise
    rather than reporting records as lost."""
    monkeypatch.setattr(comparison, "_READS_AGAIN", 0)
    with pytest.raises(ValidationUnavailable, match=r"^partition 0 of orders \(and 0 more\) could not be settled in 1 reads: .*"
                                                    r"--window-records \(2\).*raise --window-records \(mirror_validation_window_records\)"):
        compare_mirror({0: "ABCDEFGHIJ", 1: "ABCD"}, {0: "DEFGHIJABC", 1: "ABCD"}, window=2)
