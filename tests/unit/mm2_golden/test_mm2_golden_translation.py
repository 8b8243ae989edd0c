# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Golden offset translations (tests/support/golden_cases.py, worked out by hand from the Kafka source) run against both the sandbox's
MirrorMaker 2 stand-in and the collection's translation. The two are written independently; a rule both get wrong
fails here on both sides instead of being agreed on."""
import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror import offset_translation as mm2_offset_translation
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records import Checkpoint
from sandbox.mm2.behaviour import Behaviour
from sandbox.mm2.sync_store import OffsetSyncStore
from tests.support.golden_cases import CASES

TOPIC, PARTITION, GROUP = "orders", 0, "app"


def stand_in(case):
    behaviour = Behaviour(case.release)
    store = OffsetSyncStore(behaviour)
    for upstream, downstream in case.at_start:
        store.add(TOPIC, PARTITION, upstream, downstream)
    store.finish_initial_read()
    for upstream, downstream in case.live:
        store.add(TOPIC, PARTITION, upstream, downstream)
    translated = store.translate(TOPIC, PARTITION, case.group_offset)
    return None if translated is None or translated < behaviour.min_checkpoint_downstream else translated


def product(case):
    checkpoint = None
    if case.checkpoint:
        checkpoint = Checkpoint(GROUP, "primary." + TOPIC, PARTITION, case.checkpoint[0], case.checkpoint[1], "")
    version = mm2_offset_translation.parse_version("%d.%d.%d" % case.release)
    history = mm2_offset_translation.SyncHistory.of(version, case.all_syncs)
    return mm2_offset_translation.translate(case.group_offset, checkpoint, history, version=version).offset


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_stand_in_translates_like_mirrormaker_2(case):
    assert stand_in(case) == case.expected, case.rule


@pytest.mark.parametrize("case", [case for case in CASES if case.product], ids=lambda case: case.name)
def test_collection_translates_like_mirrormaker_2(case):
    assert product(case) == case.expected, case.rule
