# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long each step of a long scenario took, printed as it ends (pytest -s shows it, the junit log keeps it) and, when
given a path, written there as JSON for the closing notes."""
from __future__ import annotations

import json
import time
from pathlib import Path


class StepTimer:
    def __init__(self, scenario: str, path: Path | None = None):
        self.scenario, self.path = scenario, path
        self.seconds = {}

    def timed(self, step, action):
        """action()'s result; its seconds under `step`, also when it raises."""
        started = time.monotonic()
        try:
            return action()
        finally:
            self.seconds[step] = round(time.monotonic() - started, 1)
            print(f"{self.scenario}, {step}: {self.seconds[step]} s")
            if self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text(json.dumps(self.seconds, indent=1) + "\n")
