# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DIR/inventory.yml: the groups and variables docs/development.md promises to the roles and tests."""
from __future__ import annotations

import getpass
import grp
import hashlib
import os
import shlex
from pathlib import Path

import yaml

from sandbox.jvm import SHORT_LIVED_JVM_OPTIONS
from sandbox.node_init import SUPERVISOR_CONF_D, SUPERVISOR_CONFIG
from sandbox.nodes import SSH_OPTIONS
from sandbox.wheelhouse import pip_environment

SOURCE_ALIAS = "primary"
TARGET_ALIAS = "secondary"


# The node's own Python, as on a fresh HDInsight host (a role may install a virtualenv and switch to it).
NODE_PYTHON = "/usr/bin/python3"


def control_path_dir(state: dict) -> str:
    """Where Ansible keeps its SSH master connections to this sandbox's nodes: short (sun_path is 108 bytes) and this
    sandbox's own, so a master left from an earlier sandbox on the same addresses is never reused."""
    return f"/tmp/kafkaops-ssh-{hashlib.sha1(state['dir'].encode()).hexdigest()[:12]}"


def _host_vars(node: dict, state: dict) -> dict:
    if "ssh" not in node:  # local node mode
        return {
            "ansible_connection": "local",
            "ansible_host": node["ip"],
            "ansible_python_interpreter": node["python"],
            "hosts_sync_file": node["hosts_file"],
        }
    return {
        "ansible_connection": "ssh",
        "ansible_host": node["ssh"]["host"],
        "ansible_port": node["ssh"]["port"],
        "ansible_user": node["ssh"]["user"],
        "ansible_ssh_private_key_file": node["ssh"]["private_key"],
        "ansible_ssh_common_args": shlex.join(SSH_OPTIONS),
        "ansible_control_path_dir": control_path_dir(state),
        # One SSH exchange per task instead of four (mkdir, put, chmod, run), as the README advises for HDInsight: sudo
        # there needs no tty, and no task changes user with become_user, the case pipelining would hide.
        "ansible_pipelining": True,
        "ansible_python_interpreter": NODE_PYTHON,
    }


def _mirrormaker_vars(state: dict, mirrormaker: dict, supervisorctl: list) -> dict:
    if "ssh" in mirrormaker:
        return {
            "mirrormaker2_kafka_home": state["kafka_home"],
            "mirrormaker2_service_manager": "supervisor",
            # This venv's supervisorctl for the node's supervisord (its socket is root's only: every call needs become).
            "mirrormaker2_supervisorctl": shlex.join([*supervisorctl[:-2], "-c", SUPERVISOR_CONFIG]),
            "mirrormaker2_supervisor_conf_dir": SUPERVISOR_CONF_D,
            "mirror_host_pip_environment": pip_environment(*(Path(state[key]) for key in ("wheelhouse", "wheelhouse_kerberos") if key in state)),
            # up(secure=True): the realm's clients on this node (sandbox/lab_kerberos.py), as an ESP head node's.
            **({"mirror_host_kerberos": True} if "kerberos" in state.get("security", {}) else {}),
        }
    supervisor_dir = Path(state["supervisord"]["config"]).parent
    return {
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
    }


def build_inventory(state: dict, supervisorctl: list) -> dict:
    groups = {}
    for alias, cluster in state["clusters"].items():
        groups[f"{alias}_kafka"] = {
            "hosts": {node["name"]: _host_vars(node, state) for node in cluster["nodes"] if node["role"] == "worker"},
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
    groups["mirrormaker"] = {
        "hosts": {mirrormaker["name"]: _host_vars(mirrormaker, state)},
        "vars": {
            **_mirrormaker_vars(state, mirrormaker, supervisorctl),
            # Spark binds to what the hostname resolves to; pin the node's own address on every node kind. The driver
            # JVM (spark-submit reads SPARK_SUBMIT_OPTS) gets the lab's options for short-lived JVMs (sandbox/jvm.py).
            "mirror_validation_environment": {"SPARK_LOCAL_IP": mirrormaker["ip"], "SPARK_SUBMIT_OPTS": SHORT_LIVED_JVM_OPTIONS},
            # So does real MirrorMaker's JVM: in the lab it lives minutes, beside a dozen others on 2 cores (the stand-in
            # ignores it).
            "mirrormaker2_jvm_performance_opts": SHORT_LIVED_JVM_OPTIONS,
        },
    }
    # The groups fix the direction (primary_kafka -> secondary_kafka); the aliases are their kafka_cluster_alias.
    return {"all": {"children": groups}}


def write_inventory(path: Path, state: dict, supervisorctl: list) -> None:
    path.write_text("# Written by `python -m sandbox up`; rewritten at every start.\n"
                    + yaml.safe_dump(build_inventory(state, supervisorctl), sort_keys=False, default_flow_style=False))
