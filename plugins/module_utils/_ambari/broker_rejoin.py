# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the Kafka brokers a restart took down are back in the cluster, read from Kafka's own metadata.

Ambari ends a RESTART request COMPLETED when the start script returns, which can be before the broker has
registered and caught up; restarting the next broker then can leave partitions without enough in-sync replicas.
Back means: every broker id registered before the restart is registered again, and every replica that was in a
partition's in-sync set before is in it again (unless a reassignment took it out of the partition's replicas meanwhile).
Replicas, not whole partitions: the view before is one broker's metadata cache, and caches lag the ISR changes the
leaders made (ZooKeeper-mode brokers learn them from the controller, which batches them for seconds; KRaft brokers from
the metadata log), so in a rolling restart a partition can read under-replicated before the next restart because the
broker answering has not yet learnt of the previous broker's return that another broker's answer showed. Comparing
"fully in sync" would then wait for nothing on that partition, while its replica on the broker just restarted must
still come back. Brokers are compared by id, so the check holds whatever names or addresses they advertise (FQDNs before IP
advertising is on, IP addresses after).
"""
from __future__ import annotations

import time
from collections import namedtuple
from dataclasses import dataclass
from typing import Callable

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaConnectionError, KafkaError
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.topic_admin import topics_from_metadata

ClusterView = namedtuple("ClusterView", ["brokers", "replicas", "isr"])


class BrokersNotBack(Exception):
    """The brokers did not come back in time; the message says which brokers and partitions are missing."""


class ClusterNotReadable(Exception):
    """The view before a restart could not be read; nothing was restarted after that read."""


def read_view(kafka_params):
    """ClusterView(broker ids, {(topic, partition): replica ids}, {(topic, partition): in-sync replica ids}) from a fresh
    metadata read: brokers and partitions from one broker's answer (KafkaConnection.metadata says why)."""
    with KafkaConnection(kafka_params) as kafka:
        metadata = kafka.metadata()
    topics = topics_from_metadata(metadata["topics"])
    details = [(name, p) for name, topic in topics.items() for p in topic["partition_details"]]
    return ClusterView(
        frozenset(b["node_id"] for b in metadata["brokers"]),
        {(name, p["partition"]): frozenset(p["replicas"]) for name, p in details},
        {(name, p["partition"]): frozenset(p["isr"]) for name, p in details},
    )


def still_missing(before, now):
    """What keeps `now` from being back to `before`, as short phrases (empty when back)."""
    missing = []
    brokers = sorted(before.brokers - now.brokers)
    if brokers:
        missing.append("brokers " + ", ".join(str(b) for b in brokers) + " not registered")
    # An answer that lists brokers but no partition at all says nothing about the ISR: a metadata cache being filled (a
    # ZooKeeper-mode controller sends a broker the live brokers and the partition states in separate UpdateMetadata
    # requests), not every topic deleted during a restart.
    if before.isr and not now.isr:
        missing.append("the broker that answered lists no partitions yet (its metadata cache is not filled)")
        return missing
    # A topic deleted meanwhile is not waited for, nor a replica a reassignment moved away.
    out_of_sync = {}
    for partition in sorted(before.isr.keys() & now.isr.keys()):
        lagging = (before.isr[partition] & now.replicas[partition]) - now.isr[partition]
        if lagging:
            out_of_sync[partition] = sorted(lagging)
    if out_of_sync:
        shown = ", ".join(f"{topic}-{partition} (replicas {', '.join(str(r) for r in lagging)})"
                          for (topic, partition), lagging in list(out_of_sync.items())[:5])
        more = f" and {len(out_of_sync) - 5} more" if len(out_of_sync) > 5 else ""
        missing.append(f"{len(out_of_sync)} partitions not back in sync ({shown}{more})")
    return missing


@dataclass
class RejoinWaiter:
    """Reads the cluster before a restart and waits after it until the cluster is back to that view (`reader`, `clock` and
    `sleep` are there for the tests)."""

    kafka_params: dict
    poll_interval: float = 5.0
    reader: Callable = read_view
    clock: Callable = time.monotonic
    sleep: Callable = time.sleep

    def snapshot(self, timeout):
        """The view to come back to; an unreadable cluster is an error here, before the restart.

        A broker that has just started answers from an empty cache until the controller's first UpdateMetadata reaches it
        (Kafka 2.4.1's MetadataCache lists no broker then): such an answer is read again, for up to `timeout` seconds, as a
        view of nothing would make the wait after the restart wait for nothing."""
        deadline = self.clock() + timeout
        while True:
            try:
                view = self.reader(self.kafka_params)
            except (KafkaConnectionError, KafkaError) as exc:
                raise ClusterNotReadable(str(exc)) from None
            if view.brokers:
                return view
            if self.clock() >= deadline:
                raise ClusterNotReadable(f"every metadata answer for {timeout} s listed no broker (a broker's cache not filled yet)")
            self.sleep(self.poll_interval)

    def wait(self, before, timeout):
        deadline = self.clock() + timeout
        while True:
            try:
                missing = still_missing(before, self.reader(self.kafka_params))
            except (KafkaConnectionError, KafkaError) as exc:
                # A restarting broker may be the one the bootstrap servers point at.
                missing = [f"cluster not readable ({exc})"]
            if not missing:
                return
            if self.clock() >= deadline:
                raise BrokersNotBack("; ".join(missing))
            self.sleep(self.poll_interval)
