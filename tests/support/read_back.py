# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Independent read-back for the kafka integration tests: plain kafka-python, none of the collection's code.

Run with a sandbox node's python (names resolve there as on that node):
    python read_back.py BOOTSTRAP topics            -> {"topics": {name: {"partitions", "replication_factor"}}}
    python read_back.py BOOTSTRAP configs NAME...   -> {"configs": {name: {key: value}}} (every key the broker reports)
    python read_back.py BOOTSTRAP produce TOPIC N   -> produces N records to partition 0, one request each
    python read_back.py BOOTSTRAP send-once TOPIC   -> {"acknowledged": bool, "error"}: one record, 5 s for the topic's
                                                       metadata (a topic that does not exist is created only by auto-create)
    python read_back.py BOOTSTRAP keyed TOPIC PARTITIONS PER_PARTITION
                                                    -> PER_PARTITION records to each partition, keyed p<partition>-<index>
    python read_back.py BOOTSTRAP sequenced TOPIC KEYS PER_KEY [FIRST]
                                                    -> PER_KEY records for each of KEYS keys k<j>, valued s<i> (i counts
                                                       up per key from FIRST, default 0), partitioned by the producer's
                                                       own partitioner
    python read_back.py BOOTSTRAP records TOPIC     -> {"records": {partition: [[key, value], ...]}} (as keys, with values)
    python read_back.py BOOTSTRAP commit GROUP TOPIC PARTITION OFFSET
    python read_back.py BOOTSTRAP create NAME PARTITIONS REPLICATION_FACTOR
    python read_back.py BOOTSTRAP recreate NAME PARTITIONS REPLICATION_FACTOR
                                                    -> deletes the topic, waits until it is gone, creates it again empty
    python read_back.py BOOTSTRAP set-config NAME KEY VALUE
    python read_back.py BOOTSTRAP delete-config NAME KEY
                                                    -> sets (removes) one config override of the topic
    python read_back.py BOOTSTRAP delete NAME       -> deletes the topic and waits until it is gone
    python read_back.py BOOTSTRAP large TOPIC BYTES -> one record of BYTES bytes to partition 0
    python read_back.py BOOTSTRAP keys TOPIC        -> {"keys": {partition: [key, ...]}} (every record to the end, in order)
    python read_back.py BOOTSTRAP group GROUP       -> {"offsets": {"topic:partition": committed offset}}
    python read_back.py BOOTSTRAP in-sync           -> {"under_replicated": ["topic:partition", ...], "not_preferred": [...]}
                                                       (every topic, internal ones included: fewer in-sync replicas than
                                                       replicas; led by a replica other than the first, the preferred one)
    python read_back.py BOOTSTRAP acls              -> {"acls": [[principal, resource_type, pattern_type, name, operation,
                                                       permission, host], ...]} (every ACL of the cluster, sorted)
    python read_back.py BOOTSTRAP acl-delete PRINCIPAL RESOURCE_TYPE PATTERN_TYPE NAME OPERATION
                                                    -> {"deleted": n}: the matching ALLOW ACLs (types and operation by
                                                       kafka-python's enum names: TOPIC PREFIXED ... READ)

Every client authenticates with the kafka-python options of the environment variable READ_BACK_CLIENT (JSON; a secure
listener's security_protocol, sasl_* and ssl_* options), PLAINTEXT without it.
"""
import json
import os
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ConfigResource, ResourcePatternFilter, ResourceType
from kafka.structs import OffsetAndMetadata


def client(bootstrap):
    """The options of every client of this run: the bootstrap servers and READ_BACK_CLIENT's security options."""
    return {"bootstrap_servers": bootstrap, **json.loads(os.environ.get("READ_BACK_CLIENT") or "{}")}


def main(bootstrap, command, *args):
    if command == "produce":
        producer = KafkaProducer(**client(bootstrap), linger_ms=0, request_timeout_ms=10000)
        for index in range(int(args[1])):
            # One record per request: tansu's ListOffsets is wrong for multi-record batches (docs/reference/test-brokers.md).
            producer.send(args[0], key=b"k%d" % index, value=b"v%d" % index, partition=0).get(timeout=10)
        producer.close()
        return {"produced": int(args[1])}
    if command == "send-once":
        producer = KafkaProducer(**client(bootstrap), max_block_ms=5000, request_timeout_ms=10000)
        try:
            producer.send(args[0], key=b"once", value=b"once").get(timeout=30)
            return {"acknowledged": True, "error": None}
        except Exception as exc:  # no metadata for the topic in max_block_ms: it does not exist and was not created
            return {"acknowledged": False, "error": repr(exc)[:300]}
        finally:
            producer.close(timeout=5)
    if command == "keyed":
        return {"produced": produce_keyed(bootstrap, args[0], int(args[1]), int(args[2]))}
    if command == "sequenced":
        producer = KafkaProducer(**client(bootstrap), acks="all", linger_ms=5)
        first = int(args[3]) if len(args) > 3 else 0
        for index in range(first, first + int(args[2])):
            for key in range(int(args[1])):
                producer.send(args[0], key=b"k%d" % key, value=b"s%d" % index)
        producer.flush()
        producer.close()
        return {"produced": int(args[1]) * int(args[2])}
    if command == "records":
        return {"records": {partition: [[r.key.decode(), r.value.decode()] for r in records]
                            for partition, records in read_topic(bootstrap, args[0]).items()}}
    if command == "commit":
        group, topic, partition, offset = args[0], args[1], int(args[2]), int(args[3])
        consumer = KafkaConsumer(**client(bootstrap), group_id=group, enable_auto_commit=False, request_timeout_ms=30000)
        # A real cluster's first commit creates __consumer_offsets (its coordinator is not ready at once): retry.
        deadline = time.monotonic() + 180
        while True:
            try:
                consumer.commit({TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1)})
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(2)
        consumer.close()
        return {"committed": offset}
    if command == "keys":
        return {"keys": read_keys(bootstrap, args[0])}
    if command == "large":
        producer = KafkaProducer(**client(bootstrap), max_request_size=2 * int(args[1]) + 1024, acks="all")
        producer.send(args[0], key=b"large", value=b"x" * int(args[1]), partition=0).get(timeout=30)
        producer.close()
        return {"produced": 1}
    admin = KafkaAdminClient(**client(bootstrap), request_timeout_ms=10000, client_id="kafka-tests-read-back")
    if command == "acl-delete":
        principal, resource_type, pattern_type, name, operation = args
        match = ACLFilter(principal=principal, host="*", operation=ACLOperation[operation], permission_type=ACLPermissionType.ALLOW,
                          resource_pattern=ResourcePatternFilter(ResourceType[resource_type], name, ACLResourcePatternType[pattern_type]))
        (_filter, deleted, error), = admin.delete_acls([match])
        admin.close()
        assert not getattr(error, "errno", 0), error
        return {"deleted": len(deleted)}
    if command == "acls":
        any_acl = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                            resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))
        acls, error = admin.describe_acls(any_acl)
        admin.close()
        assert error.errno == 0, error
        return {"acls": sorted([acl.principal, acl.resource_pattern.resource_type.name, acl.resource_pattern.pattern_type.name,
                                acl.resource_pattern.resource_name, acl.operation.name, acl.permission_type.name, acl.host] for acl in acls)}
    try:
        if command == "topics":
            topics = {}
            for topic in admin.describe_topics():
                if not topic["error_code"]:
                    topics[topic["name"]] = {
                        "partitions": len(topic["partitions"]),
                        "replication_factor": max((len(p["replica_nodes"]) for p in topic["partitions"]), default=0),
                    }
            return {"topics": topics}
        if command == "create":
            admin.create_topics({args[0]: {"num_partitions": int(args[1]), "replication_factor": int(args[2])}})
            return {"created": args[0]}
        if command in ("delete", "recreate"):
            admin.delete_topics([args[0]])
            deadline = time.monotonic() + 60
            while args[0] in admin.list_topics():
                assert time.monotonic() < deadline, f"{args[0]} still exists 60 s after its deletion"
                time.sleep(0.5)
            if command == "delete":
                return {"deleted": args[0]}
            while True:  # a broker may still be removing the old partitions' logs: TopicAlreadyExists for a moment
                try:
                    admin.create_topics({args[0]: {"num_partitions": int(args[1]), "replication_factor": int(args[2])}})
                    return {"recreated": args[0]}
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
        if command in ("set-config", "delete-config"):
            change = ("SET", args[2]) if command == "set-config" else ("DELETE", None)
            admin.alter_configs([ConfigResource("TOPIC", args[0], configs={args[1]: change})])
            return {command: args[1]}
        if command == "group":
            offsets = admin.list_group_offsets(args[0]).get(args[0], {})
            return {"offsets": {f"{tp.topic}:{tp.partition}": meta.offset for tp, meta in offsets.items()}}
        if command == "in-sync":
            # kafka-python 3's DescribeTopics fields: partition_index, replica_nodes, isr_nodes.
            partitions = [(described["name"], p) for described in admin.describe_topics() for p in described["partitions"]]
            under = sorted("%s:%d" % (name, p["partition_index"]) for name, p in partitions if len(p["isr_nodes"]) < len(p["replica_nodes"]))
            moved = sorted("%s:%d" % (name, p["partition_index"]) for name, p in partitions if p["leader_id"] != p["replica_nodes"][0])
            return {"under_replicated": under, "not_preferred": moved}
        if command == "configs":
            described = admin.describe_configs([ConfigResource("TOPIC", name) for name in args], config_filter="all").get("topic", {})
            return {"configs": {name: {key: entry["value"] for key, entry in described.get(name, {}).items()} for name in args}}
    finally:
        admin.close()
    raise SystemExit(f"unknown command {command}")


