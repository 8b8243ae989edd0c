# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read one side of the mirror: topic metadata, offsets and the records of one offset range.

Two interchangeable backends: confluent-kafka (librdkafka, much faster) when importable, else
kafka-python. Both yield the same records, so fingerprints and reports do not depend on which one ran.
Records come in batches, as the client fetched them, column by column (Batch): taking one field of every
record of a batch is a loop in C, where a tuple per record would cost a Python step per record.
"""
from __future__ import annotations

import time
from collections import namedtuple
from operator import attrgetter, itemgetter

from .connection import kerberos_login
from .errors import ValidationUnavailable

RawRecord = namedtuple("RawRecord", "offset key value headers timestamp")
# The records of one fetched batch of one partition, as columns: offsets, keys, values, headers (None or a list of
# (name, value)) and timestamps, each a list in offset order.
Batch = namedtuple("Batch", "offsets keys values headers timestamps")
_TIMESTAMP_VALUE = itemgetter(1)  # confluent-kafka's Message.timestamp() is (type, value)

CLIENTS = ("auto", "confluent-kafka", "kafka-python")
# Only needed by librdkafka; nothing is ever committed, but it looks the group's coordinator up, which a principal may do only
# with Describe on the group (kafka_mirror_acls grants it: plugins/module_utils/_mm2/acls.py VALIDATION_GROUP).
_GROUP_ID = "kafkaops-mirror-validation"
_POLL_BATCH = 10000


def confluent_available():
    try:
        import confluent_kafka  # noqa: F401 pylint: disable=unused-import
    except ImportError:
        return False
    return True


_CONFLUENT_MECHANISMS = {}


def confluent_supports(mechanism):
    """Whether this confluent-kafka's librdkafka has the SASL `mechanism`: PyPI's wheels are built without GSSAPI (no Cyrus
    SASL: "No provider for SASL mechanism GSSAPI"), which only creating a client tells (no broker is reached)."""
    if mechanism not in _CONFLUENT_MECHANISMS:
        from confluent_kafka import KafkaException, Producer  # pylint: disable=import-outside-toplevel

        try:
            # Without bootstrap servers and with sasl.kerberos.min.time.before.relogin 0 it connects to nothing and runs no kinit.
            Producer({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism, "sasl.kerberos.min.time.before.relogin": 0})
            _CONFLUENT_MECHANISMS[mechanism] = True
        except KafkaException as error:
            _CONFLUENT_MECHANISMS[mechanism] = "No provider for SASL mechanism" not in str(error)
    return _CONFLUENT_MECHANISMS[mechanism]


def resolve_client(client, connections=()):
    """The client that reads `connections`: 'auto' takes confluent-kafka when it is importable and its librdkafka has every
    connection's SASL mechanism, else kafka-python."""
    if client == "auto":
        mechanisms = {getattr(connection, "sasl_mechanism", None) for connection in connections} - {None}
        usable = confluent_available() and all(confluent_supports(mechanism) for mechanism in mechanisms)
        return "confluent-kafka" if usable else "kafka-python"
    return client


def open_reader(connection, client="auto", timeout_s=30.0):
    """A reader for `connection` with the requested client ('auto' prefers confluent-kafka)."""
    if resolve_client(client, [connection]) == "confluent-kafka":
        return ConfluentReader(connection, timeout_s)
    return KafkaPythonReader(connection, timeout_s)


class _Reader:
    name = ""

    def __init__(self, connection, timeout_s):
        self.connection = connection
        self.timeout_s = timeout_s

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _unavailable(self, what, error):
        return ValidationUnavailable(
            "%s failed on %s with %s: %s; check that the brokers are reachable from this host and the security settings"
            % (what, self.connection.bootstrap_servers, self.name, error)
        )

    def read_ranges(self, ranges):
        """(range, RawRecord) for every record of `ranges` (objects with topic, partition, start, end)."""
        for part, batch in self.read_batches(ranges):
            for record in zip(*batch):
                yield part, RawRecord._make(record)

    def _stalled(self, topic, partition, position, end):
        return ValidationUnavailable(
            "reading %s[%d] on %s stalled at offset %d (wanted up to %d) for %.0f s; the broker stopped answering"
            " or the response exceeds the receive size (raise --receive-max-bytes)"
            % (topic, partition, self.connection.bootstrap_servers, position, end, self.timeout_s)
        )


