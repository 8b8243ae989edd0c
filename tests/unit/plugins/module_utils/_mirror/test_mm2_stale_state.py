# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stale MirrorMaker 2 state (module_utils/_mirror/stale_state): hand-computed syncs, checkpoints and end offsets."""
import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.stale_state import SyncTrail, stale_state_findings
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import FlowNames
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint, OffsetSync
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.selection import MirrorFilter
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import KafkaVersion

SOURCE_TOPICS = {"orders", "payments"}


def trail_of(*syncs):
    trail = SyncTrail()
    for topic, partition, upstream, downstream in syncs:
        trail.add(OffsetSync(topic, partition, upstream, downstream))
    return trail


def findings(trail, checkpoints=(), ends=None, running=None, topics=".*", **flow):
    """The findings of flow primary -> secondary (FlowNames options in `flow`) with MirrorMaker of release `running`."""
    mirror_filter = MirrorFilter(FlowNames("primary", "secondary", **flow), topics=topics)
    ends = {("primary.orders", 0): 201} if ends is None else ends
    return stale_state_findings(mirror_filter, trail, checkpoints, SOURCE_TOPICS, ends, running and KafkaVersion.parse(running))


HISTORY = (("orders", 0, 0, 0), ("orders", 0, 100, 100), ("orders", 0, 200, 200))
# 3.4.1+: group offset 150 translates with sync 100 -> 100 to 101.
CHECKPOINT = Checkpoint("app", "primary.orders", 0, 150, 101, "")


def test_current_syncs_and_checkpoints_are_not_stale():
    assert findings(trail_of(*HISTORY), [CHECKPOINT]) == []


@pytest.mark.parametrize("end, stale", [(201, False), (200, True), (0, True)])
def test_a_sync_names_a_written_record_so_the_end_must_be_above_it(end, stale):
    found = findings(trail_of(*HISTORY), ends={("primary.orders", 0): end})
    assert [f["check"] for f in found] == (["stale_offset_syncs"] if stale else [])
    if stale:
        item = found[0]
        assert item["severity"] == "error" and item["cluster"] == "primary"
        assert "mm2-offset-syncs.secondary.internal on primary" in item["message"]
        assert "orders[0]: sync 200 -> 200, but primary.orders[0] ends at %d" % end in item["message"]
        assert item["fix"].startswith("stop MirrorMaker 2, delete mm2-offset-syncs.secondary.internal on primary (kafka-topics.sh")


@pytest.mark.parametrize("downstream, version, severity", [
    (101, None, None),  # at the end: a group that read everything
    (102, None, "error"),
    (102, "3.4.1", "error"),
    (102, "3.4.0", "warning"),  # d + (g - u) runs ahead of the end while the copy lags
    (102, "2.4.1", "warning"),
])
def test_a_checkpoint_beyond_the_end(downstream, version, severity):
    trail = trail_of(("orders", 0, 0, 0), ("orders", 0, 100, 100))
    checkpoint = CHECKPOINT._replace(downstream_offset=downstream)
    found = findings(trail, [checkpoint], ends={("primary.orders", 0): 101}, running=version)
    assert [f["severity"] for f in found] == ([severity] if severity else [])
    if severity:
        assert found[0]["check"] == "stale_checkpoints" and found[0]["cluster"] == "secondary"
        assert "primary.checkpoints.internal on secondary" in found[0]["message"]
        assert "group app primary.orders[0]: checkpoint 150 -> %d, the partition ends at 101" % downstream in found[0]["message"]
        assert "delete primary.checkpoints.internal on secondary" in found[0]["fix"] and "--reset-offsets" in found[0]["fix"]


def test_the_classic_case_remote_topic_recreated_empty():
    found = findings(trail_of(*HISTORY), [CHECKPOINT], ends={("primary.orders", 0): 0})
    assert [(f["check"], f["severity"]) for f in found] == [("stale_offset_syncs", "error"), ("stale_checkpoints", "error")]
    assert "checkpoint 150 -> 101, the partition ends at 0" in found[1]["message"]


