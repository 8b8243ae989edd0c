# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs of records equal on both sides are matched without fingerprints; records that differ in what a client may
change without changing the fingerprint (header order, a null or empty header list, a timestamp left out of it)
are matched one by one, by fingerprint."""
import pytest

from mirror_validation.kafka_reader import Batch
from mirror_validation.slices import SOURCE, TARGET, PartitionWork, Slice
from mirror_validation.spark_io import RESIDUE, SUMMARY, compare_works


class BatchReader:
    """A kafka_reader stand-in over a list of (key, value, headers, timestamp), read in batches of two."""

    def __init__(self, records):
        self.records = records

    def read_batches(self, ranges):
        for part in ranges:
            for start in range(part.start, part.end, 2):
                chunk = [(offset,) + self.records[offset] for offset in range(start, min(start + 2, part.end))]
                yield part, Batch(*(list(column) for column in zip(*chunk)))


class Readers:
    def __init__(self, source, target):
        self.readers = {SOURCE: BatchReader(source), TARGET: BatchReader(target)}

    def reader(self, side):
        return self.readers[side]


def compare(source, target, with_timestamp):
    work = PartitionWork(Slice(SOURCE, 0, "t", 0, 0, len(source), with_timestamp), Slice(TARGET, 0, "p.t", 0, 0, len(target), with_timestamp),
                         0, (), ())
    results = list(compare_works(Readers(source, target), [work], 100000, 10))
    summary = next(item for kind, item in results if kind == SUMMARY)
    return summary["matched"], sorted((row[2], row[3]) for kind, row in results if kind == RESIDUE)


RECORDS = [(b"k%d" % number, b"v%d" % number, [("a", b"1"), ("b", b"%d" % number)], 1000 + number) for number in range(7)]


def changed(records, index, **fields):
    """`records` with the fields of record `index` replaced."""
    records = list(records)
    key, value, headers, timestamp = records[index]
    fields = dict(dict(key=key, value=value, headers=headers, timestamp=timestamp), **fields)
    records[index] = (fields["key"], fields["value"], fields["headers"], fields["timestamp"])
    return records


def without_headers(records, headers):
    return [(key, value, headers, timestamp) for key, value, _headers, timestamp in records]


@pytest.mark.parametrize("source, target", [
    (RECORDS, changed(RECORDS, 3, headers=RECORDS[3][2][::-1])),
    (RECORDS, changed(changed(RECORDS, 0, headers=RECORDS[0][2][::-1]), 6, headers=RECORDS[6][2][::-1])),
    (without_headers(RECORDS, []), without_headers(RECORDS[:3], None) + without_headers(RECORDS[3:], [])),
], ids=["header order", "header order at both ends", "null or empty headers"])
def test_what_leaves_the_fingerprint_alone_leaves_the_match_alone(source, target):
    assert compare(source, target, True) == (7, [])


def test_a_timestamp_counts_only_when_fingerprints_include_it():
    target = changed(RECORDS, 4, timestamp=99)
    assert compare(RECORDS, target, False) == (7, [])
    assert compare(RECORDS, target, True) == (6, [(SOURCE, 4), (TARGET, 4)])


@pytest.mark.parametrize("field", ["key", "value", "headers"])
def test_a_changed_field_breaks_the_run_there(field):
    target = changed(RECORDS, 2, **{field: [("a", b"2")] if field == "headers" else b"other"})
    assert compare(RECORDS, target, True) == (6, [(SOURCE, 2), (TARGET, 2)])
