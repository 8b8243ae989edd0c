# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The position keeping of a kafka-python KafkaConsumer, for unit tests' fake consumers: assign starts every partition at
offset 0, seek and position move and read it. A test's subclass adds what its code reads (end offsets, poll)."""
from __future__ import annotations


class PositionedConsumer:
    positions: dict

    def assign(self, tps):
        self.positions = {tp: 0 for tp in tps}

    def beginning_offsets(self, tps):
        return {tp: 0 for tp in tps}

    def seek(self, tp, offset):
        self.positions[tp] = offset

    def position(self, tp):
        return self.positions[tp]
