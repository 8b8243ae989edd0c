#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_cluster_info
short_description: Preflight facts about a Kafka cluster as seen from the host the module runs on
version_added: 0.1.0
description:
  - Fetches cluster metadata from O(bootstrap_servers) and reports every broker as it I(advertises) itself, whether that address
    resolves and accepts TCP from the host the module runs on (what MirrorMaker needs), the Kafka version inferred from
    ApiVersions and the MirrorMaker 2 features it allows, and the broker count.
  - When all advertised addresses are usable, also reads the broker settings C(min.insync.replicas), C(auto.create.topics.enable),
    C(default.replication.factor), C(offsets.topic.replication.factor), C(num.partitions) (when the broker describes them) and,
    with O(check_topic_creation=true), asks the broker to validate a topic creation (CreateTopics with C(validate_only), nothing is
    created), which also shows ACL denials.
  - Returns findings (RV(findings)) for the checks of the preflight role - unusable advertised addresses with the fix, replication
    factors above the broker count, internal-topic replication factors against C(min.insync.replicas), version gates, topic
    creation and denied operations. The module never fails because of a finding; the role decides.
options:
  cluster_alias:
    description: Name of the cluster used in findings (such as the MirrorMaker 2 alias).
    type: str
  probe_advertised:
    description: Resolve and TCP-connect to every advertised broker address.
    type: bool
    default: true
  probe_timeout:
    description: Seconds allowed for each TCP probe.
    type: float
    default: 5
  replication_factors:
    description:
      - Replication factors other settings request on this cluster, as C(what asks) to a number (V(auto) or null entries are skipped).
      - A finding of severity V(error) for each one above the broker count.
    type: dict
    default: {}
  internal_replication_factors:
    description:
      - Replication factors of MirrorMaker's internal topics on this cluster (checkpoints, heartbeats, offset-syncs, Connect stores).
      - Checked against the broker count and against C(min.insync.replicas) (a lower factor makes acks=all writes fail).
    type: dict
    default: {}
  required_features:
    description:
      - MirrorMaker 2 features the configuration uses; a finding of severity V(error) for each the release O(mirrormaker_version) lacks.
      - MirrorMaker's features come with the Kafka release that runs it, not with the cluster's brokers, so this needs O(mirrormaker_version).
    type: list
    elements: str
    choices: [mm2, sync_group_offsets, identity_policy, offset_syncs_location, dedicated_rest, exactly_once]
    default: []
  mirrormaker_version:
    description:
      - The Kafka release that runs MirrorMaker (for example V(2.4.1) on HDInsight 5.0), against which O(required_features) are checked.
      - Also a finding of severity V(error) when that release's clients cannot talk to this cluster's brokers (Kafka 4.0 clients need brokers 2.1+, KIP-896).
    type: str
    version_added: 0.2.0
  check_topic_creation:
    description: Ask the broker to validate creating a topic (C(validate_only), nothing is created) to learn whether topics can be created.
    type: bool
    default: false
  expected_topics:
    description: Topics that must exist when topic creation is denied (pre-created topics turn that finding into a warning).
    type: list
    elements: str
    default: []
  probe_topic:
    description:
      - The topic name the O(check_topic_creation) dry run asks to create; a name of the kind MirrorMaker creates (a remote topic
        of the flow), so that a principal allowed to create only those (a prefixed ACL) is not found wanting.
    type: str
    default: kafkaops-preflight-probe
    version_added: 0.3.0
  required_acls:
    description:
      - ACLs the connection's principal must hold here, each with C(resource_type) (V(topic), V(group)), C(pattern_type)
        (V(literal), V(prefixed)), C(resource_name) and C(operation) (V(READ), V(WRITE), ...), as module
        kafkaops.mirror.kafka_mirror_acls returns them in RV(kafkaops.mirror.kafka_mirror_acls#module:acls).
      - Checked as that principal, changing nothing - on the topics that exist, against the operations the brokers say it may
        do (Kafka 2.3+); where none exists yet, whether it may create one (CreateTopics with C(validate_only)). Each one missing
        is a finding of severity V(error) naming the principal, the resource and the operation. What cannot be asked that way
        (groups, operations on topics not created yet) is listed in RV(acls_unverified).
    type: list
    elements: dict
    default: []
    version_added: 0.3.0
  report_unreachable:
    description:
      - When the bootstrap servers give no metadata, return RV(bootstrap_reachable=false) and an V(error) finding instead of failing,
        so that a preflight can report every cluster at once.
    type: bool
    default: false
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.attributes.info_module
  - kafkaops.mirror.kafka_connection
notes:
  - The version is inferred from the API versions the broker supports, as Kafka clients do; a pinned O(api_version) is reported as pinned.
  - Broker configs and the topic-creation dry run are skipped when an advertised address is unusable, because those requests go there.
author: kafkaops.mirror developers (@kafkaops)
"""

EXAMPLES = r"""
- name: Check the target cluster from the MirrorMaker host
  kafkaops.mirror.kafka_cluster_info:
    bootstrap_servers: "{{ kafka_bootstrap_servers }}"
    cluster_alias: secondary
    internal_replication_factors:
      checkpoints.topic.replication.factor: 3
    required_features: [sync_group_offsets]
    mirrormaker_version: 2.4.1
    check_topic_creation: true
    report_unreachable: true
  register: target_info

- name: Stop on errors
  ansible.builtin.assert:
    that: target_info.errors | length == 0
    fail_msg: "{{ target_info.errors }}"
"""

RETURN = r"""
cluster_alias:
  description: The cluster's name in findings.
  returned: always
  type: str
bootstrap_reachable:
  description: Whether metadata came back from the bootstrap servers.
  returned: always
  type: bool
bootstrap_error:
  description: Why not, when it did not.
  returned: always
  type: str
probed_from:
  description: Host name of the machine the probes ran on.
  returned: always
  type: str
cluster_id:
  description: Cluster id from metadata.
  returned: always
  type: str
controller_id:
  description: Controller broker id from metadata.
  returned: always
  type: int
brokers:
  description: Brokers as advertised in metadata, with C(problem) (null when the address resolves and accepts TCP) and C(usable).
  returned: always
  type: list
  elements: dict
  sample: [{node_id: 1, host: wn0-primar.example.internal.cloudapp.net, port: 9092, rack: null, problem: does not resolve, usable: false}]
broker_count:
  description: Number of brokers in metadata.
  returned: always
  type: int
kafka_version:
  description: Kafka version (major.minor) inferred from ApiVersions, or the pinned O(api_version).
  returned: always
  type: str
  sample: "3.6"
version_source:
  description: V(ApiVersions) or V(pinned (api_version option)).
  returned: always
  type: str
api_versions:
  description: API name to the lowest and highest version the broker supports.
  returned: always
  type: dict
mm2_features:
  description: MirrorMaker 2 feature to C(supported), C(since) (Kafka version), C(kip), C(label).
  returned: always
  type: dict
broker_configs:
  description: The broker settings that were describable, by key.
  returned: always
  type: dict
can_create_topics:
  description: Result of the CreateTopics dry run (null when not checked or inconclusive).
  returned: always
  type: bool
principal:
  description: Who the connection authenticates as (the SASL user, the Kerberos principal or the client certificate), never a secret.
  returned: always
  type: str
  version_added: 0.3.0
acls_checked:
  description: How many topics and creations O(required_acls) were checked on.
  returned: when O(required_acls) is set and the cluster answered
  type: int
  version_added: 0.3.0
acls_unverified:
  description: The O(required_acls) that could not be checked without changing something (groups, topics that do not exist yet).
  returned: when O(required_acls) is set and the cluster answered
  type: list
  elements: str
  version_added: 0.3.0
denied:
  description: Operations the cluster denied (C(operation), C(resource), C(error); C(acl), the missing ACL, for O(required_acls)).
  returned: always
  type: list
  elements: dict
findings:
  description: Each finding with C(severity) (error, warning, info), C(check), C(cluster), C(message) and C(fix).
  returned: always
  type: list
  elements: dict
errors:
  description: Messages (with their fix) of the findings of severity error.
  returned: always
  type: list
  elements: str
summary:
  description: One row for the preflight table.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import KafkaConnection, KafkaConnectionError, KafkaError, ensure_kafka_python
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import kafka_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.preflight import option_problems, run_cluster_info
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.versions import FEATURES


def main():
    spec = kafka_connection_argument_spec()
    spec.update(
        cluster_alias=dict(type="str"),
        probe_advertised=dict(type="bool", default=True),
        probe_timeout=dict(type="float", default=5),
        replication_factors=dict(type="dict", default={}),
        internal_replication_factors=dict(type="dict", default={}),
        required_features=dict(type="list", elements="str", choices=sorted(FEATURES), default=[]),
        mirrormaker_version=dict(type="str"),
        check_topic_creation=dict(type="bool", default=False),
        expected_topics=dict(type="list", elements="str", default=[]),
        probe_topic=dict(type="str", default="kafkaops-preflight-probe"),
        required_acls=dict(type="list", elements="dict", default=[]),
        report_unreachable=dict(type="bool", default=False),
    )
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    problems = option_problems(module.params)
    if problems:
        module.fail_json(msg="kafka_cluster_info: invalid options: " + "; ".join(problems) + ".")
    ensure_kafka_python(module)
    try:
        with KafkaConnection(module.params) as connection:
            result = run_cluster_info(connection, module.params)
    except KafkaConnectionError as exc:
        module.fail_json(msg=str(exc))
    except KafkaError as exc:
        module.fail_json(msg=f"kafka_cluster_info: a Kafka request to {', '.join(module.params['bootstrap_servers'])} failed "
                             f"({type(exc).__name__}: {exc}); check that the cluster is healthy and the connection options are right.")
    if not result["bootstrap_reachable"] and not module.params["report_unreachable"]:
        module.fail_json(msg=result["bootstrap_error"], **result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
