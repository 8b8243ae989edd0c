# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prometheus' text exposition format, read as a scraper does: the tests' own reader of MirrorMaker's metrics endpoint
(roles/mirrormaker2 mirrormaker2_metrics_port), so that what the endpoint serves is checked, not what the role says.

Each sample line is `name{label="value",...} value [timestamp]`; `#` lines (HELP, TYPE) are skipped. Label values may hold
escaped quotes and backslashes.
"""
from __future__ import annotations

import re
import urllib.request

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text: str) -> list:
    """[(name, {label: value}, float value)] of every sample line."""
    samples = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = _SAMPLE.match(line.strip())
        if not match:
            raise ValueError(f"not a sample line of the text format: {line!r}")
        labels = {key: re.sub(r"\\(.)", r"\1", value) for key, value in _LABEL.findall(match.group(2) or "")}
        samples.append((match.group(1), labels, float(match.group(3))))
    return samples


def scrape(url: str, timeout: float = 10) -> list:
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        return parse(reply.read().decode())


def values(samples: list, name: str, **labels) -> list:
    """The values of the samples called `name` whose labels include `labels`."""
    return [value for sample_name, sample_labels, value in samples
            if sample_name == name and all(sample_labels.get(key) == wanted for key, wanted in labels.items())]
