# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A steady acks=all producer and an in-sync watch, run with a sandbox node's python (the lab's names resolve there, as a
client's do on a cluster node); plain kafka-python, none of the collection's code.

    python steady_producer.py BOOTSTRAP TOPIC [RATE]

Sends keyed records (key-<n>, value-<n>) to TOPIC at RATE per second (default 50) with acks=all, one at a time, until it
receives SIGTERM (a node's own mount namespace may not see a stop file the test writes); meanwhile samples every 100 ms
which partitions of the whole cluster are under-replicated (fewer in-sync replicas than replicas: a rolling restart must
wait for every partition, __consumer_offsets and MirrorMaker's topics included, not only the one written to), with each
sample's time. Each sample asks the next broker in turn: a sample is that broker's metadata cache, which the controller
updates on every broker separately, so one broker slow to apply an update cannot stand for the whole cluster. Prints one
JSON line at the end: sent, acknowledged, failed sends (with their errors) and the samples
[[epoch ms, ["topic:partition-out:<replica ids missing from its ISR>" under-replicated, ...], broker id, partitions listed], ...] ([epoch ms, None, error] for a
failed read). A broker that has just registered answers from an empty cache until the controller sends it the partitions:
no under-replicated partition, and none listed at all; the count lets the reader tell that from a cluster in sync.
"""
import json
import signal
import sys
import threading
import time

from kafka import KafkaAdminClient, KafkaProducer
from kafka.protocol.metadata import MetadataRequest


async def _metadata_from(manager, broker_id):
    # kafka-python 3 has no public call that sends to a broker of the caller's choosing (describe_topics asks the least
    # loaded one): the same request its admin client sends, through the admin client's own connection manager.
    request = MetadataRequest(topics=None, allow_auto_topic_creation=False)
    return (await manager.send(request, node_id=broker_id)).to_dict()


def watch(bootstrap, stop, samples):
    admin, turn, brokers = None, 0, []
    try:
        while not stop.is_set():
            broker_id = None
            try:
                if admin is None:
                    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=3000, client_id="steady-producer-watch")
                # The brokers registered in the last answer (the least loaded one asks first).
                broker_id = brokers[turn % len(brokers)] if brokers else None
                turn += 1
                metadata = admin._manager.run(_metadata_from, admin._manager, broker_id)  # pylint: disable=protected-access
                brokers = sorted(broker["node_id"] for broker in metadata["brokers"])
                # Every topic, internal ones included. kafka-python 3's Metadata fields: partition_index, replica_nodes, isr_nodes.
                partitions = [(topic["name"], p) for topic in metadata["topics"] for p in topic["partitions"]]
                # Each with the replicas missing from its ISR, so that a failure says which broker lagged.
                under = sorted("%s:%d-out:%s" % (name, p["partition_index"], ",".join(map(str, sorted(set(p["replica_nodes"]) - set(p["isr_nodes"])))))
                               for name, p in partitions if len(p["isr_nodes"]) < len(p["replica_nodes"]))
                samples.append([int(time.time() * 1000), under, broker_id, len(partitions)])
            except Exception as exc:  # a broker going away mid-request: record that nothing was known then, and start afresh
                samples.append([int(time.time() * 1000), None, "broker %s: %s" % (broker_id, repr(exc)[:200])])
                if admin is not None:
                    admin.close()
                admin = None
            time.sleep(0.1)
    finally:
        if admin is not None:
            admin.close()


def main(bootstrap, topic, rate="50"):
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stopping.set())
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", retries=2147483647, max_in_flight_requests_per_connection=1,
                             request_timeout_ms=30000, delivery_timeout_ms=120000, linger_ms=0, client_id="steady-producer")
    stop, samples = threading.Event(), []
    watcher = threading.Thread(target=watch, args=(bootstrap, stop, samples), daemon=True)
    watcher.start()
    sent = acknowledged = 0
    failed = []
    interval = 1.0 / float(rate)
    while not stopping.is_set():
        key = b"key-%d" % sent
        try:
            producer.send(topic, key=key, value=b"value-%d" % sent).get(timeout=130)
            acknowledged += 1
        except Exception as exc:
            failed.append([sent, repr(exc)[:300]])
        sent += 1
        time.sleep(interval)
    producer.close(timeout=30)
    stop.set()
    watcher.join(timeout=10)
    print(json.dumps({"sent": sent, "acknowledged": acknowledged, "failed": failed, "samples": samples}))


if __name__ == "__main__":
    main(*sys.argv[1:])
