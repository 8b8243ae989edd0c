"""DIR/inventory.yml: the groups and variables docs/development.md promises to the roles and tests."""
from __future__ import annotations

import getpass
import grp
import os
import shlex
from pathlib import Path

import yaml

SOURCE_ALIAS = "primary"
TARGET_ALIAS = "secondary"


def _host_vars(node: dict) -> dict:
    return {
        "ansible_connection": "local",
        "ansible_host": node["ip"],
        "ansible_python_interpreter": node["python"],
        "hosts_sync_file": node["hosts_file"],
    }


def build_inventory(state: dict, supervisorctl: list) -> dict:
    groups = {}
    for alias, cluster in state["clusters"].items():
        groups[f"{alias}_kafka"] = {
            "hosts": {node["name"]: _host_vars(node) for node in cluster["nodes"] if node["role"] == "worker"},
            "vars": {
                "kafka_cluster_alias": alias,
                "kafka_bootstrap_servers": cluster["bootstrap_servers"],
                "ambari_url": cluster["ambari"]["url"],
                "ambari_cluster_name": cluster["ambari"]["cluster_name"],
                "ambari_username": cluster["ambari"]["username"],
                "ambari_password": cluster["ambari"]["password"],
            },
        }
    mirrormaker = next(node for node in state["clusters"][TARGET_ALIAS]["nodes"] if node["name"] == state["mirrormaker_node"])
    supervisor_dir = Path(state["supervisord"]["config"]).parent
    groups["mirrormaker"] = {
        "hosts": {mirrormaker["name"]: _host_vars(mirrormaker)},
        "vars": {
            "mirrormaker2_kafka_home": state["kafka_home"],
            "mirrormaker2_service_manager": "supervisor",
            "mirrormaker2_supervisor_conf_dir": str(supervisor_dir / "conf.d"),
            "mirrormaker2_supervisorctl": shlex.join(supervisorctl),
            "mirrormaker2_config_dir": str(Path(state["dir"]) / "mirrormaker2"),
            # The stand-in enters the node's mount namespace, which needs the sandbox's own user (root in CI);
            # and the sandbox must not add users to the machine.
            "mirrormaker2_user": getpass.getuser(),
            "mirrormaker2_group": grp.getgrgid(os.getgid()).gr_name,
            "mirrormaker2_create_user": False,
            # Spark resolves the machine's hostname at start; the node's hosts file knows only the cluster's names.
            "mirror_validation_environment": {"SPARK_LOCAL_IP": mirrormaker["ip"]},
        },
    }
    return {"all": {"vars": {"mirror_source_alias": SOURCE_ALIAS, "mirror_target_alias": TARGET_ALIAS}, "children": groups}}


def write_inventory(path: Path, state: dict, supervisorctl: list) -> None:
    path.write_text("# Written by `python -m sandbox up`; rewritten at every start.\n"
                    + yaml.safe_dump(build_inventory(state, supervisorctl), sort_keys=False, default_flow_style=False))
