# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated cluster: config versions, service config history, stale flags, restart requests.

Everything that must survive an emulator restart lives in one JSON document written to
`state_file` after every change.
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from . import defaults

TERMINAL = {"COMPLETED", "FAILED", "TIMEDOUT", "ABORTED"}
COMPONENT_SERVICE = {
    "KAFKA_BROKER": "KAFKA",
    "ZOOKEEPER_SERVER": "ZOOKEEPER",
    "ZOOKEEPER_CLIENT": "ZOOKEEPER",
}


class ApiError(Exception):
    """An error Ambari answers with `{"status": N, "message": ...}`."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def now_ms() -> int:
    return int(time.time() * 1000)


class Cluster:
    def __init__(self, config: dict):
        self.name = config["cluster_name"]
        self.hosts = [dict(h, components=list(h.get("components", []))) for h in config["hosts"]]
        for host in self.hosts:
            unknown = [c for c in host["components"] if c not in COMPONENT_SERVICE]
            if unknown:
                raise ValueError(f"host {host['host_name']}: unknown components {unknown}; known: {sorted(COMPONENT_SERVICE)}")
        self.username = config.get("username", "admin")
        self.esp = bool(config.get("esp"))
        # A fresh real cluster can already have stale components (a config changed and never restarted).
        self.stale_at_start = [tuple(pair) for pair in config.get("stale_at_start", [])]
        unknown = [pair for pair in self.stale_at_start if pair not in self.host_components()]
        if unknown:
            raise ValueError(f"stale_at_start names {unknown}, which are not [host_name, component] pairs of the hosts")
        # Maintenance mode: component-level ([[host_name, component]]) and host-level ([host_name]).
        self.maintenance_components = {tuple(pair) for pair in config.get("maintenance_on", [])}
        self.maintenance_hosts = set(config.get("hosts_in_maintenance", []))
        unknown = sorted(self.maintenance_components - set(self.host_components()))
        unknown += sorted(self.maintenance_hosts - {h["host_name"] for h in self.hosts})
        if unknown:
            raise ValueError(f"maintenance_on / hosts_in_maintenance name {unknown}, which the hosts do not have")
        self.ambari_version = str(config.get("ambari_version", defaults.AMBARI_VERSION))
        self.broker_config_file = config.get("broker_config_file")
        # Every KAFKA_BROKER host -> the argv that restarts the broker it runs on (hosts of a one-broker cluster share one).
        self.restart_commands = dict(config.get("restart_commands") or {})
        brokers = {h["host_name"] for h in self.hosts if "KAFKA_BROKER" in h["components"]}
        if set(self.restart_commands) != brokers:
            raise ValueError(f"restart_commands must name exactly the KAFKA_BROKER hosts: without a command "
                             f"{sorted(brokers - set(self.restart_commands))}, not KAFKA_BROKER hosts {sorted(set(self.restart_commands) - brokers)}")
        self.state_file = Path(config["state_file"]) if config.get("state_file") else None
        self.lock = threading.RLock()
        self.state = self._load() or self._initial_state()
        self._abort_unfinished_requests()
        self.save()

    # ---- persistence -------------------------------------------------------------------------
    def _load(self):
        if self.state_file and self.state_file.exists():
            return json.loads(self.state_file.read_text())
        return None

    def save(self) -> None:
        if not self.state_file:
            return
        with self.lock:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.state_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.state, indent=1, sort_keys=True))
            os.replace(tmp, self.state_file)

    def _initial_state(self) -> dict:
        created = now_ms()
        zookeepers = [h["host_name"] for h in self.hosts if "ZOOKEEPER_SERVER" in h["components"]]
        configs, desired = {}, {}
        for config_type, properties in defaults.initial_configs(zookeepers, self.esp).items():
            configs[config_type] = {"version1": {"version": 1, "properties": properties, "properties_attributes": {}, "created": created}}
            desired[config_type] = "version1"
        stale = {f"{host}|{component}": True for host, component in self.stale_at_start}
        state = {"configs": configs, "desired": desired, "service_config_versions": [], "stale": stale, "requests": {}, "next_request_id": 1,
                 "next_task_id": 1, "component_state": {}, "restarts": []}
        for service in sorted(set(defaults.CONFIG_TYPE_SERVICE.values())):
            types = [t for t, s in defaults.CONFIG_TYPE_SERVICE.items() if s == service]
            state["service_config_versions"].append(
                {
                    "service_name": service,
                    "service_config_version": 1,
                    "service_config_version_note": f"Initial configurations for {service.title()}",
                    "createtime": created,
                    "user": self.username,
                    "types": {t: "version1" for t in types},
                }
            )
        return state

    def _abort_unfinished_requests(self) -> None:
        for request in self.state["requests"].values():
            if request["status"] not in TERMINAL:
                request["status"] = "ABORTED"
                for task in request["tasks"]:
                    if task["status"] not in TERMINAL:
                        task["status"] = "ABORTED"
                        task["stderr"] = "Ambari server restarted while the request was running"

    # ---- configurations ----------------------------------------------------------------------
    def desired_configs(self) -> dict:
        with self.lock:
            return {t: {"tag": tag, "version": self.state["configs"][t][tag]["version"]} for t, tag in self.state["desired"].items()}

    def config_versions(self):
        """(type, tag, record) for every stored configuration."""
        with self.lock:
            return [(t, tag, rec) for t, tags in self.state["configs"].items() for tag, rec in tags.items()]

    def desired_properties(self, config_type: str) -> dict:
        with self.lock:
            return dict(self.state["configs"][config_type][self.state["desired"][config_type]]["properties"])

    def _differs_from_desired(self, entry: dict) -> bool:
        """AmbariManagementControllerImpl.updateCluster's isConfigurationCreationNeeded for one desired_config entry."""
        config_type = entry.get("type")
        current = self.state["configs"].get(config_type, {}).get(self.state["desired"].get(config_type))
        if current is None:
            return True
        if (entry.get("properties_attributes") or {}) != (current.get("properties_attributes") or {}):
            return True
        properties = entry.get("properties")
        if not properties:
            return entry.get("tag") != self.state["desired"][config_type]
        return {str(k): str(v) for k, v in properties.items()} != current["properties"]

    def set_desired_configs(self, entries: list, user: str) -> list:
        """PUT desired_config: validate all entries first, then store; one service config version per service.

        As real Ambari (AmbariManagementControllerImpl.updateCluster), a PUT whose every entry equals the desired
        config makes no version and marks nothing stale.
        """
        if not isinstance(entries, list) or not entries:
            raise ApiError(400, "Clusters/desired_config must be a non-empty list of {type, tag, properties}")
        with self.lock:
            if all(entry.get("type") in defaults.CONFIG_TYPE_SERVICE for entry in entries) and not any(
                self._differs_from_desired(entry) for entry in entries
            ):
                return []
            planned = []
            for entry in entries:
                config_type, tag = entry.get("type"), entry.get("tag")
                if config_type not in defaults.CONFIG_TYPE_SERVICE:
                    raise ApiError(400, f"The config type {config_type} does not exist in the stack {defaults.STACK_ID}")
                if not tag:
                    raise ApiError(400, f"A tag is required for config type {config_type}")
                existing = self.state["configs"][config_type].get(tag)
                if "properties" in entry:
                    if existing is not None:
                        raise ApiError(
                            500,
                            "org.apache.ambari.server.controller.spi.SystemException: An internal system exception occurred: "
                            f"Configuration with tag '{tag}' exists for '{config_type}'",
                        )
                    if not isinstance(entry["properties"], dict):
                        raise ApiError(400, f"properties of {config_type} must be an object")
                elif existing is None:
                    raise ApiError(400, f"Configuration with tag '{tag}' does not exist for '{config_type}' and no properties were given")
                planned.append(entry)

            created = now_ms()
            by_service: dict = {}
            for entry in planned:
                config_type, tag = entry["type"], entry["tag"]
                if "properties" in entry:
                    version = 1 + max(rec["version"] for rec in self.state["configs"][config_type].values())
                    self.state["configs"][config_type][tag] = {
                        "version": version,
                        "properties": {str(k): str(v) for k, v in entry["properties"].items()},
                        "properties_attributes": entry.get("properties_attributes") or {},
                        "created": created,
                    }
                self.state["desired"][config_type] = tag
                service = defaults.CONFIG_TYPE_SERVICE[config_type]
                record = by_service.setdefault(service, {"note": "", "types": {}})
                record["types"][config_type] = tag
                record["note"] = record["note"] or entry.get("service_config_version_note", "")

            new_versions = []
            for service, record in by_service.items():
                current = self.current_service_config_version(service)
                types = dict(current["types"]) if current else {}
                types.update(record["types"])
                scv = {
                    "service_name": service,
                    "service_config_version": 1 + max(v["service_config_version"] for v in self._service_versions(service)),
                    "service_config_version_note": record["note"],
                    "createtime": created,
                    "user": user,
                    "types": types,
                }
                self.state["service_config_versions"].append(scv)
                new_versions.append(scv)
            # Real Ambari marks stale whenever a config a component depends on differs from what the host runs.
            changed_types = {entry["type"] for entry in planned}
            for host, component in self.host_components():
                if changed_types & set(defaults.SERVICE_CONFIG_DEPENDENCIES[COMPONENT_SERVICE[component]]):
                    self.state["stale"][f"{host}|{component}"] = True
            self.save()
            return new_versions

    def _service_versions(self, service: str) -> list:
        return [v for v in self.state["service_config_versions"] if v["service_name"] == service]

    def current_service_config_version(self, service: str):
        versions = self._service_versions(service)
        return versions[-1] if versions else None

    # ---- hosts and components ----------------------------------------------------------------
    def host(self, host_name: str):
        return next((h for h in self.hosts if h["host_name"] == host_name), None)

    def host_components(self, service: str | None = None):
        """(host_name, component) pairs, optionally of one service."""
        return [
            (h["host_name"], c)
            for h in self.hosts
            for c in h["components"]
            if service is None or COMPONENT_SERVICE[c] == service
        ]

    def maintenance_state(self, host_name: str, component: str) -> str:
        """The effective maintenance state Ambari reports as HostRoles/maintenance_state
        (MaintenanceStateHelper.getEffectiveState: the component's own ON first, then its host's)."""
        if (host_name, component) in self.maintenance_components:
            return "ON"
        return "IMPLIED_FROM_HOST" if host_name in self.maintenance_hosts else "OFF"

    def component_state(self, host_name: str, component: str) -> str:
        """STARTED, or INSTALLED while a restart has it stopped.

        Ambari leaves the state after a RESTART to its status commands (agent/HeartbeatProcessor.java: "do not affect
        states for custom commands except START and STOP"); this answers as a status command run at that moment would.
        """
        with self.lock:
            return self.state.setdefault("component_state", {}).get(f"{host_name}|{component}", "STARTED")

    def set_component_states(self, request: dict, state: str) -> None:
        with self.lock:
            for task in request["tasks"]:
                self.state.setdefault("component_state", {})[f"{task['host_name']}|{task['role']}"] = state
            self.save()

    def record_restart(self, request: dict, **times) -> None:
        """The restart log tests read at GET /_sandbox/restarts: per request and host, when it was asked, stopped, started."""
        with self.lock:
            log = self.state.setdefault("restarts", [])
            for task in request["tasks"]:
                entry = next((e for e in log if e["request_id"] == request["id"] and e["host_name"] == task["host_name"]
                              and e["component"] == task["role"]), None)
                if entry is None:
                    entry = {"request_id": request["id"], "host_name": task["host_name"], "component": task["role"],
                             "requested_ms": request["create_time"]}
                    log.append(entry)
                entry.update(times)
            self.save()

    def restarts(self) -> list:
        with self.lock:
            return json.loads(json.dumps(self.state.get("restarts", [])))

    def is_stale(self, host_name: str, component: str) -> bool:
        with self.lock:
            return bool(self.state["stale"].get(f"{host_name}|{component}", False))

    def services(self) -> list:
        return sorted({COMPONENT_SERVICE[c] for _host, c in self.host_components()})

    # ---- requests ----------------------------------------------------------------------------
    def create_restart_request(self, body: dict, fail: bool, delay_s: float, early_completion: bool = False, watch_broker=None) -> dict:
        info = body.get("RequestInfo") or {}
        command = info.get("command")
        if command != "RESTART":
            raise ApiError(400, f"Unsupported command {command!r}: this emulator only runs RESTART requests")
        filters = body.get("Requests/resource_filters") or []
        if not filters:
            raise ApiError(400, "Requests/resource_filters must name at least one service/component/hosts filter")
        targets = []
        for flt in filters:
            component = flt.get("component_name")
            service = flt.get("service_name")
            hosts = [h.strip() for h in str(flt.get("hosts", "")).split(",") if h.strip()]
            if component not in COMPONENT_SERVICE or COMPONENT_SERVICE[component] != service:
                raise ApiError(400, f"Invalid resource filter: component {component!r} does not belong to service {service!r}")
            if not hosts:
                raise ApiError(400, f"Invalid resource filter for {component}: 'hosts' is empty")
            for host_name in hosts:
                host = self.host(host_name)
                if host is None or component not in host["components"]:
                    raise ApiError(
                        400,
                        f"org.apache.ambari.server.ServiceComponentHostNotFoundException: ServiceComponentHost not found, "
                        f"clusterName={self.name}, serviceName={service}, serviceComponentName={component}, hostName={host_name}",
                    )
                targets.append((host_name, service, component))
        with self.lock:
            request_id = self.state["next_request_id"]
            self.state["next_request_id"] += 1
            tasks = []
            for host_name, service, component in targets:
                tasks.append(
                    {
                        "id": self.state["next_task_id"],
                        "request_id": request_id,
                        "host_name": host_name,
                        "role": component,
                        "command": "CUSTOM_COMMAND",
                        "command_detail": f"RESTART {service}/{component}",
                        "status": "PENDING",
                        "exit_code": 999,
                        "stdout": "",
                        "stderr": "",
                        "start_time": -1,
                        "end_time": -1,
                    }
                )
                self.state["next_task_id"] += 1
            request = {
                "id": request_id,
                "context": info.get("context", ""),
                "command": command,
                "status": "PENDING",
                "progress_percent": 0.0,
                "create_time": now_ms(),
                "start_time": -1,
                "end_time": -1,
                "resource_filters": filters,
                "operation_level": info.get("operation_level"),
                "tasks": tasks,
                "inject_failure": fail,
                "delay_s": delay_s,
                "early_completion": early_completion,
                "watch_broker": watch_broker,
            }
            self.state["requests"][str(request_id)] = request
            self.save()
            return request

    def request(self, request_id) -> dict:
        with self.lock:
            request = self.state["requests"].get(str(request_id))
            if request is None:
                raise ApiError(404, f"The requested resource doesn't exist: Request not found, requestId={request_id}")
            return json.loads(json.dumps(request))

    def requests(self) -> list:
        with self.lock:
            return [self.request(rid) for rid in sorted(self.state["requests"], key=int)]

    def update_request(self, request_id: int, status: str, progress: float, task_status: str | None = None, **task_fields) -> None:
        with self.lock:
            request = self.state["requests"][str(request_id)]
            request["status"] = status
            request["progress_percent"] = progress
            stamp = now_ms()
            if status == "IN_PROGRESS" and request["start_time"] < 0:
                request["start_time"] = stamp
            if status in TERMINAL:
                request["end_time"] = stamp
            for task in request["tasks"]:
                if task_status:
                    task["status"] = task_status
                    if task_status == "IN_PROGRESS":
                        task["start_time"] = stamp
                    if task_status in TERMINAL:
                        task["end_time"] = stamp
                task.update(task_fields)
            self.save()

    def clear_stale(self, request: dict, desired_at_start: dict) -> None:
        """Restarted components run the config that was desired when they restarted."""
        with self.lock:
            for task in request["tasks"]:
                types = defaults.SERVICE_CONFIG_DEPENDENCIES[COMPONENT_SERVICE[task["role"]]]
                if all(self.state["desired"][t] == desired_at_start[t] for t in types):
                    self.state["stale"][f"{task['host_name']}|{task['role']}"] = False
            self.save()

    def desired_tags(self) -> dict:
        with self.lock:
            return dict(self.state["desired"])
