# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decision tables of the failover plan (plugins/module_utils/_mirror/offsets_plan.py)."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror import offsets_plan as mo
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.offset_translation import parse_version
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import DEFAULT_GROUPS_EXCLUDE, compile_patterns
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint


def cp(upstream, downstream):
    return Checkpoint("app", "primary.orders", 0, upstream, downstream, "")


# (translated, target committed, target end, active, allow_rewind, action)
DECIDE_TABLE = [
    (None, None, 10, False, False, mo.NO_TRANSLATION),
    (None, 5, 10, True, True, mo.NO_TRANSLATION),
    (5, None, None, False, False, mo.NO_TRANSLATION),  # topic missing on the target
    (11, None, 10, False, False, mo.TARGET_BEHIND),
    (10, None, 10, False, False, mo.COMMIT),  # position at the end is fine
    (5, None, 10, False, False, mo.COMMIT),
    (5, 3, 10, False, False, mo.COMMIT),  # forward
    (5, 5, 10, False, False, mo.UP_TO_DATE),
    (5, 5, 10, True, False, mo.UP_TO_DATE),  # nothing to change even if active
    (5, 7, 10, False, False, mo.WOULD_REWIND),
    (5, 7, 10, False, True, mo.COMMIT),
    (5, 7, 10, True, True, mo.REFUSED_ACTIVE),
    (5, None, 10, True, False, mo.REFUSED_ACTIVE),
    (5, 3, 10, True, False, mo.REFUSED_ACTIVE),
]
# A preview that found skipped records wins over everything but no translation / target behind.
SKIP_TABLE = [
    (5, None, 10, False, False, 2, mo.WOULD_SKIP),
    (5, 5, 10, False, False, 1, mo.WOULD_SKIP),
    (11, None, 10, False, False, 3, mo.TARGET_BEHIND),
    (5, None, 10, True, False, 0, mo.REFUSED_ACTIVE),
]


def test_decide_with_records_missing_on_the_target():
    action, reason = mo.decide(5, None, 10, False, False, skipped=0, missing=4)
    assert action == mo.TARGET_BEHIND and "4 record(s)" in reason and "transaction markers" in reason


@pytest.mark.parametrize("translated, committed, end, active, allow_rewind, action", DECIDE_TABLE)
def test_decide(translated, committed, end, active, allow_rewind, action):
    got, reason = mo.decide(translated, committed, end, active, allow_rewind)
    assert got == action
    assert reason


@pytest.mark.parametrize("translated, committed, end, active, allow_rewind, skipped, action", SKIP_TABLE)
def test_decide_with_skipped_records(translated, committed, end, active, allow_rewind, skipped, action):
    assert mo.decide(translated, committed, end, active, allow_rewind, skipped)[0] == action


def _row(group="app", partition=0, **kwargs):
    base = dict(group=group, topic="primary.orders", source_topic="orders", partition=partition, source_offset=None,
                checkpoint=None, syncs=None, target_committed=None, target_end=100, active=False)
    base.update(kwargs)
    return base


def test_plan_summary_commits_and_diff():
    rows = mo.plan_offsets([
        _row("a", 0, source_offset=20, syncs=[(10, 12)]),
        _row("a", 1, source_offset=20, syncs=[(30, 40)]),  # no sync at or before 20
        _row("b", 0, checkpoint=cp(5, 6), active=True),
        _row("c", 0, checkpoint=cp(5, 6), target_committed=6),
        _row("d", 0, checkpoint=cp(5, 6), target_committed=9),
    ])
    actions = {(r["group"], r["partition"]): r["action"] for r in rows}
    assert actions == {("a", 0): mo.COMMIT, ("a", 1): mo.NO_TRANSLATION, ("b", 0): mo.REFUSED_ACTIVE,
                       ("c", 0): mo.UP_TO_DATE, ("d", 0): mo.WOULD_REWIND}
    assert rows[0]["translated_offset"] == 13
    assert rows[1]["translated_offset"] is None and "no offset sync translates source offset 20" in rows[1]["reason"]
    assert mo.commits_by_group(rows) == {"a": {("primary.orders", 0): 13}}
    assert mo.diff_of(rows) == {"before": {"a": {"primary.orders:0": None}}, "after": {"a": {"primary.orders:0": 13}}}
    status = {g["group"]: g["status"] for g in mo.summarize(rows)}
    assert status == {"a": mo.COMMIT, "b": mo.REFUSED_ACTIVE, "c": mo.UP_TO_DATE, "d": "incomplete"}


def test_latest_checkpoint_wins_and_groups_filter():
    records = [Checkpoint("app", "primary.t", 0, 1, 1, ""), Checkpoint("app", "primary.t", 0, 9, 8, ""), Checkpoint("other", "primary.t", 0, 3, 3, "")]
    latest = mo.latest_checkpoints(records, compile_patterns(["app"]))
    assert list(latest) == [("app", "primary.t", 0)]
    assert latest[("app", "primary.t", 0)].upstream_offset == 9


