#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ambari_config
short_description: Set properties of an Ambari config type, and a managed block in a text property, with a new version only on change
version_added: 0.1.0
description:
  - Makes one Ambari config type (for example C(kafka-broker) or C(kafka-env)) hold the given properties and,
    optionally, a block of lines between marker lines inside a text property (for example the C(content) template of C(kafka-env)).
  - Reads the current version, plans the change, and only when something differs creates a new config version with the full
    property set and a version note. Nothing is sent without a change, so check mode and diff show exactly what a run does
    (Ambari itself makes no version for a property set identical to the current one).
  - Components that use the config type become stale in Ambari; restart them with M(kafkaops.mirror.ambari_restart).
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.ambari_connection
attributes:
  check_mode:
    support: full
    details:
      - Returns the plan (changed properties, diff) and creates no version.
  diff_mode:
    support: full
    details:
      - Shows exactly the properties that change (C(key=value) lines) and the old and new block lines of a text property.
  idempotent:
    support: full
options:
  config_type:
    description: The Ambari config type, such as V(kafka-broker), V(kafka-env) or V(zoo.cfg).
    type: str
    required: true
  properties:
    description:
      - Properties to set. Other properties of the type keep their values.
      - Booleans become V(true)/V(false), numbers their text. A V(null) value removes the property.
    type: dict
  block:
    description: A managed block inside a text property, replaced in place when present, appended at the end otherwise.
    type: dict
    suboptions:
      property:
        description: The text property that holds the block.
        type: str
        default: content
      content:
        description: Lines of the block, without the marker lines. Required when O(block.state=present).
        type: str
      marker:
        description: Marker line template; C({mark}) becomes V(BEGIN) and V(END). Use a different marker for each block.
        type: str
        default: "# {mark} ANSIBLE MANAGED BLOCK kafkaops.mirror"
      state:
        description: Whether the block is there (V(present)) or removed with its markers (V(absent)).
        type: str
        choices: [present, absent]
        default: present
  note:
    description: Version note of the new config version. Defaults to a note that lists the changed properties.
    type: str
seealso:
  - module: kafkaops.mirror.ambari_restart
"""

EXAMPLES = r"""
- name: Listen on all interfaces and enable topic auto-creation
  kafkaops.mirror.ambari_config:
    url: https://secondary.azurehdinsight.net
    username: admin
    password: "{{ ambari_password }}"
    cluster_name: secondary
    config_type: kafka-broker
    properties:
      listeners: PLAINTEXT://0.0.0.0:9092
      auto.create.topics.enable: true
    note: Prepare for MirrorMaker 2

- name: Advertise IP addresses instead of FQDNs
  kafkaops.mirror.ambari_config:
    url: https://primary.azurehdinsight.net
    password: "{{ ambari_password }}"
    cluster_name: primary
    config_type: kafka-env
    block:
      marker: "# {mark} kafkaops.mirror ip advertising"
      content: |
        IP_ADDRESS=$(hostname -i)
        echo advertised.listeners=$IP_ADDRESS
"""

RETURN = r"""
config_type:
  description: The config type the module worked on.
  returned: always
  type: str
  sample: kafka-broker
old_tag:
  description: Tag of the config version that was current before the module ran.
  returned: always
  type: str
  sample: version1
new_tag:
  description:
    - Tag of the current version after the module ran; equal to RV(old_tag) when nothing changed.
    - V(null) in check mode when a new version would be created.
  returned: always
  type: str
  sample: version1732241351000
changed_properties:
  description: Names of the properties that changed (or would change in check mode), including the block's text property.
  returned: always
  type: list
  elements: str
  sample: [auto.create.topics.enable, listeners]
note:
  description: Version note of the new version; V(null) when nothing changed.
  returned: always
  type: str
  sample: "kafkaops.mirror ambari_config: listeners"
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.client import AmbariError, ambari_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.config import ConfigInputError, ensure_config
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.diff_mode import exit_with_diff
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.text_block import DEFAULT_MARKER


def argument_spec():
    spec = ambari_connection_argument_spec()
    spec.update(
        config_type=dict(type="str", required=True),
        properties=dict(type="dict"),
        block=dict(
            type="dict",
            options=dict(
                property=dict(type="str", default="content"),
                content=dict(type="str"),
                marker=dict(type="str", default=DEFAULT_MARKER),
                state=dict(type="str", choices=["present", "absent"], default="present"),
            ),
        ),
        note=dict(type="str"),
    )
    return spec


def main():
    module = AnsibleModule(argument_spec=argument_spec(), required_one_of=[("properties", "block")], supports_check_mode=True)
    try:
        result = ensure_config(module.params, module.check_mode)
    except (ConfigInputError, AmbariError) as exc:
        module.fail_json(msg=str(exc), changed=False)
    exit_with_diff(module, result)


if __name__ == "__main__":
    main()
