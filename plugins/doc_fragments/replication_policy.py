# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# The replication policy options of the modules that name a flow's topics as MirrorMaker 2 does
# (their argument specs: _mirror/flow_arguments.py flow_argument_spec() and _kafka/acls.py).
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  replication_policy:
    description: MirrorMaker 2 replication policy of the flow; decides the remote topic names.
    type: str
    choices: [default, identity]
    default: default
  replication_policy_separator:
    description: MirrorMaker's C(replication.policy.separator).
    type: str
    default: .
"""
