# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter kafkaops.mirror.kafka_connection: a cluster host's inventory variables -> the Kafka modules' connection options."""
from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import (
    INVENTORY_PREFIX,
    connection_option_errors,
    inventory_connection_options,
    kafka_connection_argument_spec,
)

# Variable prefixes that can only mean a connection setting, so a name under them that is not one is a typo.
_CONNECTION_PREFIXES = tuple(INVENTORY_PREFIX + part for part in ("security_", "sasl_", "ssl_"))


def kafka_connection(host_vars, overrides=None):
    if not isinstance(host_vars, Mapping):
        raise AnsibleFilterError(f"kafka_connection: expected the variables of a cluster host (hostvars[host]), got {type(host_vars).__name__}")
    host = host_vars.get("inventory_hostname", "(a host)")
    options = inventory_connection_options()
    known = {INVENTORY_PREFIX + option for option in options}
    typos = sorted(name for name in host_vars.keys() if name.startswith(_CONNECTION_PREFIXES) and name not in known)
    if typos:
        raise AnsibleFilterError(
            f"kafka_connection: host {host} defines {', '.join(typos)}, which no connection option reads; "
            f"the connection variables are {', '.join(sorted(known))}"
        )
    spec = kafka_connection_argument_spec()
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(spec))
    if unknown:
        raise AnsibleFilterError(f"kafka_connection: unknown connection option(s) {', '.join(unknown)}; options are {', '.join(spec)}")
    connection = {option: host_vars[INVENTORY_PREFIX + option] for option in options if host_vars.get(INVENTORY_PREFIX + option) is not None}
    connection.update((option, value) for option, value in overrides.items() if value is not None)
    if isinstance(connection.get("bootstrap_servers"), str):
        connection["bootstrap_servers"] = [server.strip() for server in connection["bootstrap_servers"].split(",") if server.strip()]
    # Defaults are left to the modules: the result holds what the inventory says, nothing more.
    # Paths are paths on the host that runs the modules: the controller must not expand them.
    for rule in spec.values():
        rule.pop("default", None)
        rule.pop("required", None)
        if rule["type"] == "path":
            rule["type"] = "str"
    result = ArgumentSpecValidator(spec).validate(connection)
    errors = [str(error) for error in result.errors] + connection_option_errors(result.validated_parameters)
    if errors:
        # The values are left out of the message: they may be secrets.
        raise AnsibleFilterError(f"kafka_connection: the connection variables of host {host} do not work together: {'; '.join(errors)}")
    return {option: value for option, value in result.validated_parameters.items() if value is not None}


class FilterModule:
    def filters(self):
        return {"kafka_connection": kafka_connection}
