# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a flow whose health wait timed out on its lag is replicating and catching up, or stuck.

A first deployment in front of a large backlog cannot meet the wait's lag limit in its window, however well MirrorMaker
works. The wait's reads tell the two apart:

- catching up: records keep arriving on the target (the remote partitions' end offsets grow) and the lag falls, over the
  second half of the wait, every lagging partition moved during the wait, and nothing but the lag (and the offset syncs of
  partitions still in the backlog) is unmet. The observed rate gives an estimate of when the lag will be gone.
- stuck: anything else - no record copied, a lag that does not fall (the source grows faster than MirrorMaker copies), a
  lagging partition that did not move while others did (a failed task), no heartbeat, a missing remote topic.

Pure: samples come from mm2_status.wait_until_healthy.
"""
from __future__ import annotations

CATCHING_UP, STUCK = "catching_up", "stuck"


def sample(elapsed_s, status):
    """What classify() needs of one read of FlowStatus: totals and per-partition target ends and lags. For MirrorMaker 1
    (_mirror.mm1_status), whose producer spreads a source partition over the target's partitions, what reached the target
    is what its group committed."""
    ends, lags = {}, {}
    for p in status["partitions"]:
        key = "%s-%d" % (p["topic"], p["partition"])
        ends[key] = p["committed_offset"] if "committed_offset" in p else p.get("target_end_offset")
        lags[key] = p["lag"]
    return {"elapsed_s": float(elapsed_s), "lag_total": int(status["lag_total"]),
            "target_end_total": sum(end for end in ends.values() if end is not None), "target_ends": ends, "lags": lags}


def _duration(seconds):
    seconds = int(round(seconds))
    if seconds < 120:
        return "%d s" % seconds
    if seconds < 2 * 3600:
        return "%d min" % round(seconds / 60.0)
    if seconds < 2 * 86400:
        return "%.1f h" % (seconds / 3600.0)
    return "%.1f days" % (seconds / 86400.0)


def classify(samples, unmet, max_lag):
    """{verdict, reason, copied_per_s, net_catch_up_per_s, lag_total, eta_s, eta, stalled} from the wait's samples (oldest first)
    and the last read's unmet conditions by kind (mm2_status.unmet_by_condition: heartbeats, offset_syncs, offset_syncs_backlog
    (only partitions that still lag have no offset sync: part of the backlog), lag, remote_topics, consumer_group)."""
    last = samples[-1] if samples else None
    result = {"verdict": STUCK, "reason": "", "copied_per_s": 0.0, "net_catch_up_per_s": 0.0,
              "lag_total": last["lag_total"] if last else None, "eta_s": None, "eta": None, "stalled": []}
    blocking = {kind: message for kind, message in unmet.items() if kind not in ("lag", "offset_syncs_backlog")}
    if blocking:
        result["reason"] = "not a lag that is being worked off: " + "; ".join(blocking.values())
        return result
    if len(samples) < 2 or last["elapsed_s"] <= samples[0]["elapsed_s"]:
        result["reason"] = "a single read: progress cannot be told (raise mirrormaker2_health_timeout above the poll interval)"
        return result
    first = samples[0]
    # The second half of the wait: progress there says MirrorMaker still copies now, not only when it started.
    middle = last["elapsed_s"] / 2.0
    base = [s for s in samples[:-1] if s["elapsed_s"] <= middle][-1:] or [first]
    base = base[0]
    seconds = last["elapsed_s"] - base["elapsed_s"]
    copied = last["target_end_total"] - base["target_end_total"]
    fallen = base["lag_total"] - last["lag_total"]
    result["copied_per_s"] = round(copied / seconds, 1)
    result["net_catch_up_per_s"] = round(fallen / seconds, 1)
    stalled = sorted(key for key, lag in last["lags"].items()
                     if lag > max_lag and first["target_ends"].get(key) is not None
                     and last["target_ends"].get(key) == first["target_ends"].get(key))
    result["stalled"] = stalled
    window = "in the last %.0f s of the wait" % seconds
    if copied <= 0:
        result["reason"] = "no record reached the target %s (lag %d records)" % (window, last["lag_total"])
    elif fallen <= 0:
        result["reason"] = ("%d records reached the target %s but the lag did not fall (%d -> %d records): the source grows at least as "
                            "fast as MirrorMaker copies" % (copied, window, base["lag_total"], last["lag_total"]))
    elif stalled:
        result["reason"] = ("%d lagging partition(s) copied nothing during the whole wait while others moved: %s%s"
                            % (len(stalled), ", ".join(stalled[:10]), " ..." if len(stalled) > 10 else ""))
    else:
        result["verdict"] = CATCHING_UP
        result["eta_s"] = round(last["lag_total"] / (fallen / seconds), 1)
        result["eta"] = _duration(result["eta_s"])
        result["reason"] = ("replicating and catching up: %d records copied %s (%.1f records/s), lag %d -> %d records (%.1f records/s "
                            "net); at that rate it has caught up in about %s"
                            % (copied, window, copied / seconds, base["lag_total"], last["lag_total"], fallen / seconds, result["eta"]))
    return result
