"""Decision tables for consumer-group offset translation and the failover plan (plugins/module_utils/mm2_offsets.py)."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils import mm2_offsets as mo
from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_records import Checkpoint


def cp(upstream, downstream):
    return Checkpoint("app", "primary.orders", 0, upstream, downstream, "")


# (source offset, checkpoint, syncs, expected offset, expected basis)
TRANSLATE_TABLE = [
    # source offset unknown: the checkpoint as is, or nothing
    (None, cp(1500, 1498), None, 1498, "checkpoint"),
    (None, None, None, None, None),
    (None, None, [(0, 0)], None, None),
    # offset-syncs first (translateDownstream): exact, after the sync (+1), before any sync (none)
    (1500, None, [(1000, 990), (1500, 1498)], 1498, "offset_sync"),
    (1510, None, [(1000, 990), (1500, 1498)], 1499, "offset_sync"),
    (1200, None, [(1500, 1498), (1000, 990)], 991, "offset_sync"),
    (999, None, [(1000, 990)], None, None),
    (999, None, [], None, None),
    # no sync covers g, but a checkpoint for exactly g does
    (999, cp(999, 989), [(1000, 990)], 989, "checkpoint"),
    # checkpoints only
    (1500, cp(1500, 1498), None, 1498, "checkpoint"),
    (1520, cp(1500, 1498), None, 1498, "checkpoint_behind"),  # re-read, never skip
    (1400, cp(1500, 1498), None, None, None),  # group rewound after the checkpoint: would skip -> none
    (1400, None, None, None, None),
    (0, cp(0, 0), None, 0, "checkpoint"),
]


@pytest.mark.parametrize("source_offset, checkpoint, syncs, offset, basis", TRANSLATE_TABLE)
def test_translate(source_offset, checkpoint, syncs, offset, basis):
    result = mo.translate(source_offset, checkpoint, syncs)
    assert result.offset == offset
    assert result.basis == basis
    assert result.reason  # always explained
    if offset is not None and source_offset is not None and checkpoint is None:
        assert offset <= source_offset + 10_000


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


@pytest.mark.parametrize("translated, committed, end, active, allow_rewind, action", DECIDE_TABLE)
def test_decide(translated, committed, end, active, allow_rewind, action):
    got, reason = mo.decide(translated, committed, end, active, allow_rewind)
    assert got == action
    assert reason


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
    assert rows[1]["translated_offset"] is None and "no checkpoint and no offset-sync" in rows[1]["reason"]
    assert mo.commits_by_group(rows) == {"a": {("primary.orders", 0): 13}}
    assert mo.diff_of(rows) == {"before": {"a": {"primary.orders:0": None}}, "after": {"a": {"primary.orders:0": 13}}}
    status = {g["group"]: g["status"] for g in mo.summarize(rows)}
    assert status == {"a": mo.COMMIT, "b": mo.REFUSED_ACTIVE, "c": mo.UP_TO_DATE, "d": "incomplete"}


def test_latest_checkpoint_wins_and_groups_filter():
    records = [Checkpoint("app", "primary.t", 0, 1, 1, ""), Checkpoint("app", "primary.t", 0, 9, 8, ""), Checkpoint("other", "primary.t", 0, 3, 3, "")]
    latest = mo.latest_checkpoints(records, mo.compile_patterns(["app"]))
    assert list(latest) == [("app", "primary.t", 0)]
    assert latest[("app", "primary.t", 0)].upstream_offset == 9


def test_bad_pattern_and_option_validation():
    with pytest.raises(mo.OffsetsError, match="not a valid regular expression"):
        mo.compile_patterns(["(unclosed"])
    problems = mo.validate_params(dict(groups=["("], source_alias="primary", offset_syncs=True, offset_syncs_location="source",
                                       verify=True, verify_window=0, read_timeout=0, replication_policy="default",
                                       replication_policy_separator="."))
    text = "; ".join(problems)
    for expected in ("not a valid regular expression", "needs target_alias", "needs the source connection", "verify_window", "read_timeout"):
        assert expected in text
    assert mo.validate_params(dict(groups=[".*"], source_alias="primary", offset_syncs=False, verify=False, verify_window=10,
                                   read_timeout=5, replication_policy="default", replication_policy_separator=".")) == []


FP = {i: mo.fingerprint(b"k%d" % i, b"v%d" % i) for i in range(20)}


@pytest.mark.parametrize("target_fp, source_offset, status, re_read, lost", [
    (FP[10], 10, "exact", 0, 0),
    (FP[7], 10, "re_read", 3, 0),
    (FP[12], 10, "lost", 0, 2),
    ("nope", 10, "unverified", None, None),
])
def test_verify_position(target_fp, source_offset, status, re_read, lost):
    got = mo.verify_position(target_fp, {i: FP[i] for i in range(5, 15)}, source_offset, 50, 60)
    assert (got["status"], got["re_read"], got["lost"]) == (status, re_read, lost)


def test_verify_position_at_end():
    source = {i: FP[i] for i in range(5, 10)}
    assert mo.verify_position(None, source, 10, 40, 40, target_previous=FP[9])["status"] == "at_end"
    assert mo.verify_position(None, source, 10, 40, 40, target_previous=FP[3])["status"] == "unverified"
    assert mo.verify_position(None, {i: FP[i] for i in range(5, 15)}, 10, 40, 40, target_previous=FP[9])["status"] == "unverified"


def test_fingerprint_distinguishes_null_and_empty_and_headers():
    assert mo.fingerprint(None, b"") != mo.fingerprint(b"", b"")
    assert mo.fingerprint(b"a", b"b") != mo.fingerprint(b"ab", b"")
    assert mo.fingerprint(b"a", b"b", [("h", b"1")]) != mo.fingerprint(b"a", b"b")


def test_groups_exclude_like_mirrormaker():
    records = [Checkpoint("app", "primary.t", 0, 1, 1, ""), Checkpoint("console-consumer-42", "primary.t", 0, 3, 3, "")]
    from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_filters import DEFAULT_GROUPS_EXCLUDE
    latest = mo.latest_checkpoints(records, mo.compile_patterns([".*"]), mo.compile_patterns(DEFAULT_GROUPS_EXCLUDE))
    assert [key[0] for key in latest] == ["app"]
