# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A failed scheduled job does not end the stand-in (MirrorMaker 2's Scheduler.run catches Throwable): ending it would
lose the copy's uncommitted source offsets, and the service manager's restart would copy those records again."""
from __future__ import annotations

import logging

from kafka.errors import KafkaConnectionError

from sandbox.mm2.runner import Herder, Timer


class FailingCheckpoints:
    def __init__(self):
        self.emitted = 0

    def refresh_groups(self):
        raise KafkaConnectionError("111 ECONNREFUSED")

    def emit(self):
        self.emitted += 1


def herder_with(checkpoints):
    herder = Herder.__new__(Herder)
    herder.replicator = herder.heartbeats = None
    herder.checkpoints = checkpoints
    herder.refresh_groups, herder.emit_checkpoints, herder.sync_groups = Timer(1), Timer(1), Timer(1, enabled=False)
    for timer in (herder.refresh_groups, herder.emit_checkpoints):
        timer.start(0.0, delayed=False)
    return herder


def test_a_failed_group_refresh_is_logged_and_the_next_job_still_runs(caplog):
    checkpoints = FailingCheckpoints()
    herder = herder_with(checkpoints)
    with caplog.at_level(logging.ERROR, logger="sandbox.mm2"):
        herder.tick(0.0)
        herder.tick(2.0)
    assert checkpoints.emitted == 2
    failures = [r for r in caplog.records if "caught exception in scheduled task: refreshing consumer groups" in r.getMessage()]
    assert len(failures) == 2 and failures[0].exc_info
