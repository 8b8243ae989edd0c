# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Spark task runs the cycle collector by the growth of its live objects, and leaves the thresholds of the Python worker,
which may run other tasks after it, as it found them, however the task ends."""
import gc

import pytest

from mirror_validation.spark_io import _GC_THRESHOLD, _collections_by_growth


@pytest.fixture(name="default_thresholds")
def fixture_default_thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


@pytest.mark.usefixtures("default_thresholds")
def test_raised_while_a_task_runs_and_restored_after():
    with _collections_by_growth():
        assert gc.get_threshold() == (_GC_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.usefixtures("default_thresholds")
def test_restored_after_a_failed_task():
    with pytest.raises(RuntimeError), _collections_by_growth():
        raise RuntimeError("the broker went away")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_is_kept():
    before = gc.get_threshold()
    gc.set_threshold(_GC_THRESHOLD * 2, 10, 10)
    try:
        with _collections_by_growth():
            assert gc.get_threshold()[0] == _GC_THRESHOLD * 2
    finally:
        gc.set_threshold(*before)