def test_plan_follows_the_release():
    """2.4.1 keeps the latest sync only (d + (g - u)); unknown release: the 3.4.1+ rule (d + 1)."""
    row = _row("a", 0, source_offset=93, syncs=[(0, 0)])
    assert mo.plan_offsets([row], version=parse_version("2.4.1"))[0]["translated_offset"] == 93
    assert mo.plan_offsets([row])[0]["translated_offset"] == 1


def test_a_group_with_a_skipping_partition_is_not_committed():
    rows = mo.plan_offsets([_row("a", 0, source_offset=20, syncs=[(10, 12)]), _row("a", 1, source_offset=20, syncs=[(10, 12)]),
                            _row("b", 0, source_offset=20, syncs=[(10, 12)])])
    mo.decide_row(rows[1], allow_rewind=False, skipped=4)
    assert rows[1]["action"] == mo.WOULD_SKIP and "skip 4 record(s)" in rows[1]["reason"]
    assert mo.commits_by_group(rows) == {"b": {("primary.orders", 0): 13}}
    assert mo.diff_of(rows)["after"] == {"b": {"primary.orders:0": 13}}
    assert {g["group"]: g["status"] for g in mo.summarize(rows)} == {"a": mo.WOULD_SKIP, "b": mo.COMMIT}


def test_option_problems():
    problems = mo.option_problems(dict(groups=["("], source_alias="primary", offset_syncs=True, offset_syncs_topic_location="source",
                                       verify=True, verify_window=0, read_timeout=0, replication_policy="default",
                                       replication_policy_separator=".", mirrormaker_version="newest"))
    text = "; ".join(problems)
    for expected in ("groups: '(' is not a regular expression", "needs the source connection", "offset_syncs needs target_alias",
                     "verify needs the source connection", "verify_window", "read_timeout",
                     "mirrormaker_version: 'newest' is not a Kafka version"):
        assert expected in text
    assert mo.option_problems(dict(groups=[".*"], source_alias="primary", offset_syncs=False, verify=False, verify_window=10,
                                   read_timeout=5, replication_policy="default", replication_policy_separator=".",
                                   mirrormaker_version="2.4.1")) == []
    # KIP-716: the offset syncs on the target need MirrorMaker of Kafka 3.0+ (_mm2.naming.offset_syncs_cluster_alias)
    old = mo.option_problems(dict(groups=[".*"], source_alias="primary", target_alias="secondary", offset_syncs=True,
                                  offset_syncs_topic_location="target", verify=False, verify_window=10, read_timeout=5,
                                  replication_policy="default", replication_policy_separator=".", mirrormaker_version="2.4.1"))
    assert len(old) == 1 and "needs MirrorMaker 2 of Kafka 3.0 or later" in old[0]


def test_groups_exclude_like_mirrormaker():
    records = [Checkpoint("app", "primary.t", 0, 1, 1, ""), Checkpoint("console-consumer-42", "primary.t", 0, 3, 3, "")]
    latest = mo.latest_checkpoints(records, compile_patterns([".*"]), compile_patterns(DEFAULT_GROUPS_EXCLUDE))
    assert [key[0] for key in latest] == ["app"]


def test_a_proven_exact_position_is_committed_and_found_up_to_date_afterwards():
    row = mo.plan_offsets([_row("a", 0, source_offset=20, syncs=[(10, 12)])])[0]
    assert (row["translated_offset"], row["commit_offset"]) == (13, 13)
    row["exact_offset"] = 22
    mo.decide_row(row, allow_rewind=False)
    assert (row["action"], row["commit_offset"]) == (mo.COMMIT, 22) and "exact; MirrorMaker's translation: 13" in row["reason"]
    assert mo.commits_by_group([row]) == {"a": {("primary.orders", 0): 22}}
    assert mo.diff_of([row])["after"] == {"a": {"primary.orders:0": 22}}
    # The second run: the group is at the exact offset, which is ahead of the translation but no rewind.
    again = mo.plan_offsets([_row("a", 0, source_offset=20, syncs=[(10, 12)], target_committed=22)])[0]
    assert again["action"] == mo.WOULD_REWIND
    again["exact_offset"] = 22
    mo.decide_row(again, allow_rewind=False)
    assert again["action"] == mo.UP_TO_DATE and again["reason"] == "the target group is already at the exact offset"
    assert mo.commits_by_group([again]) == {}


def test_a_translation_proven_exact_says_so():
    row = mo.plan_offsets([_row("a", 0, source_offset=20, syncs=[(10, 12)])])[0]
    row["exact_offset"] = 13
    mo.decide_row(row, allow_rewind=False)
    assert (row["action"], row["commit_offset"]) == (mo.COMMIT, 13)
    assert row["reason"] == "commit 13 (MirrorMaker's translation, proven exact) (no committed offset yet)"
