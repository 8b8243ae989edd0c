# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
import pytest

from mirror_validation.errors import ValidationUnavailable
from mirror_validation.naming import FlowNames, parse_release, validated_topics
from mirror_validation.slices import SOURCE, offset_ranges, pack, slice_partitions
from mirror_validation.topic_pairs import pair_topics


@pytest.mark.parametrize("policy, separator, expected", [
    ("default", ".", "primary.orders"),
    ("default", "_", "primary_orders"),
    ("identity", ".", "orders"),
])
def test_remote_topic_names(policy, separator, expected):
    assert FlowNames("primary", None, policy, separator).remote_topic("orders") == expected


def test_selection_is_full_match_and_skips_mm2_internal_topics():
    names = ["orders", "orders-dlq", "payments", "heartbeats", "mm2-offset-syncs.secondary.internal",
             "primary.checkpoints.internal", "__consumer_offsets", "tmp.scratch"]
    flow = FlowNames("primary", "secondary")
    assert validated_topics(names, "orders|payments|tmp.*", None, flow) == ["orders", "payments", "tmp.scratch"]
    assert validated_topics(names, ".*", r"tmp\..*|.*-dlq", flow) == ["orders", "payments"]


def test_offset_ranges_cover_every_offset_once():
    assert offset_ranges(5, 17, 5) == [(5, 10), (10, 15), (15, 17)]
    assert offset_ranges(3, 3, 5) == []
    with pytest.raises(ValueError):
        offset_ranges(0, 10, 0)


def test_slices_per_partition():
    slices = slice_partitions(SOURCE, 0, "orders", {1: (0, 3), 0: (10, 12)}, 2)
    assert [(s.partition, s.start, s.end) for s in slices] == [(0, 10, 12), (1, 0, 2), (1, 2, 3)]


def test_pairs_mark_missing_targets_and_no_match_is_an_error():
    pairs = pair_topics({"orders": 8, "payments": 3}, {"primary.orders": 8}, ".*", None, FlowNames("primary", None))
    assert [(p.source_topic, p.target_topic, p.target_exists) for p in pairs] == [
        ("orders", "primary.orders", True), ("payments", "primary.payments", False)]
    with pytest.raises(ValidationUnavailable, match="no source topic matches"):
        pair_topics({"orders": 8}, {}, "nothing", None, FlowNames("primary", None))


def test_pairs_follow_the_release_that_runs_mirrormaker():
    """KIP-1074: MirrorMaker 2 of 4.x replicates a user topic named *.internal, so the validation compares it; before 4.0 (and
    with the release not given) it is internal and left out. MirrorMaker's own topics and Kafka's stay out in both."""
    source = {"nr-orders": 3, "nr-ops.internal": 1, "mm2-offset-syncs.secondary.internal": 1, "mm2-offsets.secondary.internal": 25,
              "primary.checkpoints.internal": 1, "__consumer_offsets": 50, "heartbeats": 1}
    target = {"primary.nr-orders": 3, "primary.nr-ops.internal": 1}
    for release in ("3.9.2", None):
        pairs = pair_topics(source, target, "nr-.*|.*internal|.*offsets|heartbeats", None,
                            FlowNames("primary", "secondary", version=parse_release(release)))
        assert [p.source_topic for p in pairs] == ["nr-orders"], release
    pairs = pair_topics(source, target, ".*", None, FlowNames("primary", "secondary", version=parse_release("4.3.1")))
    assert [(p.source_topic, p.target_topic, p.target_exists) for p in pairs] == [
        ("nr-ops.internal", "primary.nr-ops.internal", True), ("nr-orders", "primary.nr-orders", True)]


def test_small_slices_are_packed_into_few_tasks_and_large_ones_stay_alone():
    slices = slice_partitions(SOURCE, 0, "t", {0: (0, 10), 1: (0, 10), 2: (0, 10), 3: (0, 100)}, 50)
    tasks = pack(slices, 25)
    assert [[(s.partition, s.start, s.end) for s in task] for task in tasks] == [
        [(0, 0, 10), (1, 0, 10)], [(2, 0, 10)], [(3, 0, 50)], [(3, 50, 100)]]
    assert sorted(s for task in tasks for s in task) == sorted(slices)
