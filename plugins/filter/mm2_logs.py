# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter kafkaops.mirror.mm2_start_failure: the likely cause of a MirrorMaker that failed to start or died, from its log."""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_logs import start_failure


def mm2_start_failure(text):
    return start_failure(text if isinstance(text, str) else "\n".join(text or []))


class FilterModule:
    def filters(self):
        return {"mm2_start_failure": mm2_start_failure}
