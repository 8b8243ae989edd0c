# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The record of a failover's cut-over on a MirrorMaker host, and what the mirrormaker2 role does about it.

The failover role stops MirrorMaker before it commits the translated offsets on the target; from then on the consumers
read the target, and a MirrorMaker started again would copy what is produced on the source after the cut-over into the
topics they read. So the failover role leaves a record on every MirrorMaker host it stopped (a small JSON file whose path
the mirrormaker2 role owns), and the mirrormaker2 role, finding a flow it would run in that record, keeps MirrorMaker
stopped and says why, until it is told to resume (mirrormaker2_resume_after_failover), which removes the flow from the
record.

The record: {"format": 1, "flows": {"<source>-><target>": {"source", "target", "failed_over_at", "groups",
"groups_exclude", "by"}}}. Pure: the roles call these through filters kafkaops.mirror.mm2_cutover_record and
kafkaops.mirror.mm2_cutover_hold.
"""
from __future__ import annotations

FORMAT = 1
RESUME_VARIABLE = "mirrormaker2_resume_after_failover"


def flow_key(source, target):
    return "%s->%s" % (source, target)


def _flows_of(record):
    """The flows of a record read back from the host; anything that is not a record counts as no flow."""
    flows = (record or {}).get("flows") if isinstance(record, dict) else None
    return dict(flows) if isinstance(flows, dict) else {}


def add_cutover(record, source, target, failed_over_at, groups=None, groups_exclude=None, by="failover.yml"):
    """`record` (the one on the host, or None) with the flow source->target failed over at `failed_over_at`.

    Other flows' entries are kept; a flow failed over again gets the new time and groups."""
    if not source or not target:
        raise ValueError("a cut-over needs the source and target aliases, got %r -> %r" % (source, target))
    if not failed_over_at:
        raise ValueError("a cut-over needs its time")
    flows = _flows_of(record)
    flows[flow_key(source, target)] = {
        "source": source, "target": target, "failed_over_at": failed_over_at,
        "groups": list(groups or []), "groups_exclude": list(groups_exclude) if groups_exclude is not None else None, "by": by,
    }
    return {"format": FORMAT, "flows": dict(sorted(flows.items()))}


def _line(key, entry, resume, check_mode):
    when = entry.get("failed_over_at") or "an unrecorded time"
    by = entry.get("by") or "failover.yml"
    if resume:
        verb = "would resume" if check_mode else "resumes"
        return ("flow %s was failed over at %s by %s; %s is true, so MirrorMaker %s mirroring it and the cut-over record of the "
                "flow %s removed" % (key, when, by, RESUME_VARIABLE, verb, "would be" if check_mode else "is"))
    return ("flow %s was failed over at %s by %s; MirrorMaker stays stopped so the cut-over holds; set %s: true to mirror again"
            % (key, when, by, RESUME_VARIABLE))


def hold_plan(record, flows, resume=False, check_mode=False):
    """What the mirrormaker2 role does with `record` (the one on the host, or None) for the flows it would run.

    flows: the role's mirrormaker2_flows (dicts with source, target and optionally enabled=false, which are left out).
    Returns held (the run's flows in the record, "<source>-><target>" in order), hold (MirrorMaker stays stopped: held flows
    and no resume), lines (one message per held flow), record (what stays on the host after this run: without the held
    flows when resuming; other flows' entries are kept) and remove (the file goes: resuming left no flow in it), flows
    (the entries of `record` in effect after this run, by flow) and resumes (the run resumes failed-over flows: the record changes)."""
    recorded = _flows_of(record)
    running = [flow_key(flow["source"], flow["target"]) for flow in flows or [] if flow.get("enabled", True)]
    held = [key for key in dict.fromkeys(running) if key in recorded]
    lines = [_line(key, recorded[key], resume, check_mode) for key in held]
    remaining = {key: entry for key, entry in recorded.items() if not (resume and key in held)}
    resumes = bool(resume and held)
    return {
        "held": held,
        "hold": bool(held) and not resume,
        "lines": lines,
        "flows": remaining,
        "record": {"format": FORMAT, "flows": remaining} if remaining else None,
        "remove": resumes and not remaining,
        "resumes": resumes,
    }
