# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failover plan of a MirrorMaker 1 flow (plugins/module_utils/_mirror/mm1_offsets.py): copies simulated as MirrorMaker 1
makes them (partitioned again by key, re-copies after a kill), and each plan checked by a consumer of the test's own that
reads every target partition from the committed position: nothing the group has not consumed is skipped, and what it reads
again is what the plan says."""
from __future__ import annotations

import random
import zlib

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror import mm1_offsets as mm1
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror import offsets_plan as plan
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.failover_preview import fingerprint


def record(key, index):
    return fingerprint(key.encode(), f"{key}-{index}".encode())


def source_topic(partitions, keys, per_key):
    """{partition: [(offset, fingerprint)]}, keys spread over `partitions` as a producer's partitioner does; and
    {fingerprint: key}."""
    topic, key_of = {p: [] for p in range(partitions)}, {}
    for index in range(per_key):
        for key in keys:
            digest = record(key, index)
            key_of[digest] = key
            part = topic[zlib.crc32(key.encode()) % partitions]
            part.append((len(part), digest))
    return topic, key_of


def mirror(source, key_of, partitions, recopy=()):
    """MirrorMaker 1's copy: the source partitions interleaved, each record into the target partition of its key (another
    hash than the source's); `recopy`: (source partition, from offset, to offset) copied a second time after the first pass,
    as after a kill -9 that lost MirrorMaker 1's last commits."""
    target = {p: [] for p in range(partitions)}
    order = []
    longest = max(len(records) for records in source.values())
    for offset in range(longest):
        order.extend(source[p][offset][1] for p in sorted(source) if offset < len(source[p]))
    for part, first, last in recopy:
        order.extend(digest for offset, digest in source[part] if first <= offset < last)
    for digest in order:
        part = target[zlib.adler32(key_of[digest].encode()) % partitions]
        part.append((len(part), digest))
    return {p: (0, len(records), records) for p, records in target.items()}


def plan_of(source, target, committed, target_committed=None, active=False, allow_rewind=False):
    begins = {p: 0 for p in source}
    return mm1.plan_topic("app", "orders", committed, begins, source, target, target_committed or {}, active, allow_rewind)


def consume(target, rows):
    """What a consumer of the test's own reads on the target from each row's commit offset: [fingerprint]."""
    read = []
    for row in rows:
        _begin, _end, records = target[row["partition"]]
        read.extend(digest for offset, digest in records if offset >= row["commit_offset"])
    return read


def check_never_skips(source, target, committed, rows):
    """Every source record the group has not consumed is read on the target; the rows' re_read is what it reads again."""
    unconsumed = {digest for p, records in source.items() for offset, digest in records if offset >= committed.get(p, 0)}
    consumed = {digest for p, records in source.items() for offset, digest in records if offset < committed.get(p, 0)}
    read = consume(target, rows)
    assert unconsumed <= set(read), "a record the group has not consumed is skipped"
    assert sum(row["re_read"] for row in rows) == sum(1 for digest in read if digest in consumed)


def test_partitions_kept_resume_where_the_group_stopped():
    source, key_of = source_topic(3, [f"k{n}" for n in range(9)], 10)
    # The same partitioning on the target: each record in its partition number.
    target = {p: (0, len(records), list(records)) for p, records in source.items()}
    committed = {0: 4, 1: len(source[1]), 2: 0}
    rows = plan_of(source, target, committed)
    assert [row["commit_offset"] for row in rows] == [4, len(source[1]), 0]
    assert {row["partitioning"] for row in rows} == {"kept"}
    assert [row["preview"]["status"] for row in rows] == ["exact", "at_end", "exact"]
    assert all(row["action"] == plan.COMMIT and row["re_read"] == 0 for row in rows)
    assert rows[0]["preview"]["re_read"] == 4  # from the floor, the start of the partition
    assert "the partition's start" in rows[0]["reason"]
    check_never_skips(source, target, committed, rows)


@pytest.mark.parametrize("seed", range(12))
def test_partitions_differ_never_skip_and_go_as_far_as_the_records_prove(seed):
    rng = random.Random(seed)
    source, key_of = source_topic(2, [f"key-{n}" for n in range(rng.randint(3, 12))], rng.randint(2, 15))
    committed = {p: rng.randint(0, len(records)) for p, records in source.items()}
    recopy = [(p, max(0, committed[p] - rng.randint(0, 6)), min(len(source[p]), committed[p] + rng.randint(0, 6)))
              for p in source if rng.random() < 0.5]
    target = mirror(source, key_of, 5, recopy)
    rows = plan_of(source, target, committed)
    assert len(rows) == 5 and {row["partitioning"] for row in rows} == {"by_key"}
    assert all(row["action"] in (plan.COMMIT, plan.UP_TO_DATE) for row in rows)
    check_never_skips(source, target, committed, rows)
    # Maximal: the record at each position is the copy of one the group has not consumed (the search could go no further).
    unconsumed = {digest for p, records in source.items() for offset, digest in records if offset >= committed[p]}
    for row in rows:
        _begin, end, records = target[row["partition"]]
        if row["commit_offset"] < end:
            assert records[row["commit_offset"]][1] in unconsumed


