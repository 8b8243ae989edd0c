# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A static HTML page of the report, read at a glance: one summary table of every topic and consumer group first,
then per topic a strip per partition along its offsets marking where defects lie, then the details.
One self-contained file (inline CSS and SVG, no script, no external asset), laid out to fit 1200 px.
"""
from __future__ import annotations

from html import escape

from .findings import finding_text
from .mirrormaker1 import CHECKED, MM1

STRIP_WIDTH = 760  # px of the offset axis; the page is at most 1100 px wide
_STYLE = """
body{font-family:system-ui,sans-serif;margin:16px auto;max-width:1100px;padding:0 12px;color:#222}
h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.15em;margin:1.4em 0 .4em}
.verdict{font-size:1.15em;padding:.4em .8em;border-radius:6px;margin:.4em 0;overflow-wrap:anywhere}
.passed{background:#e3f6e5;color:#135c1d}.failed{background:#fde4e4;color:#8b1111}.partial{background:#fff4d6;color:#6b4a00}
ul.coverage{font-size:.85em;margin:.3em 0;padding-left:1.2em}ul.coverage li{overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.6em 0;width:100%}
td,th{border:1px solid #ccc;padding:2px 5px;text-align:right;font-size:.85em;white-space:nowrap;font-variant-numeric:tabular-nums}
th{background:#f3f3f3;white-space:normal}
td.name,th.name{text-align:left;white-space:normal;overflow-wrap:anywhere}td.status{text-align:left}
tr.defect td{background:#fde4e4}tr.behind td{background:#fff4d6}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:.9em}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
.legend{font-size:.85em}.legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;vertical-align:middle}
svg{display:block;max-width:100%}
"""
# What a strip marks, with the side whose offsets the samples are: source (upper lane) or target (lower lane).
MARKS = (
    ("missing", "source", "#d62728"),
    ("pending", "source", "#9e9e9e"),
    ("expired_on_target", "source", "#c7b9e0"),
    ("duplicates", "target", "#ff7f0e"),
    ("unexpected", "target", "#8c0000"),
    ("order_violations", "target", "#7b3fbf"),
    ("expired", "target", "#c7b9e0"),
)
_CLEAN, _LANE = "#9fd4a8", "#e8e8e8"
_SUMMARY_COLUMNS = ("source_count", "target_count", "missing", "pending", "duplicates", "unexpected", "order_violations", "expired",
                    "anchor_mismatches", "checkpoint_violations")
_PARTITION_COLUMNS = ("partition", "source_count", "target_count", "missing", "pending", "duplicates", "unexpected", "order_violations",
                      "expired", "anchors_checked", "anchor_mismatches", "checkpoint_violations")
_SHORT = {"source_count": "source", "target_count": "target", "duplicates": "dups", "order_violations": "order", "anchor_mismatches": "anchor errors",
          "checkpoint_violations": "ckpt errors", "anchors_checked": "anchors"}


# Rows of the topic settings table: an error breaks the mirror, a warning is a risk.
_DRIFT_ROW = {"error": ' class="defect"', "warning": ' class="behind"'}


def _header(name):
    return _SHORT.get(name, name.replace("_", " "))


def _row_class(status):
    return {"defects": ' class="defect"', "target_missing": ' class="defect"', "behind": ' class="behind"'}.get(status, "")


def summary_table(report):
    """One table: every topic with its totals, then every consumer group with its checkpoint results."""
    head = "".join('<th>%s</th>' % _header(name) for name in _SUMMARY_COLUMNS)
    rows = []
    for topic in report["topics"]:
        totals = topic["totals"]
        cells = "".join("<td>%s</td>" % totals.get(name, "&ndash;") for name in _SUMMARY_COLUMNS)
        rows.append('<tr%s><td class="name">%s &rarr; %s</td><td class="status">%s</td>%s</tr>' % (
            _row_class(topic["status"]), escape(topic["source_topic"]), escape(topic["target_topic"]), escape(topic["status"]), cells))
    groups = {}
    for checkpoint in report.get("groups", []):
        entry = groups.setdefault(checkpoint["group"], [0, 0])
        entry[0] += 1
        entry[1] += 0 if checkpoint["ok"] else 1
    for group, (checked, violations) in sorted(groups.items()):
        rows.append('<tr%s><td class="name">group %s</td><td class="status">%s</td><td colspan="%d" class="name">%d checkpoint(s), %d unsafe</td></tr>'
                    % (' class="defect"' if violations else "", escape(group), "defects" if violations else "passed", len(_SUMMARY_COLUMNS),
                       checked, violations))
    return ('<table class="summary"><tr><th class="name">topic / group</th><th class="name">status</th>%s</tr>%s</table>'
            % (head, "".join(rows)))


def _position(offset, begin, end):
    span = max(end - begin, 1)
    return round(min(max((offset - begin) / span, 0.0), 1.0) * (STRIP_WIDTH - 4), 1)


def partition_strips(topic):
    """Inline SVG: per partition a source lane over a target lane, each along its own offset range, marked at the
    sampled offsets of every defect kind; a partition without defects is one green band."""
    label_width, lane, gap = 150, 8, 8
    partitions = topic["partitions"]
    height = len(partitions) * (2 * lane + gap) + 4
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="defects along each partition">'
             % (label_width + STRIP_WIDTH + 110, height)]
    for index, entry in enumerate(partitions):
        y = 2 + index * (2 * lane + gap)
        ranges = {"source": entry["source_offsets"], "target": entry["target_offsets"]}
        marked = [(name, side, color) for name, side, color in MARKS if entry["samples"].get(name)]
        clean = not marked and not entry["defects"]
        parts.append('<text x="0" y="%d" font-size="11">p%d: %d&ndash;%d</text>' % (y + 2 * lane - 2, entry["partition"], *ranges["source"]))
        for lane_index, side in enumerate(("source", "target")):
            parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>partition %d %s offsets %d to %d</title></rect>'
                         % (label_width, y + lane_index * lane, STRIP_WIDTH, lane - 1, _CLEAN if clean else _LANE, entry["partition"], side,
                            ranges[side][0], ranges[side][1]))
        for name, side, color in marked:
            lane_y = y + (0 if side == "source" else lane)
            for offset in entry["samples"][name]:
                parts.append('<rect x="%.1f" y="%d" width="4" height="%d" fill="%s"><title>partition %d: %s at %s offset %d</title></rect>'
                             % (label_width + _position(offset, *ranges[side]), lane_y, lane - 1, color, entry["partition"],
                                name.replace("_", " "), side, offset))
        if entry["defects"]:
            parts.append('<text x="%d" y="%d" font-size="11" fill="#8b1111">%s</text>' % (
                label_width + STRIP_WIDTH + 6, y + 2 * lane - 2, escape(", ".join("%s %d" % (_header(name), entry[name]) for name in entry["defects"]))))
    parts.append("</svg>")
    return "".join(parts)


def _legend():
    shown = {}
    for name, side, color in MARKS:
        shown.setdefault(color, []).append("%s (%s)" % (name.replace("_", " "), side))
    items = ['<span style="background:%s"></span>no defect' % _CLEAN]
    items += ['<span style="background:%s"></span>%s' % (color, " / ".join(names)) for color, names in shown.items()]
    return ('<p class="legend">Each partition: source offsets (upper lane), target offsets (lower lane); marks at the first'
            ' offsets of each defect.%s</p>' % "".join(items))


def _samples_text(samples):
    texts = []
    for kind, values in sorted(samples.items()):
        if values and isinstance(values[0], dict):
            values = ["%s" % ",".join("%s" % value for value in item.values()) for item in values]
        texts.append("%s: %s" % (kind.replace("_", " "), escape(", ".join(str(value) for value in values))))
    return "; ".join(texts)


def _topic_section(topic):
    title = "<h2>%s &rarr; %s</h2>" % (escape(topic["source_topic"]), escape(topic["target_topic"]))
    if topic["status"] == "target_missing":
        return title + '<p class="verdict failed">%s</p>' % escape(topic["error"])
    rows = []
    for entry in topic["partitions"]:
        # a count the run has no data for (MirrorMaker 1's anchors, mirrormaker1.NOT_COUNTED) is a dash, not a 0
        cells = "".join("<td>%s</td>" % entry.get(name, "&ndash;") for name in _PARTITION_COLUMNS)
        css = ' class="defect"' if entry["defects"] else ' class="behind"' if entry.get("pending") else ""
        rows.append('<tr%s>%s<td class="name">%s</td></tr>' % (css, cells, _samples_text(entry["samples"])))
    header = "".join("<th>%s</th>" % _header(name) for name in _PARTITION_COLUMNS)
    return ('%s<p>status <b>%s</b>, duplicate ratio %.4f, fingerprint %s the timestamp</p>%s%s<table><tr>%s'
            '<th class="name">samples (first offsets)</th></tr>%s</table>'
            % (title, escape(topic["status"]), topic["totals"].get("duplicate_ratio", 0.0),
               "includes" if topic.get("fingerprint_includes_timestamp") else "leaves out", _coverage_list(topic), partition_strips(topic),
               header, "".join(rows)))


def coverage_line(report):
    """Under the verdict: what an incremental or a bounded run checked (coverage.py); nothing for a full run."""
    covered = report.get("coverage") or {}
    if covered.get("mode") == "bounded":
        left_out = "; ".join("%s partitions %s" % (item["source_topic"], ", ".join(str(partition) for partition in item["partitions"]))
                             for item in covered["not_checked"])
        return ('<p class="verdict partial">Bounded run, NOT a full validation: %d of %d partition(s) checked. Not checked: %s.</p>'
                % (covered["partitions_checked"], covered["partitions_total"], escape(left_out or "nothing")))
    if covered.get("mode") == "incremental":
        state = "written" if covered.get("state_written") else "NOT written (the run did not pass)"
        return ('<p class="verdict partial">Incremental run: %d partition(s) checked from the offsets validated before, %d in full'
                ' (ranges per topic below); state %s.</p>' % (covered["resumed"], covered["full"], state))
    return ""


def engine_section(report):
    """Under the verdict, for a MirrorMaker 1 run: what was checked and which checks do not exist for MirrorMaker 1."""
    if report.get("engine") != MM1:
        return ""
    checks = report.get("checks", {})
    items = ["<li>checked, <b>%s</b>: %s</li>" % (escape(name), escape(checks.get(name, ""))) for name in CHECKED]
    items += ["<li>not applicable, <b>%s</b>: %s</li>" % (escape(name), escape(reason)) for name, reason in sorted(report["not_applicable"].items())]
    return ('<p class="verdict partial">MirrorMaker 1 mirror: records matched per topic across partitions, order checked per key;'
            ' the checks MirrorMaker 1 gives nothing for are not applicable (not skipped).</p><ul class="coverage">%s</ul>' % "".join(items))


def _coverage_list(topic):
    if not topic.get("coverage"):
        return ""
    return '<ul class="coverage">%s</ul>' % "".join("<li>%s</li>" % escape(line) for line in topic["coverage"])


def _groups_section(groups):
    if not groups:
        return ""
    rows = "".join(
        '<tr%s><td class="name">%s</td><td class="name">%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td class="name">%s</td></tr>'
        % ("" if group["ok"] else ' class="defect"', escape(group["group"]), escape(group["target_topic"]), group["partition"],
           group["upstream_offset"], group["downstream_offset"], group["limit"],
           escape(group["violation"] or ("ok (in the records copied again after a restart)" if group.get("copied_again") else "ok")))
        for group in groups
    )
    return ('<h2>Consumer-group checkpoints</h2><table><tr><th class="name">group</th><th class="name">target topic</th><th>partition</th>'
            '<th>upstream</th><th>downstream</th><th>highest safe</th><th class="name">result</th></tr>%s</table>' % rows)


def topic_drift_line(drift):
    """Under the summary table: the topic settings drift in one line (the table of differences ends the page)."""
    if not drift:
        return ""
    verdict = "failed" if drift["summary"]["errors"] else "passed"
    return '<p class="verdict %s">Topic settings (%s): %s</p>' % (verdict, escape(drift["flow"]), escape(drift["message"]))


def _meaning(item):
    """A finding's message and fix, without the leading `topic -> remote topic: ` the row's columns already show."""
    named = "%s -> %s: " % (item["topic"], item["remote_topic"])
    message = item["message"][len(named):] if item["message"].startswith(named) else item["message"]
    return finding_text(dict(item, message=message))


def topic_drift_section(drift):
    """The differences kafka_mirror_topic_drift_info found, one row each, with what each means and its fix."""
    if not drift or not drift["findings"]:
        return ""
    rows = "".join(
        '<tr%s><td class="status">%s</td><td class="name">%s</td><td class="status">%s</td><td>%s</td><td>%s</td><td class="name">%s</td></tr>'
        % (_DRIFT_ROW.get(item["severity"], ""), escape(item["severity"]), escape(item["remote_topic"]), escape(item["check"]),
           escape(str(item["source"])), escape(str(item["target"])), escape(_meaning(item)))
        for item in drift["findings"]
    )
    return ('<h2>Topic settings, %s</h2><table><tr><th class="name">severity</th><th class="name">remote topic</th><th class="name">setting</th>'
            '<th>source</th><th>target</th><th class="name">what it means</th></tr>%s</table>' % (escape(drift["flow"]), rows))


def _facts(report):
    facts = [("started", report["started_at"]), ("duration", "%.1f s, %s records/s" % (report["duration_s"], report["records_per_s"])),
             ("client", str(report.get("client"))), ("Spark", str(report.get("spark_master", "")))]
    facts += sorted((name.replace("_", " "), str(value)) for name, value in report.get("checks", {}).items())
    return "<dl>%s</dl>" % "".join("<dt>%s</dt><dd>%s</dd>" % (escape(name), escape(value)) for name, value in facts)


def render(report):
    verdict = "passed" if report["passed"] else "failed"
    sections = "".join(_topic_section(topic) for topic in report["topics"])
    strips = _legend() if any(topic["partitions"] for topic in report["topics"]) else ""
    drift = report.get("topic_drift")
    return ('<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
            '<title>Mirror validation: %s</title><style>%s</style></head><body><h1>Mirror validation</h1><p class="verdict %s">%s</p>%s%s%s%s%s%s%s'
            '</body></html>' % (verdict, _STYLE, verdict, escape(report["message"]), coverage_line(report) + engine_section(report),
                                summary_table(report) + topic_drift_line(drift), _facts(report), strips, sections,
                                _groups_section(report.get("groups", [])), topic_drift_section(drift)))
