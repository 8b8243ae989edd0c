# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 2's source offsets written from MirrorMaker 1's group (plugins/module_utils/_mirror/mm1_handover.py): the
record bytes and partition MirrorMaker 2 itself would use, and the plan."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror import mm1_handover as mh
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import compile_patterns


def java_string_hash(text):
    value = 0
    for char in text:
        value = (31 * value + ord(char)) & 0xFFFFFFFF
    return value


def test_the_key_is_the_json_mirrormaker_2_writes():
    # Connect's OffsetStorageWriter: [connector, partition map]; JsonConverter writes MirrorUtils.wrapPartition's HashMap in
    # its iteration order, the order of the keys' buckets in a 16-bucket table.
    buckets = {name: (java_string_hash(name) ^ (java_string_hash(name) >> 16)) & 15 for name in ("topic", "partition", "cluster")}
    assert sorted(buckets, key=buckets.get) == ["cluster", "partition", "topic"]
    assert mh.source_key("MirrorSourceConnector", "primary", "m1-orders", 2) == (
        b'["MirrorSourceConnector",{"cluster":"primary","partition":2,"topic":"m1-orders"}]')
    assert mh.source_value(41) == b'{"offset":41}'
    assert mh.parse_key(mh.source_key("MirrorSourceConnector", "primary", "m1-orders", 2)) == (
        "MirrorSourceConnector", "primary", "m1-orders", 2)
    assert mh.parse_key(b'["MirrorCheckpointConnector",{"x":1}]') is None
    assert mh.parse_key(b"not json") is None


@pytest.mark.parametrize("key, java_murmur2", [
    # org.apache.kafka.common.utils.UtilsTest.testMurmur2 (3.2.0)
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
])
def test_the_partition_is_the_default_partitioners(key, java_murmur2):
    for partitions in (1, 7, 25):
        assert mh.partition_for(key, partitions) == (java_murmur2 & 0x7FFFFFFF) % partitions


def test_plan_seeds_writes_committed_minus_one_and_never_overwrites():
    committed = {("m1-orders", 0): 12, ("m1-orders", 1): 0, ("m1-orders", 2): 7, ("other", 0): 5, ("m1-tmp", 0): 3}
    existing = {("m1-orders", 2): 30}
    seeds, kept, not_seeded = mh.plan_seeds(committed, existing, compile_patterns(["m1-.*"], "topics"),
                                            compile_patterns(["m1-tmp"], "topics_exclude"))
    assert seeds == {("m1-orders", 0): 11}  # MirrorMaker 2 seeks the stored offset plus one: 12
    assert kept == {("m1-orders", 2): 30}
    assert list(not_seeded) == [("m1-orders", 1)]


def test_the_offsets_topic_is_mirrormaker_2s_default():
    assert mh.offsets_topic("primary") == "mm2-offsets.primary.internal"
