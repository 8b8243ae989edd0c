# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The topic settings drift the role read before the job (kafkaops.mirror.kafka_mirror_topic_drift_info), in the report.

The job does not judge settings itself: the module did, and a difference it calls an error breaks the mirror, so the
report counts it as a defect (exit code 1) beside the record comparison's.
"""
from __future__ import annotations

from .options import read_json
from .report import DEFECTS

# What the report keeps of the module's result (its `alignment` is for the kafka_topics role).
KEPT = ("flow", "message", "summary", "target_brokers", "topics", "findings")


def load(path):
    """The module's result saved as JSON by the role; ValueError when it cannot be read."""
    drift = read_json(path, "topic_drift_file")
    if not all(key in drift for key in KEPT):
        raise ValueError("topic_drift_file %s is not a result of kafka_mirror_topic_drift_info (needs %s)" % (path, ", ".join(KEPT)))
    return drift


def attach(result, drift):
    """`result` with `topic_drift`; errors make it a defect (exit code 1) and join the message (the rest is in the summary
    the role prints and in the HTML page)."""
    result["topic_drift"] = {key: drift[key] for key in KEPT}
    if drift["summary"]["errors"]:
        result["exit_code"] = DEFECTS
        result["passed"] = False
        result["message"] += "; topic settings break the mirror: %s" % drift["message"]
    return result
