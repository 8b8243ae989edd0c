# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ACLs of a MirrorMaker principal on one cluster (module kafka_mirror_acls): plan against what the cluster holds, then
apply, with check mode on the same path.

What the principal needs comes from _mm2/acls.py; this reads and writes them through kafka-python's admin ACL API
(DescribeAcls, CreateAcls, DeleteAcls: Kafka 2.0+ for prefixed names), as a principal with Alter on the cluster.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaConnectionError
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import kafka_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.acls import SOURCE, TARGET, for_cluster, mirrormaker_acls
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.flow_options import replication_policy_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.naming import OFFSET_SYNCS_LOCATIONS

try:
    from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePattern,
                             ResourcePatternFilter, ResourceType)
except ImportError:
    pass  # client.ensure_kafka_python fails the module first


class AclTaskError(Exception):
    """Bad options or a refused ACL request; the message says which."""


def kafka_mirror_acls_argument_spec():
    spec = kafka_connection_argument_spec()
    spec.update(
        principal=dict(type="str", required=True),
        host=dict(type="str", default="*"),
        cluster=dict(type="str", required=True, choices=[SOURCE, TARGET]),
        source_alias=dict(type="str", required=True),
        target_alias=dict(type="str", required=True),
        topics=dict(type="list", elements="str", required=True),
        groups=dict(type="list", elements="str", required=True),
        offset_syncs_topic_location=dict(type="str", default="source", choices=list(OFFSET_SYNCS_LOCATIONS)),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        **replication_policy_argument_spec(),
    )
    return dict(argument_spec=spec, supports_check_mode=True)


def needed_acls(params):
    """The ACLs of the flow the options describe, for the cluster they name; AclTaskError for bad options."""
    if not params["principal"].partition(":")[2]:
        raise AclTaskError("principal %r is not <type>:<name> (such as User:mirrormaker)" % params["principal"])
    try:
        acls = mirrormaker_acls(params["source_alias"], params["target_alias"], params["topics"], params["groups"],
                                params["offset_syncs_topic_location"], params["replication_policy"], params["replication_policy_separator"])
    except ValueError as exc:
        raise AclTaskError(str(exc)) from exc
    return for_cluster(acls, params["cluster"])


def acl_line(acl):
    """One ACL as a diff line: `ALLOW <operation> on <resource type> <pattern type> <name> from <host>`."""
    return "ALLOW %s on %s %s %s from %s" % (acl["operation"], acl["resource_type"], acl["pattern_type"], acl["resource_name"], acl["host"])


def _key(acl):
    return (acl["resource_type"], acl["pattern_type"], acl["resource_name"], acl["operation"], acl["host"])


def _kafka_acl(principal, acl):
    return ACL(principal=principal, host=acl["host"], operation=ACLOperation[acl["operation"]], permission_type=ACLPermissionType.ALLOW,
               resource_pattern=ResourcePattern(ResourceType[acl["resource_type"].upper()], acl["resource_name"],
                                                ACLResourcePatternType[acl["pattern_type"].upper()]))


def current_acls(admin, principal):
    """The ALLOW ACLs of `principal` on the cluster, as dicts of the keys of _mm2/acls.py plus host."""
    acl_filter = ACLFilter(principal=principal, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ALLOW,
                           resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))
    acls, error = admin.describe_acls(acl_filter)
    if getattr(error, "errno", 0):
        raise AclTaskError("DescribeAcls refused: %s (the connection needs Describe on the cluster)" % _name(error))
    return [{"resource_type": acl.resource_pattern.resource_type.name.lower(), "pattern_type": acl.resource_pattern.pattern_type.name.lower(),
             "resource_name": acl.resource_pattern.resource_name, "operation": acl.operation.name, "host": acl.host} for acl in acls]


def plan(needed, current, state):
    """(to_add, to_remove) to bring the cluster to `state` for the `needed` ACLs."""
    held = {_key(acl) for acl in current}
    if state == "present":
        return [acl for acl in needed if _key(acl) not in held], []
    return [], [acl for acl in needed if _key(acl) in held]


def ensure_acls(params, check_mode):
    """The module's result: plan, then (outside check mode) apply."""
    needed = [dict(acl, host=params["host"]) for acl in needed_acls(params)]
    principal = params["principal"]
    with KafkaConnection(params) as kafka:
        admin = kafka.admin()
        with kafka.reading("ACLs"):
            current = current_acls(admin, principal)
            to_add, to_remove = plan(needed, current, params["state"])
            if not check_mode and to_add:
                failed = admin.create_acls([_kafka_acl(principal, acl) for acl in to_add])["failed"]
                _raise_failures([("", error) for error in failed], "create")
            if not check_mode and to_remove:
                _delete(admin, principal, to_remove)
    before = sorted(acl_line(acl) for acl in current)
    removed = {acl_line(acl) for acl in to_remove}
    after = sorted(set(before) - removed | {acl_line(acl) for acl in to_add})
    return {"changed": bool(to_add or to_remove), "principal": principal, "cluster": params["cluster"], "acls": needed,
            "added": [acl_line(acl) for acl in to_add], "removed": [acl_line(acl) for acl in to_remove],
            "diff": {"before": "\n".join(before) + "\n", "after": "\n".join(after) + "\n",
                     "before_header": "%s ACLs of %s" % (params["cluster"], principal), "after_header": "%s ACLs of %s" % (params["cluster"], principal)}}


def _delete(admin, principal, acls):
    filters = [ACLFilter(principal=principal, host=acl["host"], operation=ACLOperation[acl["operation"]], permission_type=ACLPermissionType.ALLOW,
                         resource_pattern=ResourcePatternFilter(ResourceType[acl["resource_type"].upper()], acl["resource_name"],
                                                                ACLResourcePatternType[acl["pattern_type"].upper()]))
               for acl in acls]
    failed = [(acl_filter, error) for acl_filter, _matches, error in admin.delete_acls(filters) if getattr(error, "errno", 0)]
    _raise_failures(failed, "delete")


def _raise_failures(failed, verb):
    if failed:
        raise AclTaskError("the cluster refused to %s %d ACL(s): %s" % (verb, len(failed), "; ".join(
            "%s%s" % (_name(error), " for %s" % (acl,) if acl else "") for acl, error in failed)))


def _name(error):
    """A kafka-python error's name: its responses carry error classes or instances."""
    return getattr(error, "__name__", type(error).__name__)


__all__ = ["AclTaskError", "KafkaConnectionError", "ensure_acls", "kafka_mirror_acls_argument_spec"]
