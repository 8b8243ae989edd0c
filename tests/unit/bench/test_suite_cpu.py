# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench.suite_cpu's reading of dump-acct's records (lines as acct 6.6's dump-acct prints them on Debian 12)."""
from __future__ import annotations

from datetime import datetime

import pytest

from bench import suite_cpu

DUMPED = """\
accton          |v3|     0.00|     0.00|     0.00|     0|     0|  2476.00|  1539.00|   12368|   12364|S    |       0|__      |Sat Nov 28 19:37:23 2026
ansible-playboo |v3|     3.00|     1.00|    12.00|     0|     0|180000.00|     0.00|   12400|   12390| F   |       0|__      |Sat Nov 28 19:37:24 2026
ansible-playboo |v3|   250.00|    50.00|   900.00|     0|     0|200000.00|     0.00|   12390|   12380|     |       0|__      |Sat Nov 28 19:37:23 2026
java            |v3| 12000.00|   600.00| 12000.00|     0|     0|900000.00|     0.00|   12500|   12380|    X|       0|__      |Sat Nov 28 19:37:25 2026
not a record line
"""


def test_records_read_cpu_lifetime_fork_and_start():
    records = suite_cpu.parse_records(DUMPED)
    assert [r["name"] for r in records] == ["accton", "ansible-playboo", "ansible-playboo", "java"]
    worker = records[1]
    assert worker["cpu_s"] == pytest.approx(0.04) and worker["elapsed_s"] == pytest.approx(0.12) and worker["forked"]
    assert not records[2]["forked"] and records[3]["cpu_s"] == pytest.approx(126.0)
    assert records[3]["started"] == datetime(2026, 11, 28, 19, 37, 25).timestamp()


def test_a_forked_child_counts_apart_from_its_parent_and_the_most_cpu_comes_first():
    rows = suite_cpu.by_name(suite_cpu.parse_records(DUMPED))
    assert [(name, count) for name, count, _cpu in rows] == [("java", 1), ("ansible-playboo", 1), ("ansible-playboo*", 1), ("accton", 1)]
    assert rows[0][2] == pytest.approx(126.0)


def test_cpu_is_spread_over_each_process_lifetime_minute_by_minute():
    start = datetime(2026, 11, 28, 19, 37, 0).timestamp()
    java = {"name": "java", "cpu_s": 120.0, "elapsed_s": 120.0, "forked": False, "started": start + 30}  # one core, 0:30 to 2:30
    assert suite_cpu.cores_per_minute([java], start, start + 179) == [0.5, 1.0, 0.5]


def test_no_command_is_refused():
    with pytest.raises(SystemExit):
        suite_cpu.main(["--"])
