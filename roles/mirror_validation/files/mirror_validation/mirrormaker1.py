# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the validation of a MirrorMaker 1 mirror (engine mm1) checks and what does not exist for MirrorMaker 1, in the words
of the report's checks: MirrorMaker 1 (kafka.tools.MirrorMaker) keeps topic names, partitions the records again by key on
the target, and writes no offset syncs and no checkpoints."""
from __future__ import annotations

MM2, MM1 = "mm2", "mm1"
ENGINES = (MM2, MM1)

# The report's checks of a MirrorMaker 1 run, beside the catch-up wait's.
CHECKED = {
    "naming": "topic names kept: each source topic is compared with the target topic of the same name (the replication policy and"
              " the aliases name nothing for MirrorMaker 1)",
    "records": "compared per topic across partitions by fingerprint: a source record without a copy on the target is missing, a"
               " target record without one on the source unexpected, further copies duplicates (max_duplicate_ratio); records"
               " that retention deleted on one side count as missing or unexpected",
    "order": "per key and source partition: the target's first copies of a key's records follow the source's order; records with"
             " a null key have no order to check (MirrorMaker 1 spreads them over the target's partitions)",
}
# The report's "not_applicable": checks that do not exist for MirrorMaker 1, with the reason (not skipped: nothing to check).
NOT_APPLICABLE = {
    "partitions": "partition-for-partition comparison: MirrorMaker 1 partitions the records again by key on the target, whose"
                  " partition count may differ",
    "offset_syncs": "MirrorMaker 1 writes no offset syncs",
    "anchors": "offset-sync anchors: MirrorMaker 1 writes no offset syncs",
    "checkpoints": "MirrorMaker 1 writes no consumer-group checkpoints",
    "topic_settings": "kafka_mirror_topic_drift_info's rules are MirrorMaker 2's (the target needs a partition for each source"
                      " partition); the role does not run it for MirrorMaker 1",
    "pending": "pending records: without offset syncs a record not copied yet cannot be told from a lost one; once the target's"
               " end offsets stop moving, a source record not on the target is missing",
}
LEAD = "MirrorMaker 1 mirror compared per topic (not applicable to MirrorMaker 1: %s)" % ", ".join(sorted(NOT_APPLICABLE))
# The report's counts that MirrorMaker 1 gives nothing for (pending needs offset syncs, anchors and checkpoint violations need
# MirrorMaker 2's topics; expired records are not told apart from missing or unexpected ones): left out of its topics, so
# that the tables show a dash, not a 0 that reads as checked.
NOT_COUNTED = ("pending", "expired", "anchors_checked", "anchor_mismatches", "checkpoint_violations")


def without_not_counted(topic):
    """The report's `topic` entry without the NOT_COUNTED counts, in its totals and partitions."""
    for entry in [topic["totals"]] + topic["partitions"]:
        for name in NOT_COUNTED:
            entry.pop(name, None)
    return topic
