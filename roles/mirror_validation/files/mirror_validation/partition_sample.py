# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bounded mode's partition sample: which partitions of a topic a first look checks.

Spread evenly over the partition numbers and the same at every run, so that two bounded runs of an unchanged mirror
check the same partitions and a report can be read against the previous one.
"""
from __future__ import annotations


def sample(partitions, count):
    """(checked, not checked): `count` of the sorted `partitions` spread evenly, and the others."""
    ordered = sorted(partitions)
    if count >= len(ordered):
        return ordered, []
    chosen = [ordered[(index * len(ordered)) // count] for index in range(count)]
    left_out = set(ordered) - set(chosen)
    return chosen, sorted(left_out)
