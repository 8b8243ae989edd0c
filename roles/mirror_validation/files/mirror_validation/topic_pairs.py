# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which source topics are validated against which target topics, and the source snapshot."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional, Set, Tuple

from .errors import ValidationUnavailable
from .naming import validated_topics

Offsets = Dict[int, Tuple[int, int]]  # {partition: (log start offset, end offset)}


@dataclass
class TopicPair:
    """A source topic and its mirror, with the offsets the comparison is bounded by."""

    index: int
    source_topic: str
    target_topic: str
    source_partitions: int
    target_partitions: Optional[int]  # None: the target topic does not exist
    source_offsets: Offsets = field(default_factory=dict)
    target_offsets: Offsets = field(default_factory=dict)
    with_timestamp: bool = False
    target_behind: Set[int] = field(default_factory=set)  # partitions still short of the snapshot when the wait ended

    @property
    def target_exists(self):
        return self.target_partitions is not None

    def bounds(self):
        """(pair, partition, source_begin, source_end, target_begin, target_end, target_behind) for every partition on either side."""
        partitions = sorted(set(self.source_offsets) | set(self.target_offsets))
        rows = []
        for partition in partitions:
            source_begin, source_end = self.source_offsets.get(partition, (0, 0))
            target_begin, target_end = self.target_offsets.get(partition, (0, 0))
            rows.append((self.index, partition, source_begin, source_end, target_begin, target_end, partition in self.target_behind))
        return rows


def pair_topics(source_topics, target_topics, include, exclude, names, keep_names=False):
    """TopicPairs for the selected source topics; `*_topics` are {name: partition count}, `names` the flow's FlowNames
    (for the MirrorMaker release: which topics are internal differs by release). `keep_names`: the target topic has the
    source topic's name (MirrorMaker 1), else the name MM2's replication policy gives it."""
    selected = validated_topics(source_topics, include, exclude, names)
    if not selected:
        raise ValidationUnavailable(
            "no source topic matches --topics %r (minus --exclude %r and MM2's internal topics); source topics: %s"
            % (include, exclude, ", ".join(sorted(source_topics)) or "none")
        )
    pairs = []
    for index, topic in enumerate(selected):
        target = topic if keep_names else names.remote_topic(topic)
        pairs.append(TopicPair(index, topic, target, source_topics[topic], target_topics.get(target)))
    return pairs


def snapshot_source(reader, pairs):
    """Record the source begin/end offsets now: records produced later are not part of this validation."""
    for pair in pairs:
        pair.source_offsets = dict(reader.offsets(pair.source_topic, range(pair.source_partitions)))


def keeps_create_time(timestamp_type):
    """The target keeps the producer's timestamp unless the topic overwrites it with LogAppendTime."""
    return timestamp_type == "CreateTime"
