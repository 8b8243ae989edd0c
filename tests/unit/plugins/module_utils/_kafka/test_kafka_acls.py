# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kafka_mirror_acls' plan: present and absent against what the cluster holds, and options refused before any request."""
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka import acls as module_acls
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.acls import AclTaskError, acl_line, ensure_acls, needed_acls, plan

FLOW = {"principal": "User:mirrormaker", "host": "*", "cluster": "source", "source_alias": "primary", "target_alias": "secondary",
        "topics": ["orders-.*"], "groups": ["orders-.*"], "replication_policy": "default", "replication_policy_separator": ".",
        "offset_syncs_topic_location": "source", "state": "present", "bootstrap_servers": ["127.30.9.9:9092"]}


def needed():
    return [dict(acl, host="*") for acl in needed_acls(FLOW)]


@pytest.mark.parametrize("state, held_count, adds, removes", [
    ("present", 0, "all", 0),
    ("present", "all", 0, 0),
    ("present", 2, "rest", 0),
    ("absent", "all", 0, "all"),
    ("absent", 0, 0, 0),
    ("absent", 2, 0, 2),
])
def test_plan(state, held_count, adds, removes):
    wanted = needed()
    count = {"all": len(wanted), "rest": len(wanted) - 2}
    held = wanted[:count.get(held_count, held_count)] + [{"resource_type": "topic", "pattern_type": "literal", "resource_name": "other",
                                                         "operation": "READ", "host": "*"}]
    to_add, to_remove = plan(wanted, held, state)
    assert len(to_add) == count.get(adds, adds)
    assert len(to_remove) == count.get(removes, removes)
    assert all(acl["resource_name"] != "other" for acl in to_remove)


@pytest.mark.parametrize("bad, message", [
    ({"topics": [".*"]}, "cannot be written as an ACL"),
    ({"groups": ["g[0-9]"]}, "cannot be written as an ACL"),
    ({"principal": "mirrormaker"}, "is not <type>:<name>"),
])
def test_bad_options_fail_before_connecting(monkeypatch, bad, message):
    monkeypatch.setattr(module_acls, "KafkaConnection", lambda params: pytest.fail("connected"))
    with pytest.raises(AclTaskError, match=message):
        ensure_acls(dict(FLOW, **bad), check_mode=False)


def test_acl_line():
    assert acl_line(needed()[0]) == "ALLOW DESCRIBE on topic prefixed orders- from *"
