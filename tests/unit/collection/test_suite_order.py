# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The order tests/run_suite.py hands the integration files out in: the longest of the previous run's JUnit report first
(else of tests/integration/durations.json), files it does not know before them, and every file whatever the report says."""
from __future__ import annotations

import json

from tests import run_suite

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.integration.mirror.test_quick_start_hn0" name="test_a" time="40.5"/>
<testcase classname="tests.integration.mirror.test_quick_start_hn0" name="test_b" time="30.0"/>
<testcase classname="tests.integration.day_two.test_day_two.TestDayTwo" name="test_c[x]" time="90.0"/>
<testcase classname="tests.integration.gone.test_removed" name="test_d" time="500"/>
</testsuite></testsuites>
"""


def test_seconds_add_up_per_file_with_test_classes_folded_into_their_file(tmp_path):
    report = tmp_path / "integration.xml"
    report.write_text(REPORT)
    assert run_suite.file_seconds(report) == {"tests/integration/mirror/test_quick_start_hn0.py": 70.5,
                                              "tests/integration/day_two/test_day_two.py": 90.0,
                                              "tests/integration/gone/test_removed.py": 500.0}


def test_unknown_files_first_then_the_longest_and_never_a_file_lost(tmp_path):
    report = tmp_path / "integration.xml"
    report.write_text(REPORT)
    files = run_suite.integration_files(report)
    known = ["tests/integration/day_two/test_day_two.py", "tests/integration/mirror/test_quick_start_hn0.py"]
    assert files[-2:] == known
    assert files[:-2] == sorted(files[:-2])
    assert sorted(files) == sorted(run_suite.integration_files(tmp_path / "absent.xml"))
    assert "tests/integration/gone/test_removed.py" not in files


def test_a_run_without_a_report_of_its_own_takes_the_recorded_durations(tmp_path):
    """A fresh clone (CI) has no report: the committed durations put the real-Kafka labs first, not in path order."""
    files = run_suite.integration_files(tmp_path / "absent.xml")
    recorded = {path: seconds for path, seconds in json.loads(run_suite.DURATIONS.read_text()).items() if path in files}
    known = [path for path in files if path in recorded]
    assert known == sorted(known, key=lambda path: -recorded[path])
    assert known[0] == max(recorded, key=recorded.get)
