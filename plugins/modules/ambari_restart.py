#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ambari_restart
short_description: Restart the stale (or named) host components of an Ambari service and wait for the request
version_added: 0.1.0
description:
  - Asks Ambari which host components of O(service) have stale configs (or, with O(only_stale=false), takes all of them),
    narrows them to O(components) and O(hosts) when given, and restarts them with one Ambari request, or one request per
    host when O(rolling=true).
  - Sends no request when nothing needs a restart, so a second run reports no change.
  - Skips, with a warning, components in maintenance mode (their own or their host's), as Ambari's service-level operations
    do, unless O(hosts) names their host.
  - Waits for each request to finish; fails when it ends V(FAILED), V(TIMEDOUT) or V(ABORTED), naming the request id, its
    context and the failed tasks, or when it is still running after O(wait_timeout) seconds. A rolling restart stops at the
    first host that fails.
  - A request that ended V(COMPLETED) only means the start scripts returned. Before the next host restarts, the module waits
    until Ambari reports the restarted components V(STARTED) and, when O(bootstrap_servers) is given, until Kafka's own
    metadata shows every broker registered before the restart registered again and every replica that was in its
    partition's in-sync set before back in it.
  - The restart POST is not repeated blindly after a gateway error or a timeout, as Ambari does not de-duplicate requests.
    The module first looks for a request with the same context that Ambari accepted meanwhile, and follows that one.
author: kafkaops.mirror developers (@kafkaops)
extends_documentation_fragment:
  - kafkaops.mirror.attributes
  - kafkaops.mirror.ambari_connection
  - kafkaops.mirror.kafka_connection
attributes:
  check_mode:
    support: full
    details:
      - Reports in RV(restarted) what would restart and sends no request.
  diff_mode:
    support: full
    details:
      - Before lists the host components that need a restart; after is empty.
  idempotent:
    support: full
    details:
      - With O(only_stale=true) (the default). With O(only_stale=false) every run restarts.
options:
  service:
    description: Ambari service whose host components restart.
    type: str
    default: KAFKA
  components:
    description: Restart only these components of O(service) (for example V(KAFKA_BROKER)). All when omitted.
    type: list
    elements: str
  hosts:
    description: Restart only components on these hosts (FQDNs as Ambari lists them). All when omitted.
    type: list
    elements: str
  only_stale:
    description: Restart only host components whose configs are stale. V(false) restarts all selected components.
    type: bool
    default: true
  rolling:
    description:
      - Restart one host at a time (one Ambari request per host, each awaited, and its brokers back, before the next).
      - V(false) restarts every selected host with one request, which on Kafka takes all replicas of a partition down at once.
    type: bool
    default: true
  bootstrap_servers:
    description:
      - The Kafka cluster of O(service), as C(host:port), to check that restarted brokers are back (see the description);
        the other Kafka connection options apply to it. Needs kafka-python on the host that runs the module.
      - Without it, the module waits only for Ambari's V(STARTED) state.
    type: list
    elements: str
    required: false
  wait:
    description: Wait for each request to finish. With V(false) the module returns the request ids right after Ambari accepts them.
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for each request before failing.
    type: int
    default: 1800
  poll_interval:
    description: Seconds between two status checks of a running request.
    type: float
    default: 5
  context:
    description: Request context shown in Ambari's Background Operations. A default names the service.
    type: str
seealso:
  - module: kafkaops.mirror.ambari_config
"""

EXAMPLES = r"""
- name: Restart the Kafka brokers whose configs are stale, one host at a time
  kafkaops.mirror.ambari_restart:
    url: https://secondary.azurehdinsight.net
    password: "{{ ambari_password }}"
    cluster_name: secondary
    service: KAFKA
    components: [KAFKA_BROKER]
    rolling: true
    wait_timeout: 900
"""

RETURN = r"""
restarted:
  description: Host components restarted (or, in check mode, that would restart).
  returned: always
  type: list
  elements: dict
  contains: &host_component
    service:
      description: Service name.
      type: str
      sample: KAFKA
    component:
      description: Component name.
      type: str
      sample: KAFKA_BROKER
    host:
      description: Host FQDN.
      type: str
      sample: wn0-kafka.abc.internal.cloudapp.net
in_maintenance:
  description: Host components that would restart but are in maintenance mode (their own or their host's).
  returned: always
  type: list
  elements: dict
  contains:
    # The entries of restarted, and why the component was left alone.
    <<: *host_component
    maintenance_state:
      description: Ambari's effective maintenance state (V(ON), V(IMPLIED_FROM_HOST), ...).
      type: str
requests:
  description: Ambari requests sent, in order; empty in check mode and when nothing needed a restart.
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: Ambari request id.
      type: int
      sample: 42
    context:
      description: Request context.
      type: str
      sample: Restart stale KAFKA components (kafkaops.mirror)
    hosts:
      description: Hosts the request restarts components on.
      type: list
      elements: str
    status:
      description: Final request status (V(Accepted) when O(wait=false)).
      type: str
      sample: COMPLETED
    started:
      description: Whether Ambari reported the restarted components V(STARTED) afterwards; absent when O(wait=false).
      type: bool
    brokers_back:
      description: Whether Kafka's metadata showed the brokers back and partitions in sync; absent without O(bootstrap_servers).
      type: bool
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.broker_rejoin import ClusterNotReadable, RejoinWaiter
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.client import AmbariError, ambari_connection_argument_spec
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.diff_mode import exit_with_diff
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.restart import RestartFailed, restart_components
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.client import (
    HAS_KAFKA,
    KAFKA_IMPORT_ERROR,
    ensure_kafka_python,
)
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import connection_option_errors, kafka_connection_argument_spec


def argument_spec():
    spec = ambari_connection_argument_spec()
    kafka = kafka_connection_argument_spec()
    # The Kafka connection is optional here: without it only Ambari's component state is awaited.
    kafka["bootstrap_servers"]["required"] = False
    spec.update(kafka)
    spec.update(
        service=dict(type="str", default="KAFKA"),
        components=dict(type="list", elements="str"),
        hosts=dict(type="list", elements="str"),
        only_stale=dict(type="bool", default=True),
        rolling=dict(type="bool", default=True),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=1800),
        poll_interval=dict(type="float", default=5),
        context=dict(type="str"),
    )
    return spec


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    if module.params["wait_timeout"] <= 0 or module.params["poll_interval"] <= 0:
        module.fail_json(msg=f"wait_timeout ({module.params['wait_timeout']}) and poll_interval ({module.params['poll_interval']}) must be positive")
    rejoin = None
    if module.params["bootstrap_servers"]:
        errors = connection_option_errors(module.params)
        if errors:
            module.fail_json(msg="Kafka connection options for the broker check: " + "; ".join(errors))
        if not HAS_KAFKA:
            module.fail_json(
                msg=f"{missing_required_lib('kafka-python')} The broker check (bootstrap_servers given) reads Kafka from this host: "
                "run the module where kafka-python is (the ambari_kafka role's ambari_kafka_restart_host; role kafkaops.mirror.mirror_host "
                "installs it), or leave bootstrap_servers out (role: ambari_kafka_broker_check=false) to wait only for Ambari's STARTED.",
                exception=KAFKA_IMPORT_ERROR,
            )
        ensure_kafka_python(module)
        rejoin = RejoinWaiter(module.params, poll_interval=module.params["poll_interval"])
    try:
        result = restart_components(module.params, module.check_mode, rejoin=rejoin)
    except ClusterNotReadable as exc:
        module.fail_json(msg=f"Before restarting anything, the Kafka cluster could not be read for the broker check: {exc}", changed=False)
    except RestartFailed as exc:
        failed = dict(exc.result)
        failed.pop("diff")
        module.fail_json(msg=str(exc), **failed)
    except AmbariError as exc:
        module.fail_json(msg=str(exc), changed=False)
    for entry in result["in_maintenance"]:
        module.warn(f"{entry['component']} on {entry['host']} needs a restart but is in maintenance mode ({entry['maintenance_state']}); "
                    "it was left alone - restart it once it is out of maintenance, or name its host in hosts")
    exit_with_diff(module, result)


if __name__ == "__main__":
    main()
