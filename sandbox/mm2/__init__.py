"""The sandbox's MirrorMaker 2 stand-in: `python -m sandbox.mm2 <connect-mirror-maker.properties> [--clusters A,B]`.

Test infrastructure only. No Kafka distribution (and so no real MirrorMaker 2) can be installed here,
so `<sandbox>/kafka_home/bin/connect-mirror-maker.sh` runs this instead. It reads the same properties
file the mirrormaker2 role renders and writes what real MM2 writes, in the real topic names and
record formats (kafkaops.mirror mm2_records): remote topics under the replication policy's names,
`mm2-offset-syncs.<target>.internal`, `<source>.checkpoints.internal`, `heartbeats`, and its progress
in `mm2-offsets.<source>.internal` on the target (Connect's offsets topic of a dedicated MM2).

What it models: the Kafka release of its Kafka home (release.py: keys newer than that release are ignored,
as real MirrorMaker 2 ignores them, so 2.4.1 reads topics.blacklist and never topics.exclude); clusters and
`A->B.enabled` flows; topics / topics.exclude and groups / groups.exclude
regexes; the default and identity replication policies with their separator and cycle detection;
remote topics created with the source's partition count, the replication factor and the source's
non-default configs (partitions added when the source grows); partition-to-partition copies keeping
key, value, headers and timestamp, at least once; offset-syncs with offset.lag.max semantics;
checkpoints translated with the OffsetSyncStore rule; sync.group.offsets for groups without active
members on the target; heartbeats for every herder pair; the topic refresh interval (groups are listed
again at every checkpoint interval instead of refresh.groups.interval.seconds); resume after restart;
SIGTERM stops cleanly after committing what was copied.

What it does not model: Connect workers, tasks.max and task rebalancing, the REST API and
dedicated.mode.enable.internal.rest, exactly-once (transactions), ACL sync, periodic topic-config
sync after creation, SASL/TLS, JVM settings (KAFKA_HEAP_OPTS, KAFKA_LOG4J_OPTS, KAFKA_OPTS are logged
and ignored), metrics/JMX, and throughput: it is a single-threaded kafka-python loop. Of the release
rules, internal topic names always use '.' (the separator applies to them from 3.1 on, KIP-690, which
only matters with a custom replication.policy.separator).
"""
