# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Spark side of the comparison (local[2]): the residue settled in a shuffle as the rules say."""
import pytest

from mirror_validation.job import partition_work
from mirror_validation.residue import settle
from mirror_validation.spark_io import RESIDUE, SUMMARY, compare_works

from tests.support.mirrors import LetterReaders, _records, _settle, topic_pair

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
    expected = _settle(residue, summaries, pair, 10)
    bounds_of = {key: (summary["first_matched_source"], summary["first_matched_target"], summary["last_matched_source"],
                       pair.source_offsets[key[1]][0], pair.target_offsets[key[1]][0], False) for key, summary in summaries.items()}
    assert settle(spark.parallelize(residue, 3), bounds_of, 10, 2) == expected