def test_re_copies_of_consumed_records_are_passed_over():
    source, key_of = source_topic(1, ["a"], 6)
    target = mirror(source, key_of, 1, recopy=[(0, 2, 4)])  # records 2 and 3 copied twice, after record 5
    rows = plan_of(source, target, {0: 4})
    (row,) = rows
    # a0..a5 then a2 a3 again: the group consumed a0..a3, so it resumes at a4 (offset 4) and reads the two re-copies again.
    assert row["commit_offset"] == 4 and row["re_read"] == 2 and row["preview"]["status"] == "re_read"
    check_never_skips(source, target, {0: 4}, rows)


def test_a_re_copy_of_an_unconsumed_record_stops_at_its_first_copy():
    source, key_of = source_topic(1, ["a"], 6)
    target = mirror(source, key_of, 1, recopy=[(0, 3, 6)])
    (row,) = plan_of(source, target, {0: 2})
    assert row["commit_offset"] == 2 and row["re_read"] == 0


def test_nothing_proven_resumes_at_the_start_and_counts_what_is_read_again():
    source, key_of = source_topic(1, ["a"], 4)
    _b, _e, records = mirror(source, key_of, 1)[0]
    stranger = fingerprint(b"x", b"not from the source")
    target = {0: (0, 5, [(0, stranger)] + [(offset + 1, digest) for offset, digest in records])}
    (row,) = plan_of(source, target, {0: 3})
    assert row["commit_offset"] == 0 and row["re_read"] == 3 and row["preview"]["unknown"] == 1
    assert "matches no source record" in row["preview"]["detail"] and "the start of the partition" in row["preview"]["detail"]
    assert "proven exact" in row["reason"]


def test_a_fingerprint_shared_by_a_consumed_and_an_unconsumed_record_stops_the_search():
    same = fingerprint(b"k", b"v")
    source = {0: [(0, same), (1, same), (2, record("k", 9))]}
    target = {0: (0, 3, list(source[0]))}
    (row,) = plan_of(source, target, {0: 1})
    assert row["commit_offset"] == 0 and row["re_read"] == 0
    assert "consumed and of an unconsumed" in row["preview"]["detail"]


def test_an_unconsumed_record_missing_on_the_target_holds_every_partition():
    source, key_of = source_topic(2, ["a", "b", "c"], 4)
    target = mirror(source, key_of, 3)
    dropped = max(source.values(), key=len)[-1][1]
    target = {p: (b, e, [(o, d) for o, d in records if d != dropped]) for p, (b, e, records) in target.items()}
    rows = plan_of(source, target, {0: 1, 1: 1})
    assert {row["action"] for row in rows} == {plan.TARGET_BEHIND}
    assert plan.commits_by_group(rows) == {}


def test_a_partition_without_a_commit_counts_as_not_consumed():
    source, key_of = source_topic(2, ["a", "b", "c", "d"], 3)
    target = mirror(source, key_of, 3)
    rows = plan_of(source, target, {0: len(source[0])})  # nothing committed for source partition 1
    check_never_skips(source, target, {0: len(source[0])}, rows)
    # Each target partition resumes at its first copy of a record of source partition 1 (or at its end without one); the
    # records of partition 0's keys copied after it are read again: keys interleave in a target partition.
    pending = {digest for _offset, digest in source[1]}
    for row in rows:
        _begin, end, records = target[row["partition"]]
        assert row["commit_offset"] == next((offset for offset, digest in records if digest in pending), end)


def test_topic_missing_on_the_target():
    source, _key_of = source_topic(2, ["a"], 2)
    rows = plan_of(source, None, {0: 1})
    assert [row["action"] for row in rows] == [plan.NO_TRANSLATION, plan.NO_TRANSLATION]
    assert "does not exist on the target" in rows[0]["reason"]


@pytest.mark.parametrize("target_committed, active, allow_rewind, action", [
    ({0: 2}, False, False, plan.UP_TO_DATE),
    ({0: 3}, False, False, plan.WOULD_REWIND),
    ({0: 3}, False, True, plan.COMMIT),
    ({0: 1}, True, False, plan.REFUSED_ACTIVE),
    ({}, False, False, plan.COMMIT),
])
def test_the_refusals_of_mirrormaker_2s_failover(target_committed, active, allow_rewind, action):
    source, key_of = source_topic(1, ["a"], 4)
    target = mirror(source, key_of, 1)
    (row,) = plan_of(source, target, {0: 2}, target_committed, active, allow_rewind)
    assert row["action"] == action and row["commit_offset"] == 2


def test_option_problems():
    params = dict(groups=[".*"], groups_exclude=None, mirrormaker1_group="mm1", offset_syncs=True, source=None, verify=False,
                  verify_window=200, read_timeout=60, source_alias="primary", target_alias="secondary",
                  replication_policy="default", replication_policy_separator=".", mirrormaker_version=None)
    problems = plan.option_problems(params)
    assert any("needs the source connection" in problem for problem in problems)
    assert any("MirrorMaker 1 writes no offset syncs" in problem for problem in problems)
    assert not plan.option_problems(dict(params, offset_syncs=False, source={"bootstrap_servers": ["h:9092"]}))
