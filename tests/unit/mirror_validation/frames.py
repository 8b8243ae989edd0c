"""Small in-memory mirrors for the Spark tests: each record is one letter, its fingerprint the letter itself."""
from __future__ import annotations

from mirror_validation.job import BOUNDS_SCHEMA
from mirror_validation.slices import SOURCE, TARGET
from mirror_validation.spark_io import RECORD_SCHEMA


def records_and_bounds(spark, source, target, source_begin=None, target_begin=None, pair=0, target_behind=()):
    """`source`/`target`: {partition: "ABC"} (letters at consecutive offsets from that side's begin offset);
    `target_behind`: partitions whose target had not caught up with the source snapshot."""
    source_begin = source_begin or {}
    target_begin = target_begin or {}
    rows, bounds = [], []
    for partition in sorted(set(source) | set(target)):
        s_begin, t_begin = source_begin.get(partition, 0), target_begin.get(partition, 0)
        s_letters, t_letters = source.get(partition, ""), target.get(partition, "")
        rows += [(SOURCE, pair, partition, s_begin + i, letter.encode()) for i, letter in enumerate(s_letters)]
        rows += [(TARGET, pair, partition, t_begin + i, letter.encode()) for i, letter in enumerate(t_letters)]
        bounds.append((pair, partition, s_begin, s_begin + len(s_letters), t_begin, t_begin + len(t_letters), partition in target_behind))
    return spark.createDataFrame(rows, RECORD_SCHEMA), spark.createDataFrame(bounds, BOUNDS_SCHEMA)


def rows_of(frame, columns=None):
    """The rows of `frame` as sorted tuples, for exact comparison with an expected list."""
    columns = columns or frame.columns
    return sorted(tuple(row[name] for name in columns) for row in frame.select(*columns).collect())
