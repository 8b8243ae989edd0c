# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health wait's verdict when it ends over its lag limit: replicating and catching up, or stuck."""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.catch_up import CATCHING_UP, STUCK, classify, sample
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import unmet_by_condition, wait_until_healthy

SOURCE_END = 100_000


def flow(ends, source_end=SOURCE_END, sync=True, emitted=1.0):
    """A FlowStatus read: one partition per target end offset, each with SOURCE_END records on the source."""
    partitions = [{"topic": "orders", "partition": n, "target_end_offset": end, "lag": source_end - (end or 0), "has_records": True,
                   "last_offset_sync": {"upstream": 1, "downstream": 1} if sync and end else None} for n, end in enumerate(ends)]
    lags = [p["lag"] for p in partitions]
    return {"flow": "primary->secondary", "partitions": partitions, "lag_total": sum(lags), "lag_max": max(lags),
            "heartbeats": {"emitted_age_s": emitted, "replicated_age_s": None}, "problems": []}


def run(reads, max_lag=1000, timeout_s=20, interval_s=5):
    """The wait over `reads` (FlowStatus results, one per poll) on a fake clock, then the verdict."""
    reads = iter(reads)
    now, samples = [0.0], []
    status, unmet, _progress = wait_until_healthy(lambda: next(reads), ["heartbeats", "offset_syncs", "lag"], max_lag, 60, timeout_s, interval_s,
                                                  clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s), samples=samples)
    assert unmet, "the wait should have timed out"
    return classify(samples, unmet_by_condition(status, ["heartbeats", "offset_syncs", "lag"], max_lag, 60), max_lag)


def test_records_moving_and_lag_falling_is_catching_up_with_an_estimate():
    # Two partitions, 1,000 records/s each reach the target: 2,000 records/s, 5 reads 5 s apart.
    verdict = run([flow([5000 * k, 5000 * k]) for k in range(5)])
    assert verdict["verdict"] == CATCHING_UP
    # Second half of the 20 s wait: from the read at 10 s (20,000 copied) to 20 s (40,000).
    assert verdict["copied_per_s"] == 2000.0 and verdict["net_catch_up_per_s"] == 2000.0
    assert verdict["lag_total"] == 2 * (SOURCE_END - 20000)
    assert verdict["eta_s"] == 80.0 and verdict["eta"] == "80 s"
    assert "replicating and catching up" in verdict["reason"] and "about 80 s" in verdict["reason"]


def test_a_source_still_written_counts_in_the_net_rate():
    # The target gains 3,000 per 5 s, the source 1,000 per 5 s: the lag falls 2,000 per 5 s (400/s).
    reads = [flow([3000 * k], source_end=SOURCE_END + 1000 * k) for k in range(5)]
    verdict = run(reads)
    assert verdict["verdict"] == CATCHING_UP and verdict["copied_per_s"] == 600.0 and verdict["net_catch_up_per_s"] == 400.0
    assert verdict["eta_s"] == round((SOURCE_END + 4000 - 12000) / 400.0, 1)


def test_long_estimates_read_in_hours_and_days():
    slow = run([flow([10 * k], source_end=10_000_000) for k in range(5)])
    assert slow["verdict"] == CATCHING_UP and slow["eta"].endswith("days")


def test_nothing_copied_is_stuck():
    verdict = run([flow([20000]) for _poll in range(5)])
    assert verdict["verdict"] == STUCK and verdict["eta_s"] is None
    assert verdict["reason"].startswith("no record reached the target in the last 10 s of the wait (lag 80000 records)")


def test_copying_that_stopped_halfway_is_stuck():
    # Moving in the first half, nothing in the second: MirrorMaker died or hangs now.
    verdict = run([flow([0]), flow([5000]), flow([10000]), flow([10000]), flow([10000])])
    assert verdict["verdict"] == STUCK and "no record reached the target" in verdict["reason"]


def test_a_source_growing_faster_than_the_copy_is_stuck():
    verdict = run([flow([1000 * k], source_end=SOURCE_END + 2000 * k) for k in range(5)])
    assert verdict["verdict"] == STUCK and "the lag did not fall" in verdict["reason"] and "grows at least as fast" in verdict["reason"]


def test_a_partition_that_never_moves_while_others_do_is_stuck_and_named():
    verdict = run([flow([5000 * k, 5000 * k, 7]) for k in range(5)])
    assert verdict["verdict"] == STUCK and verdict["stalled"] == ["orders-2"]
    assert "1 lagging partition(s) copied nothing during the whole wait while others moved: orders-2" in verdict["reason"]


def test_no_heartbeat_is_stuck_whatever_moves():
    verdict = run([flow([5000 * k], emitted=None) for k in range(5)])
    assert verdict["verdict"] == STUCK and "no heartbeat from primary->secondary" in verdict["reason"]


def test_partitions_without_offset_sync_that_still_lag_are_part_of_the_backlog():
    # Partition 1 has not been reached yet at the first read (no sync, nothing copied), then moves.
    reads = [flow([5000 * k, 5000 * k if k else 0], sync=k > 0) for k in range(5)]
    reads[0]["partitions"][1]["last_offset_sync"] = None
    assert run(reads)["verdict"] == CATCHING_UP
    unmet = unmet_by_condition(flow([5000, 0]), ["offset_syncs", "lag"], 1000, 60)
    assert set(unmet) == {"offset_syncs_backlog", "lag"}


def test_a_caught_up_partition_without_offset_sync_is_not_backlog():
    status = flow([SOURCE_END, 5000])
    status["partitions"][0]["last_offset_sync"] = None
    assert "offset_syncs" in unmet_by_condition(status, ["offset_syncs", "lag"], 1000, 60)


def test_records_copied_without_an_offset_syncs_topic_say_the_topic_is_missing():
    """CI (newest-release lab): every record copied, heartbeats fresh, no offset sync for 480 s. A MirrorSourceConnector that
    could not create the offset-syncs topic when it started writes none; the wait names the topic."""
    status = flow([SOURCE_END, SOURCE_END], sync=False)
    status.update(offset_syncs_topic="mm2-offset-syncs.secondary.internal", offset_syncs_topic_exists=False)
    unmet = unmet_by_condition(status, ["heartbeats", "offset_syncs", "lag"], 1000, 60)
    assert list(unmet) == ["offset_syncs"], unmet
    assert unmet["offset_syncs"].startswith("no offset sync yet for 2 partition(s) with records: orders-0, orders-1; the offset-syncs "
                                            "topic mm2-offset-syncs.secondary.internal does not exist"), unmet
    status["offset_syncs_topic_exists"] = True
    assert "does not exist" not in unmet_by_condition(status, ["offset_syncs"], 1000, 60)["offset_syncs"]


def test_a_missing_remote_topic_is_stuck():
    reads = [flow([5000 * k]) for k in range(5)]
    reads[-1]["problems"] = ["remote topic primary.new (of new) does not exist on secondary"]
    verdict = run(reads)
    assert verdict["verdict"] == STUCK and "primary.new" in verdict["reason"]


def test_one_read_tells_nothing():
    verdict = classify([sample(0.0, flow([10]))], {"lag": "1 partition(s) lag"}, 1000)
    assert verdict["verdict"] == STUCK and "a single read" in verdict["reason"]
    assert classify([], {"lag": "x"}, 1000)["verdict"] == STUCK
