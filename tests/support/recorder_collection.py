# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A copy of kafkaops.mirror whose Kafka modules only record the arguments they were called with.

No broker here speaks SASL or Kerberos, so the roles run against this collection: roles, filters, module_utils, plugin_utils and
meta/runtime.yml (the action group the roles' module_defaults name) are the checkout's own, linked; each Kafka module
is a recorder that validates its connection options with the real argument spec (so no_log censors the same secrets
in what Ansible logs), appends the raw arguments to $CONNECTION_RECORD and fails with "recorded", which stops the
role after every call of that task's loop.
"""
from __future__ import annotations

import json
from pathlib import Path

from tests.support.checkout import REPO

KAFKA_MODULES = ("kafka_cluster_info", "kafka_consumer_group_info", "kafka_mirror_offsets", "kafka_mirror_status",
                 "kafka_mirror_topic_drift_info", "kafka_topic", "kafka_topic_info")
RECORD_VARIABLE = "CONNECTION_RECORD"

RECORDER = '''#!/usr/bin/python
# Test recorder standing in for kafkaops.mirror.%(name)s.
from __future__ import annotations

import json
import os

from ansible.module_utils.basic import AnsibleModule, _load_params

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import kafka_connection_argument_spec

DOCUMENTATION = "module: %(name)s"


def main():
    raw = _load_params()
    spec = kafka_connection_argument_spec()
    for key in raw:
        spec.setdefault(key, dict(type="raw"))
    for key in ("source", "copy_from"):
        if key in raw:
            options = kafka_connection_argument_spec()
            options.update((extra, dict(type="raw")) for extra in raw[key] if extra not in options)
            spec[key] = dict(type="dict", options=options)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    with open(os.environ["%(variable)s"], "a", encoding="utf-8") as record:
        record.write(json.dumps({"module": "%(name)s", "args": raw}) + "\\n")
    module.fail_json(msg="recorded")


if __name__ == "__main__":
    main()
'''


def build(root: Path) -> Path:
    """The collections path of the recorder collection under `root`."""
    collection = root / "ansible_collections" / "kafkaops" / "mirror"
    (collection / "plugins" / "modules").mkdir(parents=True)
    for entry in ("galaxy.yml", "meta", "roles", "playbooks"):
        (collection / entry).symlink_to(REPO / entry)
    for entry in ("filter", "module_utils", "plugin_utils", "doc_fragments"):
        (collection / "plugins" / entry).symlink_to(REPO / "plugins" / entry)
    for name in KAFKA_MODULES:
        (collection / "plugins" / "modules" / (name + ".py")).write_text(RECORDER % {"name": name, "variable": RECORD_VARIABLE})
    return root


def recorded_calls(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def environment(root: Path, record: Path) -> dict:
    return {"ANSIBLE_COLLECTIONS_PATH": str(root), RECORD_VARIABLE: str(record)}
