# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter kafkaops.mirror.mm2_config: the mirrormaker2 role's model -> rendered MirrorMaker files."""
from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_config import MirrorConfigError, build_config
from ansible_collections.kafkaops.mirror.plugins.module_utils.mm2_properties import render

_display = Display()


def mm2_config(model, redact=False):
    try:
        config = build_config(model)
    except MirrorConfigError as exc:
        raise AnsibleFilterError(str(exc)) from None
    if redact:
        config = config.redacted()
    for warning in config.warnings:
        _display.warning("mirrormaker2: %s" % warning)
    result = config.as_dict()
    result["files"] = {name: render(properties) for name, properties in config.files.items()}
    return result


class FilterModule:
    def filters(self):
        return {"mm2_config": mm2_config}
