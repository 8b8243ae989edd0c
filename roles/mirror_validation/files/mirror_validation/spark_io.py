"""Spark stages that touch Kafka: every record is read and fingerprinted inside a Spark task.

Only fingerprints (16 bytes plus coordinates) and decoded MM2 control records leave the tasks;
nothing is collected to the driver here.
"""
from __future__ import annotations

from pyspark.sql import functions as F
from pyspark.sql import types as T

from .fingerprint import record_fingerprint
from .kafka_reader import open_reader
from .mm2_formats import RecordFormatError, decode_checkpoint, decode_offset_sync

RECORD_SCHEMA = T.StructType([
    T.StructField("side", T.ByteType(), False),
    T.StructField("pair", T.IntegerType(), False),
    T.StructField("partition", T.IntegerType(), False),
    T.StructField("offset", T.LongType(), False),
    T.StructField("fp", T.BinaryType(), False),
])

OFFSET_SYNC_SCHEMA = T.StructType([
    T.StructField("pair", T.IntegerType(), False),
    T.StructField("partition", T.IntegerType(), False),
    T.StructField("upstream", T.LongType(), False),
    T.StructField("downstream", T.LongType(), False),
])

# What a reading task emits: one row per batch of consecutive records of one partition. Python-to-JVM row
# conversion costs about as much per row as reading and hashing the record, so rows carry arrays and the
# JVM explodes them into RECORD_SCHEMA rows.
_BATCH_SCHEMA = T.StructType([
    T.StructField("side", T.ByteType(), False),
    T.StructField("pair", T.IntegerType(), False),
    T.StructField("partition", T.IntegerType(), False),
    T.StructField("offsets", T.ArrayType(T.LongType(), False), False),
    T.StructField("fps", T.ArrayType(T.BinaryType(), False), False),
])
_BATCH_RECORDS = 4096

CHECKPOINT_SCHEMA = T.StructType([
    T.StructField("group", T.StringType(), False),
    T.StructField("pair", T.IntegerType(), False),
    T.StructField("partition", T.IntegerType(), False),
    T.StructField("upstream", T.LongType(), False),
    T.StructField("downstream", T.LongType(), False),
    T.StructField("record_offset", T.LongType(), False),
])


class ReadSettings:
    """What a Spark task needs to open a reader: plain data, pickled into the task."""

    def __init__(self, connections, client, timeout_s):
        self.connections = connections  # {side: Connection}
        self.client = client
        self.timeout_s = timeout_s


class _TaskReaders:
    """One reader per side for the whole task, however many slices it reads."""

    def __init__(self, settings):
        self.settings = settings
        self.open = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for reader in self.open.values():
            reader.close()

    def records(self, slices):
        """(slice, RawRecord) for every record of `slices`; each side's slices go to its reader in one call."""
        for side in sorted({part.side for part in slices}):
            if side not in self.open:
                self.open[side] = open_reader(self.settings.connections[side], self.settings.client, self.settings.timeout_s)
            yield from self.open[side].read_ranges([part for part in slices if part.side == side])


def _fingerprint_batches(settings, slices):
    batches = {}
    with _TaskReaders(settings) as readers:
        for part, record in readers.records(slices):
            offsets, fingerprints = batches.setdefault(part, ([], []))
            offsets.append(record.offset)
            fingerprints.append(record_fingerprint(record.key, record.value, record.headers,
                                                   record.timestamp if part.with_timestamp else None))
            if len(offsets) == _BATCH_RECORDS:
                yield (part.side, part.pair, part.partition, offsets, fingerprints)
                del batches[part]
    for part, (offsets, fingerprints) in batches.items():
        if offsets:
            yield (part.side, part.pair, part.partition, offsets, fingerprints)


def _tasks(spark, tasks, reader_function):
    # One Spark task per entry of `tasks` (a list of slices, see slices.pack).
    return (spark.sparkContext.parallelize(tasks, max(len(tasks), 1))
            .mapPartitions(lambda entries: reader_function([part for entry in entries for part in entry])))


def read_fingerprints(spark, settings, tasks):
    """DataFrame(side, pair, partition, offset, fp) of every record in `tasks` (lists of slices).

    The rows are built here to the schema, so the per-row schema check (slow, in Python) is skipped.
    """
    batches = spark.createDataFrame(_tasks(spark, tasks, lambda parts: _fingerprint_batches(settings, parts)), _BATCH_SCHEMA,
                                    verifySchema=False)
    record = F.explode(F.arrays_zip("offsets", "fps")).alias("record")
    return batches.select("side", "pair", "partition", record).select(
        "side", "pair", "partition", F.col("record.offsets").alias("offset"), F.col("record.fps").alias("fp"))


def _decoded(settings, slices, decode):
    with _TaskReaders(settings) as readers:
        for _part, record in readers.records(slices):
            try:
                decoded = decode(record.key, record.value)
            except RecordFormatError:
                continue  # tombstones and foreign records on the internal topic carry no sync
            yield decoded, record.offset


def read_offset_syncs(spark, settings, tasks, pair_of_source_topic):
    """DataFrame(pair, partition, upstream, downstream) of the offset syncs of validated topics."""
    def rows(part):
        for sync, _record_offset in _decoded(settings, part, decode_offset_sync):
            if sync.topic in pair_of_source_topic:
                yield (pair_of_source_topic[sync.topic], sync.partition, sync.upstream_offset, sync.downstream_offset)

    return spark.createDataFrame(_tasks(spark, tasks, rows), OFFSET_SYNC_SCHEMA, verifySchema=False)


def read_checkpoints(spark, settings, tasks, pair_of_target_topic):
    """DataFrame(group, pair, partition, upstream, downstream, record_offset) of the checkpoints of validated topics."""
    def rows(part):
        for checkpoint, offset in _decoded(settings, part, decode_checkpoint):
            if checkpoint.topic in pair_of_target_topic:
                yield (checkpoint.group, pair_of_target_topic[checkpoint.topic], checkpoint.partition,
                       checkpoint.upstream_offset, checkpoint.downstream_offset, offset)

    return spark.createDataFrame(_tasks(spark, tasks, rows), CHECKPOINT_SCHEMA, verifySchema=False)
