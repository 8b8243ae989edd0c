# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Test-only callback: records every task result as JSON so tests can assert on what ran, and with KAFKAOPS_TASK_TIMES=FILE
# appends each play run's slowest tasks to FILE (seconds from the task's start to each host's result), to find where a
# test's time goes.
from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: record_results
type: aggregate
short_description: write every task result to the JSON file named by RECORD_RESULTS_FILE
description: Test harness plugin for kafkaops.mirror's integration tests.
requirements: []
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "record_results"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.results = []
        self._task_started = time.monotonic()
        self._times = []  # (seconds, task, host)

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._task_started = time.monotonic()

    def _record(self, result, status):
        self._times.append((round(time.monotonic() - self._task_started, 1), result._task.get_name(), result._host.get_name()))
        self.results.append(
            {
                "task": result._task.get_name(),
                "action": result._task.action,
                "host": result._host.get_name(),
                "status": status,
                "result": {**result._result, "failed": status == "failed"},
            }
        )

    def v2_runner_on_ok(self, result):
        self._record(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._record(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._record(result, "unreachable")

    def v2_playbook_on_stats(self, stats):
        times = os.environ.get("KAFKAOPS_TASK_TIMES")
        if times:
            with open(times, "a", encoding="utf-8") as handle:
                handle.write("== %s s in tasks\n" % round(sum(t[0] for t in self._times), 1))
                handle.writelines("%6.1f  %s  (%s)\n" % entry for entry in sorted(self._times, reverse=True)[:15])
        path = os.environ.get("RECORD_RESULTS_FILE")
        if not path:
            return
        summary = {h: stats.summarize(h) for h in sorted(stats.processed)}
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"tasks": self.results, "stats": summary}, handle, default=str)
