# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Assemble the JSON report from the per-partition aggregates, and decide pass/fail."""
from __future__ import annotations

PASSED, DEFECTS, UNAVAILABLE = 0, 1, 2

COUNT_FIELDS = ("source_count", "target_count", "missing", "pending", "duplicates", "unexpected", "order_violations", "expired",
                "anchor_mismatches", "checkpoint_violations")
# Defects whatever their number; duplicates are judged against the ratio threshold per topic.
ALWAYS_DEFECTS = ("missing", "unexpected", "order_violations", "anchor_mismatches", "checkpoint_violations")
SAMPLE_KINDS = {
    "missing": "missing",
    "pending": "pending",
    "duplicate": "duplicates",
    "unexpected": "unexpected",
    "order_violation": "order_violations",
    "expired": "expired",
    "expired_on_target": "expired_on_target",
}


def _partition_entry(pair, partition, counts, samples, misplaced, anchors, checkpoint_violations):
    source_begin, source_end = pair.source_offsets.get(partition, (0, 0))
    target_begin, target_end = pair.target_offsets.get(partition, (0, 0))
    entry = {"partition": partition, "source_offsets": [source_begin, source_end], "target_offsets": [target_begin, target_end]}
    for name in ("source_count", "target_count", "missing", "pending", "duplicates", "unexpected", "order_violations", "expired"):
        entry[name] = int(counts.get(name, 0))
    entry["target_behind"] = partition in pair.target_behind
    entry["anchors_checked"] = int(anchors.get("anchors_checked", 0))
    entry["anchor_mismatches"] = int(anchors.get("anchor_mismatches", 0))
    entry["checkpoint_violations"] = checkpoint_violations
    entry["samples"] = {SAMPLE_KINDS[kind]: offsets for kind, offsets in sorted(samples.items())}
    if anchors.get("mismatch_samples"):
        entry["samples"]["anchor_mismatches"] = anchors["mismatch_samples"]
    if misplaced:
        entry["samples"]["misplaced"] = misplaced
    return entry


def topic_entry(pair, counts, samples, misplaced, anchors, checkpoint_violations, max_duplicate_ratio):
    """One topic of the report; the arguments other than `pair` are keyed by partition."""
    if not pair.target_exists:
        return {
            "source_topic": pair.source_topic,
            "target_topic": pair.target_topic,
            "status": "target_missing",
            "error": "target topic %s does not exist; check MirrorMaker 2's topics filter and its log" % pair.target_topic,
            "totals": {},
            "partitions": [],
        }
    partitions = [
        _partition_entry(pair, partition, counts.get(partition, {}), samples.get(partition, {}), misplaced.get(partition, []),
                         anchors.get(partition, {}), checkpoint_violations.get(partition, 0))
        for partition in sorted(set(pair.source_offsets) | set(pair.target_offsets))
    ]
    totals = {name: sum(entry[name] for entry in partitions) for name in COUNT_FIELDS}
    totals["duplicate_ratio"] = totals["duplicates"] / totals["source_count"] if totals["source_count"] else 0.0
    duplicates_exceed = totals["duplicates"] > 0 and totals["duplicate_ratio"] > max_duplicate_ratio
    for entry in partitions:
        entry["defects"] = [name for name in ALWAYS_DEFECTS if entry[name]]
        if duplicates_exceed and entry["duplicates"]:
            entry["defects"].append("duplicates")
    defective = any(entry["defects"] for entry in partitions)
    return {
        "source_topic": pair.source_topic,
        "target_topic": pair.target_topic,
        # behind: no defect, but source records after the last copied one never reached the target while the job waited
        "status": "defects" if defective else "behind" if totals["pending"] else "passed",
        "fingerprint_includes_timestamp": pair.with_timestamp,
        "totals": totals,
        "partitions": partitions,
    }


def exit_code(topics, error=None):
    """1 when any defect was found (proven broken), else 2 when something could not be validated, else 0."""
    if any(topic["status"] == "defects" for topic in topics):
        return DEFECTS
    if error or any(topic["status"] in ("target_missing", "behind") for topic in topics):
        return UNAVAILABLE
    return PASSED


def summary_message(topics, error=None):
    """One line a person reads first."""
    if error and not topics:
        return "could not validate: %s" % error
    defective = [t for t in topics if t["status"] == "defects"]
    missing_targets = [t["target_topic"] for t in topics if t["status"] == "target_missing"]
    pending = sum(t["totals"].get("pending", 0) for t in topics)
    partitions = sum(len(t["partitions"]) for t in topics)
    parts = ["%d topic(s), %d partition(s) compared" % (len(topics), partitions)]
    if defective:
        counts = {}
        for topic in defective:
            for entry in topic["partitions"]:
                for name in entry["defects"]:
                    counts[name] = counts.get(name, 0) + entry[name]
        topics_with_defects = ", ".join(t["source_topic"] for t in defective)
        parts.append("defects in %s: %s" % (topics_with_defects, ", ".join("%s %d" % item for item in sorted(counts.items()))))
    if missing_targets:
        parts.append("target topic(s) missing: %s" % ", ".join(missing_targets))
    if pending:
        parts.append("%d source record(s) not on the target when the catch-up wait ended (pending): MirrorMaker 2 lags or has"
                     " stopped; check its status and log, or raise --catch-up-timeout" % pending)
    if error:
        parts.append("could not validate: %s" % error)
    if not defective and not missing_targets and not pending and not error:
        parts.append("no defects")
    return "; ".join(parts)
