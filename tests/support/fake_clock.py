# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A clock for unit tests of code that waits: call it for the time (as time.monotonic), hand its `sleep` where the code
would sleep; sleeping only moves the time on, so a wait of minutes takes no time and its arithmetic can be asserted."""
from __future__ import annotations


class FakeClock:
    def __init__(self, now: float = 0.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
