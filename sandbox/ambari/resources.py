# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ambari's JSON shapes for each resource, with their key properties (always in a partial response)."""
from __future__ import annotations

from . import defaults
from .cluster import COMPONENT_SERVICE

KEYS = {
    "cluster": ["Clusters/cluster_name", "Clusters/version"],
    "host": ["Hosts/cluster_name", "Hosts/host_name"],
    "host_component": ["HostRoles/cluster_name", "HostRoles/component_name", "HostRoles/host_name"],
    "service": ["ServiceInfo/cluster_name", "ServiceInfo/service_name"],
    "component": ["ServiceComponentInfo/cluster_name", "ServiceComponentInfo/component_name", "ServiceComponentInfo/service_name"],
    "configuration": ["tag", "type", "version", "Config/cluster_name", "Config/stack_id"],
    "service_config_version": ["service_config_version", "service_name"],
    "request": ["Requests/cluster_name", "Requests/id"],
    "task": ["Tasks/cluster_name", "Tasks/id", "Tasks/request_id"],
}


class Shapes:
    def __init__(self, cluster, base: str):
        self.cluster = cluster
        self.base = base  # http://host:port/api/v1

    def cluster_href(self) -> str:
        return f"{self.base}/clusters/{self.cluster.name}"

    def cluster_resource(self) -> dict:
        c = self.cluster
        return {
            "href": self.cluster_href(),
            "Clusters": {
                "cluster_id": 2,
                "cluster_name": c.name,
                "version": defaults.STACK_ID,
                "desired_configs": c.desired_configs(),
                "provisioning_state": "INSTALLED",
                "security_type": "KERBEROS" if c.esp else "NONE",
                "total_hosts": len(c.hosts),
            },
            "hosts": [self.host(h, brief=True) for h in c.hosts],
            "services": [self.service(s, brief=True) for s in c.services()],
        }

    def host(self, host: dict, brief: bool = False) -> dict:
        href = f"{self.cluster_href()}/hosts/{host['host_name']}"
        info = {"cluster_name": self.cluster.name, "host_name": host["host_name"]}
        if brief:
            return {"href": href, "Hosts": info}
        info.update(
            {
                "ip": host["ip"],
                "public_host_name": host["host_name"],
                "host_state": "HEALTHY",
                "host_status": "HEALTHY",
                "maintenance_state": "ON" if host["host_name"] in self.cluster.maintenance_hosts else "OFF",
                "os_type": "ubuntu18",
                "rack_info": "/default-rack",
            }
        )
        components = [self.host_component(host["host_name"], comp) for comp in host["components"]]
        return {"href": href, "Hosts": info, "host_components": [self._brief_host_component(hc) for hc in components]}

    def host_component(self, host_name: str, component: str) -> dict:
        service = COMPONENT_SERVICE[component]
        return {
            "href": f"{self.cluster_href()}/hosts/{host_name}/host_components/{component}",
            "HostRoles": {
                "cluster_name": self.cluster.name,
                "component_name": component,
                "host_name": host_name,
                "service_name": service,
                "stale_configs": self.cluster.is_stale(host_name, component),
                "state": self.cluster.component_state(host_name, component),
                "desired_state": "STARTED",
                "maintenance_state": self.cluster.maintenance_state(host_name, component),
            },
            "host": {"href": f"{self.cluster_href()}/hosts/{host_name}"},
        }

    @staticmethod
    def _brief_host_component(hc: dict) -> dict:
        roles = hc["HostRoles"]
        return {"href": hc["href"], "HostRoles": {k: roles[k] for k in ("cluster_name", "component_name", "host_name")}}

    def service(self, service: str, brief: bool = False) -> dict:
        href = f"{self.cluster_href()}/services/{service}"
        info = {"cluster_name": self.cluster.name, "service_name": service}
        if brief:
            return {"href": href, "ServiceInfo": info}
        info.update({"state": "STARTED", "maintenance_state": "OFF"})
        components = sorted({c for _host, c in self.cluster.host_components(service)})
        return {"href": href, "ServiceInfo": info, "components": [self.component(service, c, brief=True) for c in components]}

    def component(self, service: str, component: str, brief: bool = False) -> dict:
        href = f"{self.cluster_href()}/services/{service}/components/{component}"
        info = {"cluster_name": self.cluster.name, "component_name": component, "service_name": service}
        if brief:
            return {"href": href, "ServiceComponentInfo": info}
        hosts = [h for h, c in self.cluster.host_components(service) if c == component]
        category = "MASTER" if component == "ZOOKEEPER_SERVER" else "SLAVE"
        info.update({"state": "STARTED", "total_count": len(hosts), "started_count": len(hosts), "category": category})
        return {
            "href": href,
            "ServiceComponentInfo": info,
            "host_components": [self._brief_host_component(self.host_component(h, component)) for h in hosts],
        }

    def configuration(self, config_type: str, tag: str, record: dict) -> dict:
        return {
            "href": f"{self.cluster_href()}/configurations?type={config_type}&tag={tag}",
            "tag": tag,
            "type": config_type,
            "version": record["version"],
            "Config": {"cluster_name": self.cluster.name, "stack_id": defaults.STACK_ID},
            "properties": dict(record["properties"]),
            "properties_attributes": dict(record.get("properties_attributes") or {}),
        }

    def service_config_version(self, scv: dict) -> dict:
        current = self.cluster.current_service_config_version(scv["service_name"])
        records = self.cluster.state["configs"]
        return {
            "href": f"{self.cluster_href()}/configurations/service_config_versions?service_name={scv['service_name']}"
            f"&service_config_version={scv['service_config_version']}",
            "cluster_name": self.cluster.name,
            "configurations": [
                {k: v for k, v in self.configuration(t, tag, records[t][tag]).items() if k != "href"} for t, tag in sorted(scv["types"].items())
            ],
            "createtime": scv["createtime"],
            "group_id": -1,
            "group_name": "Default",
            "hosts": [],
            "is_cluster_compatible": True,
            "is_current": current is scv,
            "service_config_version": scv["service_config_version"],
            "service_config_version_note": scv["service_config_version_note"],
            "service_name": scv["service_name"],
            "stack_id": defaults.STACK_ID,
            "user": scv["user"],
        }

    def request(self, request: dict) -> dict:
        tasks = request["tasks"]
        return {
            "href": f"{self.cluster_href()}/requests/{request['id']}",
            "Requests": {
                "cluster_name": self.cluster.name,
                "id": request["id"],
                "request_context": request["context"],
                "request_status": request["status"],
                "progress_percent": request["progress_percent"],
                "create_time": request["create_time"],
                "start_time": request["start_time"],
                "end_time": request["end_time"],
                "resource_filters": request["resource_filters"],
                "operation_level": request["operation_level"],
                "task_count": len(tasks),
                "completed_task_count": sum(1 for t in tasks if t["status"] in ("COMPLETED", "FAILED", "TIMEDOUT", "ABORTED")),
                "failed_task_count": sum(1 for t in tasks if t["status"] == "FAILED"),
                "aborted_task_count": sum(1 for t in tasks if t["status"] == "ABORTED"),
                "timed_out_task_count": sum(1 for t in tasks if t["status"] == "TIMEDOUT"),
                "queued_task_count": sum(1 for t in tasks if t["status"] == "QUEUED"),
                "type": "COMMAND",
            },
            "tasks": [self.task(request, t) for t in tasks],
        }

    def task(self, request: dict, task: dict) -> dict:
        return {
            "href": f"{self.cluster_href()}/requests/{request['id']}/tasks/{task['id']}",
            "Tasks": {"cluster_name": self.cluster.name, **task},
        }
