"""A static HTML page of the report: one chart and one table per topic, no external assets."""
from __future__ import annotations

from html import escape

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
.verdict{font-size:1.4em;padding:.5em 1em;border-radius:6px;display:inline-block}
.passed{background:#e3f6e5;color:#135c1d}.failed{background:#fde4e4;color:#8b1111}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
th{background:#f3f3f3}tr.defect td{background:#fde4e4}td.name{text-align:left}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
"""
_COLUMNS = ("partition", "source_count", "target_count", "missing", "pending", "duplicates", "unexpected", "order_violations",
            "expired", "anchor_mismatches", "checkpoint_violations")
_SOURCE_COLOR, _TARGET_COLOR, _DEFECT_COLOR = "#4c78a8", "#72b7b2", "#e45756"


def partition_chart(partitions, bar_width=14, height=160):
    """Inline SVG: per partition a source bar and a target bar; partitions with defects drawn in red."""
    peak = max([max(p["source_count"], p["target_count"]) for p in partitions] + [1])
    slot = 2 * bar_width + 10
    width = max(slot * len(partitions) + 40, 200)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="records per partition">'
             % (width, height + 30)]
    for index, entry in enumerate(partitions):
        x = 30 + index * slot
        target_color = _DEFECT_COLOR if entry.get("defects") else _TARGET_COLOR
        for offset, count, color, label in ((0, entry["source_count"], _SOURCE_COLOR, "source"),
                                            (bar_width, entry["target_count"], target_color, "target")):
            bar_height = int(round(height * count / peak))
            parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>partition %d %s: %d records%s</title></rect>'
                         % (x + offset, height - bar_height, bar_width - 1, bar_height, color, entry["partition"], label, count,
                            ("; defects: " + ", ".join(entry["defects"])) if entry.get("defects") else ""))
        parts.append('<text x="%d" y="%d" font-size="11" text-anchor="middle">%d</text>' % (x + bar_width, height + 14, entry["partition"]))
    parts.append('<text x="0" y="10" font-size="10">%d</text>' % peak)
    parts.append("</svg>")
    return "".join(parts)


def _topic_section(topic):
    title = "<h2>%s &rarr; %s</h2>" % (escape(topic["source_topic"]), escape(topic["target_topic"]))
    if topic["status"] == "target_missing":
        return title + '<p class="verdict failed">%s</p>' % escape(topic["error"])
    rows = []
    for entry in topic["partitions"]:
        css = ' class="defect"' if entry["defects"] else ""
        cells = "".join("<td>%s</td>" % entry[name] for name in _COLUMNS)
        samples = "; ".join("%s: %s" % (kind, escape(str(values)[:120])) for kind, values in sorted(entry["samples"].items()))
        rows.append('<tr%s>%s<td class="name">%s</td></tr>' % (css, cells, samples))
    totals = "".join("<td>%s</td>" % topic["totals"].get(name, "") for name in _COLUMNS[1:])
    header = "".join("<th>%s</th>" % name.replace("_", " ") for name in _COLUMNS) + "<th>samples (first offsets)</th>"
    legend = ('<p class="legend"><span style="background:%s"></span>source<span style="background:%s"></span>target'
              '<span style="background:%s"></span>target, partition with defects</p>' % (_SOURCE_COLOR, _TARGET_COLOR, _DEFECT_COLOR))
    return "%s<p>status: <b>%s</b>, duplicate ratio %.4f</p>%s%s<table><tr>%s</tr>%s<tr><th>total</th>%s<td></td></tr></table>" % (
        title, escape(topic["status"]), topic["totals"].get("duplicate_ratio", 0.0), partition_chart(topic["partitions"]),
        legend, header, "".join(rows), totals)


def _groups_section(groups):
    if not groups:
        return ""
    rows = "".join(
        '<tr%s><td class="name">%s</td><td class="name">%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td class="name">%s</td></tr>'
        % ("" if group["ok"] else ' class="defect"', escape(group["group"]), escape(group["target_topic"]), group["partition"],
           group["upstream_offset"], group["downstream_offset"], group["limit"], escape(group["violation"] or "ok"))
        for group in groups
    )
    return ("<h2>Consumer-group checkpoints</h2><table><tr><th>group</th><th>target topic</th><th>partition</th><th>upstream</th>"
            "<th>downstream</th><th>highest safe</th><th>result</th></tr>%s</table>" % rows)


def render(report):
    verdict = "passed" if report["passed"] else "failed"
    facts = ("<p>started %s, %.1f s, %s records/s, client %s, checks: %s</p>"
             % (escape(report["started_at"]), report["duration_s"], report["records_per_s"], escape(str(report.get("client"))),
                escape(", ".join("%s %s" % item for item in sorted(report.get("checks", {}).items())))))
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Mirror validation: %s</title><style>%s</style></head><body>"
            "<h1>Mirror validation</h1><p class=\"verdict %s\">%s</p>%s%s%s</body></html>"
            % (verdict, _STYLE, "passed" if report["passed"] else "failed", escape(report["message"]), facts,
               "".join(_topic_section(topic) for topic in report["topics"]), _groups_section(report.get("groups", []))))
