# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An emulator of the Ambari v1 REST API subset kafkaops.mirror uses (docs/reference/ambari-api.md).

`python -m sandbox.ambari --config <json>` with keys: host, port, cluster_name, username, password,
hosts ([{host_name, ip, components: [KAFKA_BROKER | ZOOKEEPER_SERVER | ZOOKEEPER_CLIENT]}]),
broker_config_file, restart_commands ({host_name: argv} for exactly the KAFKA_BROKER hosts: restarts the broker that
host runs on; hosts of a one-broker cluster share its argv, run once per request), state_file, esp (true: an ESP
cluster, SASL_PLAINTEXT listeners and Kerberos), ambari_version (default 2.7.3), stale_at_start ([[host_name, component], ...]:
stale before anything changed, as on a fresh real cluster), maintenance_on ([[host_name, component], ...]) and
hosts_in_maintenance ([host_name, ...]). See docs/development.md for fault injection.

Modelled: basic auth (403), the X-Requested-By rule (400), media types (406 for an Accept without
text/plain; an application/json body fails before 2.7.4), clusters and desired_configs, configurations by
type and tag, PUT desired_config (no version when every property equals the desired config), service
config version history with notes, hosts with IPs, component host lists, host_components with
stale_configs (from a service's own config types and its configuration dependencies: zoo.cfg makes
KAFKA stale), state (INSTALLED while a restart has them stopped) and effective maintenance state, 404 for
an unknown service,
partial responses (`fields=`), equality predicates and `page_size`/`to=end`, RESTART requests run one at a
time through PENDING, IN_PROGRESS and COMPLETED/FAILED with per-host tasks that restart the broker each host runs on,
a per-host restart log (GET /_sandbox/restarts), gateway failures before or after a write is processed, persistence in state_file.

Not modelled: other commands (START/STOP, service checks), request stages, config groups and host
overrides, stack advisor validation and recommendations, Kerberos, LDAP/SSO, users and permissions
(one admin user), sorting and non-equality predicates (`.in()`, `!=`), the `minimal_response`
form, changing maintenance mode through the API, alerts, rolling-restart request schedules (batches) and TLS.
"""
