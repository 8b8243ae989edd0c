# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML report as a browser shows it: headless Chromium at 1200 px wide. The page must not overflow
horizontally, however long the names, samples and check texts, and a defect must show in the picture where a
clean mirror shows none. Chromium comes from Debian's chromium-headless-shell package."""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter

import pytest

from mirror_validation.html_report import MARKS, render
from mirror_validation.report import topic_entry
from mirror_validation.topic_pairs import TopicPair

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.topic_drift import compare_flow
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import FlowNames

CHROMIUM = shutil.which("chromium-headless-shell") or shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs headless Chromium: apt-get install chromium-headless-shell")
WIDTH = 1200
MISSING_COLOR = next(bytes.fromhex(color[1:]) for name, _side, color in MARKS if name == "missing")


def _browser(*arguments):
    # --no-sandbox: the tests run as root, where Chromium's sandbox refuses to start.
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=%d,1400" % WIDTH,
                           *arguments], capture_output=True, text=True, timeout=120, check=True)


def scroll_width(page_path, tmp_path):
    """The page's scrollWidth at WIDTH px, read by a script added to a copy of it (the report itself has none)."""
    probe = tmp_path / "probe.html"
    probe.write_text(page_path.read_text().replace(
        "</body>", "<script>document.body.setAttribute('data-scroll-width', document.documentElement.scrollWidth)</script></body>"))
    dom = _browser("--dump-dom", probe.as_uri()).stdout
    return int(re.search(r'data-scroll-width="(\d+)"', dom).group(1))


def screenshot_colors(page_path, tmp_path):
    """Counter of the (r, g, b) bytes of every pixel of the page's screenshot, decoded from Chromium's PNG (8-bit RGB or RGBA)."""
    picture = tmp_path / (page_path.stem + ".png")
    _browser("--screenshot=%s" % picture, page_path.as_uri())
    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height, depth, color_type, _compression, _filter, interlace = header
    assert depth == 8 and color_type in (2, 6) and interlace == 0, header
    channels = 3 if color_type == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks)), width * channels
    previous, colors = bytearray(stride), Counter()
    for row in range(height):
        kind, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                nearest = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))[2]
                line[i] = (line[i] + nearest) & 255
        colors.update(bytes(line[i:i + 3]) for i in range(0, stride, channels))
        previous = line
    return colors


def topic_drift_report(name, defective):
    """kafka_mirror_topic_drift_info's result for `name`, made by the module's own rules."""
    configs = {"cleanup.policy": "delete", "retention.ms": "604800000", "max.message.bytes": "1048588", "compression.type": "producer",
               "min.insync.replicas": "1"}
    source = {"partitions": 12, "replication_factor": 3, "configs": dict(configs, **{"cleanup.policy": "compact,delete"})}
    target = {"partitions": 8 if defective else 12, "replication_factor": 1,
              "configs": dict(configs, **({"retention.ms": "3600000", "compression.type": "zstd"} if defective else {}))}
    flow = FlowNames("primary-kafka-cluster", "secondary-kafka-cluster")
    return compare_flow(flow, {name: source}, {flow.remote_topic(name): target}, 3)


def report(defective):
    """A report with long names and texts; `defective`: partition 3 of the first topic lost records at three places."""
    long_name = "customer-orders-with-a-very-long-topic-name-as-some-teams-choose-them-" * 2
    partitions = 12
    offsets = {p: (1000 * p, 1000 * p + 100000) for p in range(partitions)}
    pair = TopicPair(0, long_name, "primary." + long_name, partitions, partitions, source_offsets=offsets, target_offsets=offsets)
    counts = {p: {"source_count": 100000, "target_count": 100000} for p in range(partitions)}
    samples = {}
    if defective:
        counts[3].update(missing=3, target_count=99997)
        samples[3] = {"missing": [1000 * 3 + 10, 1000 * 3 + 50000, 1000 * 3 + 99000]}
    topic = topic_entry(pair, counts, samples, {}, {}, {}, 0.01)
    # What a bounded run left out, with the long name: a line under the verdict and a list under the topic (short enough to
    # keep partition 3's strip in the screenshot).
    left_out = list(range(partitions, 48))
    topic["coverage"] = ["checked partitions %s; NOT checked: partitions %s" % (", ".join(map(str, range(partitions))), ", ".join(map(str, left_out)))]
    coverage = {"mode": "bounded", "complete": False, "partitions_checked": partitions, "partitions_total": 48,
                "not_checked": [{"source_topic": long_name, "partitions": left_out}]}
    verdict = "defects in %s: missing 3" % long_name if defective else "no defects"
    # The topic settings line and table, with the long names, and on the defective page an error, warnings and infos.
    drift = topic_drift_report(long_name, defective)
    return {"passed": not defective, "message": "1 topic(s), 12 partition(s) compared; " + verdict, "topic_drift": drift,
            "started_at": "2026-11-23T05:00:00+00:00", "duration_s": 12.5, "records_per_s": 160000, "client": "confluent-kafka",
            "spark_master": "spark://127.60.0.1:7077", "groups": [], "topics": [topic], "coverage": coverage,
            "checks": {"offset_syncs": "checked (mm2-offset-syncs.secondary-kafka-cluster-with-a-long-alias.internal)" * 3,
                       "catch_up": "target caught up", "timestamps": "left out of fingerprints (" + "x" * 400 + ")"}}


def test_the_report_fits_1200_px_and_a_defect_shows_in_the_picture(tmp_path):
    pictures = {}
    for defective in (True, False):
        page = tmp_path / ("defective.html" if defective else "clean.html")
        page.write_text(render(report(defective)))
        assert scroll_width(page, tmp_path) <= WIDTH
        pictures[defective] = screenshot_colors(page, tmp_path)
    # The legend shows the colour on both pages; the defective one also has the three marks on partition 3's strip.
    assert pictures[False][MISSING_COLOR] > 0
    assert pictures[True][MISSING_COLOR] - pictures[False][MISSING_COLOR] >= 3 * 3 * 6  # 4 x 7 px each, edges blended