def test_recreated_while_mirrormaker_ran():
    # Sync 200 -> 200, the remote topic is recreated, MirrorMaker copies on: 201 -> 0 (truncated downstream), 400 -> 199.
    trail = trail_of(*HISTORY, ("orders", 0, 201, 0), ("orders", 0, 400, 199))
    before = CHECKPOINT  # 150 -> 101: the old topic's offset 101, within the new topic's 200 records but not the same record
    after = Checkpoint("late", "primary.orders", 0, 230, 30, "")
    found = findings(trail, [before, after], ends={("primary.orders", 0): 200})
    assert [(f["check"], f["severity"]) for f in found] == [("stale_offset_syncs", "warning"), ("stale_checkpoints", "error")]
    assert "orders[0]: sync 200 -> 200, then 201 -> 0" in found[0]["message"]
    assert "group app primary.orders[0]: checkpoint 150 -> 101, but the recreated topic starts with sync 201 -> 0" in found[1]["message"]
    assert "late" not in found[1]["message"]
    assert found[0]["message"].endswith("until MirrorMaker restarts it translates group offsets below it with the old topic's syncs")
    # Before 3.4.1 only the latest sync is kept: nothing below it is translated (and the old checkpoint is still stale).
    older = findings(trail, [before], ends={("primary.orders", 0): 200}, running="3.3.2")
    assert older[0]["message"].endswith("MirrorMaker 3.3.2 translates no group offset below it") and older[1]["severity"] == "error"


def test_a_source_offset_going_back_is_a_new_copy_not_a_recreation():
    # MirrorMaker copies again from source offset 0 (its own offsets were lost): OffsetSyncStore drops the older syncs.
    trail = trail_of(*HISTORY, ("orders", 0, 201, 0), ("orders", 0, 0, 10))
    assert trail.recreations == {} and trail.latest[("orders", 0)] == (0, 10)
    assert findings(trail, ends={("primary.orders", 0): 300}) == []


def test_syncs_and_checkpoints_of_topics_that_are_gone():
    trail = trail_of(("orders", 0, 5, 5), ("deleted", 0, 7, 7), ("payments", 1, 3, 3))
    checkpoints = [Checkpoint("app", "primary.deleted", 0, 7, 7, ""), CHECKPOINT._replace(downstream_offset=5)]
    found = findings(trail, checkpoints, ends={("primary.orders", 0): 6})
    assert [(f["check"], f["severity"]) for f in found] == [("stale_offset_syncs", "warning"), ("stale_checkpoints", "warning")]
    assert ("topics that no longer exist on primary: deleted[0] and for remote topics that do not exist on secondary: "
            "primary.payments[1] (of payments)") in found[0]["message"]
    assert "group app primary.deleted[0]" in found[1]["message"]


def test_only_the_flows_topics_and_not_heartbeats_count():
    checkpoints = [Checkpoint("app", "primary.other", 0, 9, 9, ""), Checkpoint("app", "primary.heartbeats", 0, 9, 9, "")]
    assert findings(trail_of(*HISTORY), checkpoints, topics=["orders"]) == []


@pytest.mark.parametrize("flow, syncs_topic, holder, checkpoints_topic", [
    ({"separator": "_", "version": (3, 9, 0)}, "mm2-offset-syncs_secondary_internal", "primary", "primary_checkpoints_internal"),
    ({"offset_syncs_location": "target"}, "mm2-offset-syncs.primary.internal", "secondary", "primary.checkpoints.internal"),
])
def test_names_follow_release_separator_and_location(flow, syncs_topic, holder, checkpoints_topic):
    remote = FlowNames("primary", "secondary", **flow).remote_topic("orders")
    found = findings(trail_of(*HISTORY), [CHECKPOINT._replace(topic=remote)], ends={(remote, 0): 0}, **flow)
    assert found[0]["cluster"] == holder and found[0]["message"].startswith("%s on %s" % (syncs_topic, holder))
    assert found[1]["message"].startswith("%s on secondary" % checkpoints_topic)


def test_long_lists_are_cut():
    trail = trail_of(*[("orders", p, 10, 10) for p in range(8)])
    found = findings(trail, ends={("primary.orders", p): 0 for p in range(8)})
    assert "orders[4]: sync 10 -> 10" in found[0]["message"] and "orders[5]" not in found[0]["message"]
    assert found[0]["message"].endswith("; and 3 more")
