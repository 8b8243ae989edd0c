# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a run checked and what it left out, in the words of the reports: per partition the ranges read and why (an
incremental run), per topic the partitions not checked (a bounded run), and the verdict's first words.

A full run checks everything and says nothing more. An incremental run checks everything not validated before and says
by which run and when the rest was. A bounded run is a first look, never a validation of the mirror: its verdict starts
with what it checked of how much, and it lists what it did not.
"""
from __future__ import annotations

FULL, INCREMENTAL, BOUNDED = "full", "incremental", "bounded"


def _range_text(side, start, end):
    return "%s %d-%d" % (side, start, end - 1) if end > start else "%s none new (at %d)" % (side, start)


def partition_text(entry):
    """One line for a partition of an incremental run."""
    checked = entry["checked"]
    ranges = "%s, %s" % (_range_text("source", *entry["source_offsets"]), _range_text("target", *entry["target_offsets"]))
    if checked["how"] == "full":
        text = "p%d: %s checked in full (%s)" % (entry["partition"], ranges, checked["reason"])
    else:
        text = "p%d: %s checked; offsets below source %d and target %d were validated before, last by run %s at %s" % (
            entry["partition"], ranges, checked["validated_source_offset"], checked["validated_target_offset"], checked["validated_by"],
            checked["validated_at"])
    return "; ".join([text] + list(checked["notes"]))


def annotate_incremental(topics, pairs, plans, stored_topics):
    """Add to each partition entry of the report `topics` its "checked" entry, and to each topic its "coverage" lines."""
    names = {pair.source_topic: pair for pair in pairs}
    for topic in topics:
        pair = names[topic["source_topic"]]
        stored_topic = stored_topics.get(topic["source_topic"], {})
        for entry in topic["partitions"]:
            plan = plans[(pair.index, entry["partition"])]
            checked = {"how": plan.how, "notes": list(plan.notes)}
            if plan.how == "full":
                checked["reason"] = plan.reason
            else:
                checked.update(validated_by=stored_topic["run"], validated_at=stored_topic["validated_at"],
                               validated_source_offset=plan.stored["source_offset"], validated_target_offset=plan.stored["target_offset"])
            entry["checked"] = checked
        topic["coverage"] = [partition_text(entry) for entry in topic["partitions"]]


def annotate_bounded(topics, pairs, not_checked):
    """Add to each topic of the report the partitions the sample left out (`not_checked`: {pair index: [partition]})."""
    names = {pair.source_topic: pair for pair in pairs}
    for topic in topics:
        left_out = not_checked.get(names[topic["source_topic"]].index, [])
        topic["not_checked_partitions"] = left_out
        if topic["status"] != "target_missing":
            topic["coverage"] = ["checked partitions %s; NOT checked: %s" % (
                ", ".join(str(entry["partition"]) for entry in topic["partitions"]) or "none",
                "partitions " + ", ".join(str(partition) for partition in left_out) if left_out else "nothing")]


def summary(mode, topics, state_note=None):
    """(the run's "coverage" entry, the words the verdict starts with: empty for a full run)."""
    checked = sum(len(topic["partitions"]) for topic in topics)
    left_out = sum(len(topic.get("not_checked_partitions", ())) for topic in topics)
    entry = {"mode": mode, "complete": mode != BOUNDED, "partitions_checked": checked, "partitions_total": checked + left_out}
    if mode == BOUNDED:
        entry["not_checked"] = [{"source_topic": topic["source_topic"], "partitions": topic["not_checked_partitions"]}
                                for topic in topics if topic.get("not_checked_partitions")]
        return entry, ("bounded: %d of %d partition(s) checked, NOT a full validation (%d partition(s) not checked, listed in the"
                       " report)" % (checked, checked + left_out, left_out))
    if mode == INCREMENTAL:
        hows = [partition["checked"]["how"] for topic in topics for partition in topic["partitions"] if "checked" in partition]
        entry.update(resumed=hows.count("resumed"), full=hows.count("full"))
        if state_note:
            entry["state"] = state_note
        return entry, ("incremental: %d partition(s) checked from the offsets validated before, %d in full"
                       % (entry["resumed"], entry["full"]))
    return entry, ""
