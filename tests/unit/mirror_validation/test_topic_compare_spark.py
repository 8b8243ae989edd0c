# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The comparison per topic (MirrorMaker 1) in Spark (local[2]): topic_compare.match_rows combines, shuffles and sorts the
rows of every record as the rules on lists (tests/support/topic_mirrors.py) do, for two topic pairs with every outcome."""
from __future__ import annotations

import pytest

from mirror_validation.topic_compare import match_rows

from tests.support.topic_mirrors import match_on_lists, rows

pytestmark = pytest.mark.spark


def test_spark_finds_what_the_rules_on_lists_find(spark):
    orders = rows({0: [("a", "1"), ("a", "2"), ("a", "3"), ("b", "1"), (None, "x")], 1: [("c", "1"), ("c", "2"), ("c", "1")]},
                  {0: [("a", "1"), ("a", "3"), ("a", "2"), ("z", "9")], 2: [("c", "1"), ("c", "2"), (None, "x"), ("b", "1"), ("b", "1")]})
    payments = rows({0: [("p", str(index)) for index in range(6)]}, {4: [("p", str(index)) for index in (0, 2, 1, 3, 5)]}, pair=1)
    found = orders + payments
    in_spark = match_rows(spark.parallelize(found, 3), 2, 2)
    on_lists = match_on_lists(found, 2)
    assert in_spark == on_lists
    kinds = {(pair, kind): count for (pair, _partition, kind), (count, _samples) in on_lists[1].items()}
    assert kinds == {(0, "missing"): 1, (0, "unexpected"): 1, (0, "duplicate"): 1, (0, "order_violation"): 1,
                     (1, "missing"): 1, (1, "order_violation"): 1}
