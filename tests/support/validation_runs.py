# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the validation-job test modules (kept out of conftest.py, which test modules must not import)."""
from __future__ import annotations

import re

from tests.support import mirror_copy


def job_arguments(sandbox, topics_regex, *extra):
    return [
        "--source-bootstrap", sandbox["clusters"]["primary"]["bootstrap_servers"],
        "--target-bootstrap", sandbox["clusters"]["secondary"]["bootstrap_servers"],
        "--topics", topics_regex, "--source-alias", mirror_copy.SOURCE_ALIAS, "--target-alias", mirror_copy.TARGET_ALIAS,
        # Short waits: the broken copies never "catch up" with their offset syncs, by design.
        "--catch-up-timeout", "2", "--catch-up-interval", "1",
        "--receive-max-bytes", str(mirror_copy.RECEIVE_MAX_BYTES),  # Quirk (noida-db 0.2.3): unbounded fetch replies
    ] + list(extra)


def scenario_regex(mirrors, *names):
    """Regex of the source topics of `names` (all scenarios when none given)."""
    return "|".join(re.escape(mirrors[name]["source_topic"]) for name in (names or mirrors))


# The run most tests inspect: every scenario at once, with a duplicate threshold between "at-least-once" and "duplicates".
COMBINED_ARGUMENTS = ("--max-duplicate-ratio", "0.005")


def topic_of(report, source_topic):
    return next(topic for topic in report["topics"] if topic["source_topic"] == source_topic)


def comparable(report):
    """The report without what legitimately differs between two runs over the same data."""
    volatile = {"started_at", "duration_s", "records_per_s", "client", "spark_master", "driver_peak_rss_mb", "timings",
                "run"}  # the run's own id (incremental state names the run that validated an offset)
    return {key: value for key, value in report.items() if key not in volatile}
