# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the ambari_* modules that change Ambari end: the backends always describe the change (config.ensure_config,
restart.restart_components), and Ansible shows it only in diff mode (--diff, `diff: true`).
"""
from __future__ import annotations


def exit_with_diff(module, result):
    """Ends the module with `result`, keeping its "diff" (Ambari's state before and after) only in diff mode."""
    diff = result.pop("diff")
    if module._diff:
        result["diff"] = diff
    module.exit_json(**result)
