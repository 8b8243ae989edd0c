# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox's MirrorMaker 2 stand-in: `python -m sandbox.mm2 <connect-mirror-maker.properties> [--clusters A,B]`.

Test infrastructure only. No Kafka distribution (and so no real MirrorMaker 2) can be installed here, so
`<sandbox>/kafka_home/bin/connect-mirror-maker.sh` runs this instead. It reads the properties file the
mirrormaker2 role renders and writes what real MM2 of the Kafka release of its home writes, in the real
topic names and record formats.

It is written from Apache Kafka's connect/mirror and connect/mirror-client sources (tags 2.4.1 to 3.9),
independently of the collection: it shares only the wire-format codec of mm2_records (Checkpoint,
OffsetSync, Heartbeat bytes). Names, filters, sync emission, translation and group selection are its own
(policy.py, filters.py, sync_emitter.py, sync_store.py, checkpoints.py), so a rule the collection gets
wrong is not agreed on by the lab that tests it. records.py is also the one writer of MM2 records for tests
that fake a mirror.

Version modes (behaviour.py; the release comes from the Kafka home, release.py): offset-sync emission
(one per lifetime and drift before 3.4.1, every offset.lag.max from 3.4.1, delayed syncs at commit from
3.7), translation (latest sync d + (g - u) before 3.4.1, with identity for partitions without syncs
before 3.3; bounded history cleared on upstream rewinds, d or d + 1, from 3.4.1), which groups get
checkpoints (no simple groups before 2.8, new groups only after refresh.groups.interval.seconds),
sync.group.offsets (2.7+), remote topic configs (at creation from 2.8, replace-all sync before 3.5,
incremental after), internal topic names (separator from 3.1, offset-syncs.topic.location from 3.0, named
after the other cluster), IdentityReplicationPolicy (3.0+), exactly-once transactions (3.5+). Connect
source offsets are committed every offset.flush.interval.ms, so kill -9 makes it copy again.

Connect shows only as Kafka sees it (connect.py): each herder's mm2-configs/offsets/status topics and its connectors'
source offsets. Graded by real MirrorMaker 2 of 3.2.0 and 4.3.1 in tests/integration/differential (release.py says what
that covers; 2.4.1 cannot be: Maven Central has no connect-mirror 2.4.1); the differences found are in
docs/reference/mm2-records.md.

What it does not model: Connect's group protocol, tasks.max, rebalancing and the task restart real MirrorMaker 2 does
once at start, the REST API, ACL sync, offset syncs dropped (before 3.7) or replaced (3.7+) while 10 are in flight,
SASL/TLS, JVM settings (logged and ignored), metrics, and throughput (a single-threaded kafka-python loop).
"""