class ConfluentReader(_Reader):
    name = "confluent-kafka"

    def __init__(self, connection, timeout_s):
        super().__init__(connection, timeout_s)
        from confluent_kafka import Consumer  # pylint: disable=import-outside-toplevel

        config = dict(connection.confluent_config())
        config.update({
            "group.id": _GROUP_ID,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            # Records deleted by retention since the snapshot are simply not there: start at the log start.
            "auto.offset.reset": "earliest",
            # A range ends at a known offset; only one whose last offsets hold no record waits for an empty fetch,
            # which the broker holds this long.
            "fetch.wait.max.ms": 100,
        })
        self._consumer = Consumer(config)
        self._known_topics = set()

    def close(self):
        self._consumer.close()

    def _know(self, topics):
        """Look the `topics` up before assigning their partitions: librdkafka would wait about a second for a topic's
        metadata at its first assignment (measured on the sandbox: 0.99 s per topic, 0.005 s once known)."""
        for topic in sorted(set(topics) - self._known_topics):
            try:
                self._consumer.list_topics(topic=topic, timeout=self.timeout_s)
            except Exception as error:  # librdkafka raises KafkaException with a transport error
                raise self._unavailable("looking up %s" % topic, error) from error
            self._known_topics.add(topic)

    def topics(self):
        """{topic: partition count} of every topic the cluster lists."""
        try:
            metadata = self._consumer.list_topics(timeout=self.timeout_s)
        except Exception as error:  # librdkafka raises KafkaException with a transport error
            raise self._unavailable("listing topics", error) from error
        return {name: len(topic.partitions) for name, topic in metadata.topics.items() if topic.error is None}

    def offsets(self, topic, partitions):
        """{partition: (log start offset, end offset)} from ListOffsets."""
        from confluent_kafka import TopicPartition  # pylint: disable=import-outside-toplevel

        result = {}
        for partition in partitions:
            try:
                result[partition] = self._consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=self.timeout_s)
            except Exception as error:
                raise self._unavailable("listing offsets of %s[%d]" % (topic, partition), error) from error
        return result

    def timestamp_types(self, topics):
        """({topic: message.timestamp.type}, problem or None); without DescribeConfigs rights the map is empty."""
        from confluent_kafka.admin import AdminClient, ConfigResource  # pylint: disable=import-outside-toplevel

        if not topics:
            return {}, None
        result, problems = {}, []
        admin = AdminClient(self.connection.confluent_config(consumer=False))
        futures = admin.describe_configs([ConfigResource("topic", topic) for topic in topics], request_timeout=self.timeout_s)
        for resource, future in futures.items():
            try:
                entries = future.result(timeout=self.timeout_s)
            except Exception as error:  # pylint: disable=broad-except  # reported, and timestamps are left out
                problems.append("%s: %s" % (resource.name, error))
                continue
            if "message.timestamp.type" in entries:
                result[resource.name] = entries["message.timestamp.type"].value
        return result, "; ".join(problems) or None

    def read_batches(self, ranges):
        """(range, batch of records) for every record of `ranges`, stopping each early at the fetch high watermark
        (end offsets may be stale).

        The ranges of different partitions are read at once: one partition at a time waits for every fetch in turn
        (measured on the sandbox: 97k records/s from one partition, 306k/s from eight at once). Ranges of one
        partition go to successive waves, as a consumer holds each partition once. The first wave is assigned by this
        call, before a batch is asked for: a comparison opens both sides' reads before reading either, so that their
        first fetches are under way together (one after the other cost ~0.3 s per million records on the sandbox).
        """
        waves, waiting = [], [part for part in ranges if part.start < part.end]
        while waiting:
            wave, later, taken = [], [], set()
            for part in waiting:
                key = (part.topic, part.partition)
                (later if key in taken else wave).append(part)
                taken.add(key)
            waves.append(wave)
            waiting = later
        if waves:
            self._assign(waves[0])
        return self._read_waves(waves)

    def _read_waves(self, waves):
        for index, wave in enumerate(waves):
            if index:
                self._assign(wave)
            yield from self._read_wave(wave)

    def _assign(self, wave):
        from confluent_kafka import TopicPartition  # pylint: disable=import-outside-toplevel

        self._know(part.topic for part in wave)
        assigned = [TopicPartition(part.topic, part.partition, part.start) for part in wave]
        self._consumer.assign(assigned)
        self._consumer.resume(assigned)  # librdkafka keeps a partition paused across unassign/assign

    def _read_wave(self, wave):
        """The batches of an assigned `wave`."""
        from confluent_kafka import Message, TopicPartition  # pylint: disable=import-outside-toplevel

        open_ranges = {(part.topic, part.partition): part for part in wave}
        positions = {key: part.start for key, part in open_ranges.items()}

        def finish(key):
            del open_ranges[key]
            self._consumer.pause([TopicPartition(*key)])  # stop fetching what lies beyond the range

        last_progress = time.monotonic()
        try:
            while open_ranges:
                # consume() waits until it has num_messages or the timeout passed: never ask beyond the ranges' ends,
                # or every range would end with a wait. A range whose end offset has no record (a transaction marker,
                # a compacted record) ends with the end-of-partition event instead.
                wanted = sum(part.end - positions[key] for key, part in open_ranges.items())
                messages = self._consumer.consume(num_messages=min(_POLL_BATCH, wanted), timeout=1.0)
                if not messages:
                    if time.monotonic() - last_progress > self.timeout_s:
                        key, part = list(open_ranges.items())[0]
                        raise self._stalled(part.topic, part.partition, positions[key], part.end)
                    continue
                last_progress = time.monotonic()
                if any(map(Message.error, messages)):  # a loop in C: events are rare
                    records, ended = [message for message in messages if message.error() is None], self._ended(messages)
                else:
                    records, ended = messages, []
                if len(wave) == 1:  # one partition, the comparison's case: no grouping
                    groups = {(wave[0].topic, wave[0].partition): records}
                else:
                    groups = {}
                    for message in records:
                        groups.setdefault((message.topic(), message.partition()), []).append(message)
                for key, group in groups.items():
                    part = open_ranges.get(key)
                    if part is None or not group:
                        continue  # fetched before its range was finished
                    if group[-1].offset() >= part.end:
                        group = [message for message in group if message.offset() < part.end]
                        positions[key] = part.end
                    else:
                        positions[key] = group[-1].offset() + 1
                    if group:
                        yield part, Batch(list(map(Message.offset, group)), list(map(Message.key, group)), list(map(Message.value, group)),
                                          list(map(Message.headers, group)), list(map(_TIMESTAMP_VALUE, map(Message.timestamp, group))))
                for key in ended:
                    if key in open_ranges:
                        positions[key] = open_ranges[key].end  # nothing more to read there (gaps or a stale end)
                for key in [key for key, part in open_ranges.items() if positions[key] >= part.end]:
                    finish(key)
        finally:
            self._consumer.unassign()

    def _ended(self, messages):
        """(topic, partition) of the end-of-partition events among `messages`; any other error fails the read."""
        from confluent_kafka import KafkaError  # pylint: disable=import-outside-toplevel

        ended = []
        for message in messages:
            error = message.error()
            if error is None:
                continue
            key = (message.topic(), message.partition())
            if error.code() != KafkaError._PARTITION_EOF:  # pylint: disable=protected-access
                # An error of no partition is the consumer's own, such as the coordinator lookup of its group id.
                raise self._unavailable("reading %s[%d]" % key if key[0] else "the consumer of group %s" % _GROUP_ID, error)
            ended.append(key)
        return ended


