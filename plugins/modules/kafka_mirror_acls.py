#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_mirror_acls
short_description: Grant or revoke the least-privilege ACLs a MirrorMaker 2 principal needs on one cluster of a flow
version_added: 0.3.0
description:
  - Computes the Kafka ACLs the MirrorMaker 2 principal O(principal) needs on the cluster of the connection options, which is
    the O(cluster) side of the flow O(source_alias) -> O(target_alias), for the flow's topic and group patterns (docs/security.md
    lists them per side with the MirrorMaker release they were read from), compares them with the principal's ALLOW ACLs on
    the cluster, and creates the missing ones (O(state=present)) or deletes the flow's ones (O(state=absent)).
  - Only ALLOW ACLs of O(principal) on O(host) are read and written; ACLs of other principals, DENY ACLs and ACLs of the
    principal that the flow does not need are left as they are.
  - The connection must be an administrator of the cluster (Alter and Describe on the cluster resource, or a super user); on
    a Ranger-managed cluster (HDInsight ESP) create the same permissions as Ranger Kafka policies instead.
  - Needs Kafka 2.0 or later (prefixed ACLs) and an authorizer on the brokers.
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.kafka_connection
  - kafkaops.mirror.replication_policy
attributes:
  check_mode:
    support: full
    details:
      - Returns the plan (RV(added), RV(removed)) without creating or deleting an ACL.
  diff_mode:
    support: full
    details:
      - The principal's ALLOW ACLs on the cluster before and after, one line each.
  idempotent:
    support: full
options:
  principal:
    description: The MirrorMaker principal, as the brokers name it (V(User:mirrormaker); a client certificate's principal follows the
      brokers' C(ssl.principal.mapping.rules)).
    type: str
    required: true
  host:
    description: The host the ACLs allow the principal from.
    type: str
    default: '*'
  cluster:
    description: Which side of the flow the connection's cluster is.
    type: str
    required: true
    choices: [source, target]
  source_alias:
    description: MirrorMaker 2 alias of the flow's source cluster (the prefix of remote topics, part of internal names).
    type: str
    required: true
  target_alias:
    description: MirrorMaker 2 alias of the flow's target cluster (part of the offset-syncs topic's name).
    type: str
    required: true
  topics:
    description:
      - The flow's topic patterns (MirrorMaker 2's C(topics)). ACLs name literal names or prefixes, so each must be a literal name
        or a literal prefix followed by C(.*) (V(orders-.*)); others fail the module before anything changes.
    type: list
    elements: str
    required: true
  groups:
    description: The flow's group patterns (MirrorMaker 2's C(groups)), under the same rule as O(topics).
    type: list
    elements: str
    required: true
  offset_syncs_topic_location:
    description: Cluster holding the offset-syncs topic (MirrorMaker 2 C(offset-syncs.topic.location), Kafka 3.0+).
    type: str
    choices: [source, target]
    default: source
  state:
    description: V(present) creates the missing ACLs, V(absent) deletes the flow's ACLs of the principal.
    type: str
    choices: [present, absent]
    default: present
seealso:
  - module: kafkaops.mirror.kafka_cluster_info
"""

EXAMPLES = r"""
- name: The MirrorMaker principal's ACLs on the primary (the source)
  kafkaops.mirror.kafka_mirror_acls:
    bootstrap_servers: wn0-primar:9095
    security_protocol: SASL_PLAINTEXT
    sasl_mechanism: SCRAM-SHA-512
    sasl_plain_username: kafka-admin
    sasl_plain_password: "{{ vault_kafka_admin_password }}"
    principal: User:mirrormaker
    cluster: source
    source_alias: primary
    target_alias: secondary
    topics: ["orders-.*", payments]
    groups: ["orders-.*"]
"""

RETURN = r"""
principal:
  description: The principal, as given.
  returned: always
  type: str
cluster:
  description: The side of the flow, as given.
  returned: always
  type: str
acls:
  description: Every ACL the principal needs on this cluster, with C(resource_type), C(pattern_type), C(resource_name),
    C(operation), C(host) and C(reason) (what MirrorMaker or the collection does with it).
  returned: always
  type: list
  elements: dict
added:
  description: The ACLs created (in check mode - that would be), one line each.
  returned: always
  type: list
  elements: str
  sample: ["ALLOW READ on topic prefixed orders- from *"]
removed:
  description: The ACLs deleted (in check mode - that would be), one line each.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.acls import (
    AclTaskError,
    KafkaConnectionError,
    ensure_acls,
    kafka_mirror_acls_argument_spec,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import ensure_kafka_python


def main():
    module = AnsibleModule(**kafka_mirror_acls_argument_spec())
    ensure_kafka_python(module)
    try:
        result = ensure_acls(module.params, module.check_mode)
    except (KafkaConnectionError, AclTaskError) as exc:
        module.fail_json(msg="%s ACLs of %s: %s" % (module.params["cluster"], module.params["principal"], exc), changed=False)
    diff = result.pop("diff")
    module.exit_json(**(dict(result, diff=diff) if module._diff else result))


if __name__ == "__main__":
    main()
