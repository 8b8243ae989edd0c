"""An emulator of the Ambari v1 REST API subset kafkaops.mirror uses (reference/ambari-api.md).

`python -m sandbox.ambari --config <json>` with keys: host, port, cluster_name, username, password,
hosts ([{host_name, ip, components: [KAFKA_BROKER | ZOOKEEPER_SERVER | ZOOKEEPER_CLIENT]}]),
broker_config_file, restart_command (argv), state_file. See docs/development.md for fault injection.

Modelled: basic auth (403), the X-Requested-By rule (400), clusters and desired_configs, configurations by
type and tag, PUT desired_config making a new version even for identical properties, service config version
history with notes, hosts with IPs, component host lists, host_components with stale_configs, partial
responses (`fields=`) and equality predicates, RESTART requests run one at a time through PENDING,
IN_PROGRESS and COMPLETED/FAILED with per-host tasks, persistence of all of it in state_file.

Not modelled: other commands (START/STOP, service checks), request stages, config groups and host
overrides, stack advisor validation and recommendations, Kerberos, LDAP/SSO, users and permissions
(one admin user), pagination/sorting and non-equality predicates (`.in()`, `!=`), the `minimal_response`
form, maintenance mode, alerts, rolling-restart request schedules (batches), TLS, and per-host broker
processes (a restart of any KAFKA_BROKER restarts the sandbox's one broker).
"""