class KafkaPythonReader(_Reader):
    name = "kafka-python"

    def __init__(self, connection, timeout_s):
        super().__init__(connection, timeout_s)
        from kafka import KafkaConsumer  # pylint: disable=import-outside-toplevel
        from kafka.errors import KafkaError  # pylint: disable=import-outside-toplevel

        kerberos_login(connection)
        try:
            self._consumer = KafkaConsumer(
                group_id=None,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                request_timeout_ms=int(timeout_s * 1000) + 5000,
                **connection.kafka_python_config()
            )
        except KafkaError as error:
            raise self._unavailable("connecting", error) from error

    def close(self):
        self._consumer.close()

    def topics(self):
        from kafka.errors import KafkaError  # pylint: disable=import-outside-toplevel

        try:
            names = self._consumer.topics()
            return {name: len(self._consumer.partitions_for_topic(name) or ()) for name in names}
        except KafkaError as error:
            raise self._unavailable("listing topics", error) from error

    def offsets(self, topic, partitions):
        from kafka import TopicPartition  # pylint: disable=import-outside-toplevel
        from kafka.errors import KafkaError  # pylint: disable=import-outside-toplevel

        assigned = [TopicPartition(topic, partition) for partition in partitions]
        try:
            begin = self._consumer.beginning_offsets(assigned)
            end = self._consumer.end_offsets(assigned)
        except KafkaError as error:
            raise self._unavailable("listing offsets of %s" % topic, error) from error
        return {tp.partition: (begin[tp], end[tp]) for tp in assigned}

    def timestamp_types(self, topics):
        from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient  # pylint: disable=import-outside-toplevel

        if not topics:
            return {}, None
        try:
            admin = KafkaAdminClient(**self.connection.kafka_python_config(consumer=False))
            try:
                described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic) for topic in topics], config_filter="all")
            finally:
                admin.close()
        except Exception as error:  # pylint: disable=broad-except  # reported, and timestamps are left out
            return {}, str(error)
        result = {}
        for topic, entries in described.get("topic", {}).items():
            entry = entries.get("message.timestamp.type")
            if entry is not None:
                result[topic] = entry["value"]
        return result, None

    def read_batches(self, ranges):
        """(range, batch of records) for every record of `ranges`, range by range, stopping each early at the fetch
        high watermark (end offsets may be stale)."""
        from kafka import TopicPartition  # pylint: disable=import-outside-toplevel

        for part in ranges:
            if part.start >= part.end:
                continue
            assigned = TopicPartition(part.topic, part.partition)
            self._consumer.assign([assigned])
            self._consumer.seek(assigned, part.start)
            position, end = part.start, part.end
            last_progress = time.monotonic()
            while position < end:
                fetched = self._consumer.poll(timeout_ms=1000, max_records=_POLL_BATCH).get(assigned, ())
                records = [record for record in fetched if record.offset < end]
                if records:
                    position = records[-1].offset + 1
                    yield part, Batch(*(list(map(attrgetter(name), records)) for name in ("offset", "key", "value", "headers", "timestamp")))
                if len(records) < len(fetched):
                    break
                if fetched:
                    last_progress = time.monotonic()
                highwater = self._consumer.highwater(assigned)
                if highwater is not None and self._consumer.position(assigned) >= highwater:
                    break
                if not fetched and time.monotonic() - last_progress > self.timeout_s:
                    raise self._stalled(part.topic, part.partition, position, end)
