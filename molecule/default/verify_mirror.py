# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Independent check of a finished mirror, with a plain kafka-python client (not the collection's code).

Exit 0 when every source topic matching --topics has a target twin under the default replication
policy with the same partition count and the same records per partition, the group's offsets exist on
the target; otherwise print every difference and exit 1.
"""
from __future__ import annotations

import argparse
import re
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

# Sandbox quirks (docs/reference/test-brokers.md): noida answers a fetch with the whole topic, so the
# receive cap is raised; kafka-python 3.0.12 breaks on noida's DescribeCluster v0, so the API version is pinned.
CLIENT = {"api_version": (2, 7), "receive_message_max_bytes": 1024 * 1024 * 1024, "request_timeout_ms": 30000}


def partition_records(bootstrap: str, topic: str) -> dict[int, list[tuple]]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **CLIENT)
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        ends = consumer.end_offsets(partitions)
        records = {tp.partition: [] for tp in partitions}
        remaining = {tp for tp in partitions if ends[tp] > 0}
        while remaining:
            for tp, batch in consumer.poll(timeout_ms=2000).items():
                for record in batch:
                    if record.offset < ends[tp]:
                        records[tp.partition].append((record.key, record.value, tuple(sorted(record.headers or []))))
                if consumer.position(tp) >= ends[tp]:
                    remaining.discard(tp)
        return records
    finally:
        consumer.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", required=True, help="bootstrap servers of the source cluster")
    parser.add_argument("--target", required=True, help="bootstrap servers of the target cluster")
    parser.add_argument("--source-alias", default="primary")
    parser.add_argument("--topics", required=True, help="regex of mirrored source topics")
    parser.add_argument("--exclude", default="^$")
    parser.add_argument("--group", required=True)
    parser.add_argument("--group-timeout", type=float, default=90, help="seconds to wait for the group's synced offsets")
    args = parser.parse_args()

    source, target = args.source, args.target
    problems = []

    admin = KafkaAdminClient(bootstrap_servers=source, **CLIENT)
    topics = sorted(t for t in admin.list_topics() if re.fullmatch(args.topics, t) and not re.fullmatch(args.exclude, t))
    admin.close()
    if not topics:
        problems.append(f"no source topic matches {args.topics!r}")
    for topic in topics:
        remote = f"{args.source_alias}.{topic}"
        expected, actual = partition_records(source, topic), partition_records(target, remote)
        if sorted(expected) != sorted(actual):
            problems.append(f"{remote}: partitions {sorted(actual)} on secondary, {sorted(expected)} on primary")
            continue
        for partition, records in expected.items():
            if actual[partition] != records:
                problems.append(f"{remote}[{partition}]: {len(actual[partition])} records on secondary differ from {len(records)} on primary")
        print(f"{topic} -> {remote}: {sum(map(len, expected.values()))} records in {len(expected)} partitions compared")

    target_admin = KafkaAdminClient(bootstrap_servers=target, **CLIENT)
    deadline = time.monotonic() + args.group_timeout  # MirrorMaker syncs group offsets periodically
    while True:
        offsets = target_admin.list_group_offsets(args.group).get(args.group, {})
        remote = {tp: o for tp, o in offsets.items() if tp.topic.startswith(f"{args.source_alias}.")}
        if remote or time.monotonic() > deadline:
            break
        time.sleep(2)
    target_admin.close()
    if not remote:
        problems.append(f"group {args.group} has no committed offsets on a mirrored topic on the target: {offsets}")
    else:
        print(f"group {args.group} on secondary: {sorted((tp.topic, tp.partition, o.offset) for tp, o in remote.items())}")

    for problem in problems:
        print(f"PROBLEM: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
