# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Spark side of the comparison (local[2]): job.py's engine does with the residue RDD what the unit tests' engine
does with a list: settle it in a shuffle, take the fingerprints of the partitions read again, drop and add rows."""
import pytest

from mirror_validation.job import _SparkEngine, partition_work
from mirror_validation.spark_io import RESIDUE, SUMMARY, compare_works

from tests.support.mirrors import LetterReaders, ListEngine, _records, topic_pair

pytestmark = pytest.mark.spark


def test_the_residue_settles_in_spark_as_on_a_list(spark):
    """Misplaced, lost, duplicated, expired and far-moved records, compared with a window of two records."""
    source, target = {0: "ABCDEFGH", 1: "IJKLMN", 2: "OPQR"}, {0: "ABDEFGHC", 1: "IJKLMNNA", 2: "PQRX"}
    pair = topic_pair(source, target, source_begin={2: 1}, target_begin={2: 1})
    works = [partition_work(pair, partition, (), ()) for partition in sorted(source)]
    summaries, residue = {}, []
    for kind, item in compare_works(LetterReaders(_records(source, {2: 1}), _records(target, {2: 1})), works, 2, 10):
        if kind == SUMMARY:
            summaries[(item["pair"], item["partition"])] = item
        elif kind == RESIDUE:
            residue.append(item)
    assert residue
    bounds_of = {key: (summary["first_matched_source"], summary["first_matched_target"], summary["last_matched_source"],
                       pair.source_offsets[key[1]][0], pair.target_offsets[key[1]][0], False, None) for key, summary in summaries.items()}
    on_list, in_spark = ListEngine(None, 10), _SparkEngine(spark, None, 10, 2)
    rows = spark.parallelize(residue, 3)
    assert in_spark.settle(rows, bounds_of) == on_list.settle(residue, bounds_of)
    again = {(0, 0), (0, 2)}
    assert in_spark.fingerprints(rows, again) == on_list.fingerprints(residue, again) != {}
    kept = in_spark.union(in_spark.without(rows, again), spark.parallelize(residue[:1]))
    assert sorted(kept.collect()) == sorted(on_list.union(on_list.without(residue, again), residue[:1]))