def produce_keyed(bootstrap, topic, partitions, per_partition):
    """Records keyed p<partition>-<index> (a key says where its record came from), valued v<index>; returns how many."""
    producer = KafkaProducer(**client(bootstrap), acks="all", linger_ms=5)
    for partition in range(partitions):
        for index in range(per_partition):
            producer.send(topic, key=b"p%d-%d" % (partition, index), value=b"v%d" % index, partition=partition)
    producer.flush()
    producer.close()
    return partitions * per_partition


def read_keys(bootstrap, topic):
    return {partition: [r.key.decode() for r in records] for partition, records in read_topic(bootstrap, topic).items()}


def read_topic(bootstrap, topic):
    """read_records of the whole `topic` through a consumer of its own, closed after."""
    consumer = KafkaConsumer(**client(bootstrap), enable_auto_commit=False, group_id=None, request_timeout_ms=10000)
    try:
        return read_records(consumer, topic, 120)
    finally:
        consumer.close()


def read_records(consumer, topic, timeout_s=60):
    """{partition: [ConsumerRecord, ...]} of the whole `topic`, from its beginning to the end offsets it has when the read
    starts (records written meanwhile are left out), through `consumer` (assigned: no group joins); {} for a topic the
    cluster does not know. The one consume helper of the tests: they import it, and this script's `keys` runs it on a node.
    AssertionError when the end is not reached in timeout_s."""
    partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
    if not partitions:
        return {}
    consumer.assign(partitions)
    consumer.seek_to_beginning(*partitions)
    ends = consumer.end_offsets(partitions)
    records = {tp.partition: [] for tp in partitions}
    deadline = time.monotonic() + timeout_s
    while any(consumer.position(tp) < ends[tp] for tp in partitions):
        if time.monotonic() > deadline:
            raise AssertionError(f"could not read {topic} to its end offsets {ends} in {timeout_s} s")
        for tp, batch in consumer.poll(timeout_ms=500).items():
            records[tp.partition].extend(r for r in batch if r.offset < ends[tp])
    return records


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
