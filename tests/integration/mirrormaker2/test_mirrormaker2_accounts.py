# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirrormaker2 role's service account rule on localhost, in check mode: an absent user (and its group) would be
created, an existing one is used as it is with its primary group, and an absent one that may not be created fails
before any change. The account databases are read back with getent, independently of the role.

supervisorctl is a stand-in script that answers like supervisorctl for a program supervisord does not know yet (exit 4):
nothing here runs MirrorMaker; the sandbox's MirrorMaker node covers the real service (test_mirrormaker2_absent.py). The
role's discovery reads the sandbox's brokers.
"""
from __future__ import annotations

import grp
import json
import pwd
import subprocess
from pathlib import Path

import pytest

from tests.support.ansible_play import run_playbook

pytestmark = pytest.mark.integration

ABSENT_USER = "kafkaops-mm2-absent"
ROLE = "kafkaops.mirror.mirrormaker2 : "


def getent(database: str, key: str) -> str | None:
    result = subprocess.run(["getent", database, key], capture_output=True, text=True, check=False)
    return result.stdout.strip() or None


def deploy(tmp_path: Path, state: dict, **overrides):
    ctl = tmp_path / "supervisorctl"
    ctl.write_text("#!/bin/sh\necho \"$2: ERROR (no such process)\"\nexit 4\n")
    ctl.chmod(0o755)
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    # The role refuses a home without the launcher before anything; check mode never runs it.
    launcher = home / "bin" / "connect-mirror-maker.sh"
    launcher.write_text("#!/bin/sh\nexit 1\n")
    launcher.chmod(0o755)
    (tmp_path / "conf.d").mkdir(exist_ok=True)
    play = [{"name": "MirrorMaker 2 on this machine", "hosts": "mirrormaker", "gather_facts": False,
             "roles": [{"role": "kafkaops.mirror.mirrormaker2"}]}]
    playbook = tmp_path / "deploy.yml"
    playbook.write_text(json.dumps(play))
    # The role's defaults name the cluster groups: their first hosts carry the clusters' variables and are never contacted.
    groups = {f"{alias}_kafka": {"hosts": {f"{alias}-broker": {}},
                                 "vars": {"kafka_cluster_alias": alias, "kafka_bootstrap_servers": state["clusters"][alias]["bootstrap_servers"]}}
              for alias in ("primary", "secondary")}
    inventory = tmp_path / "inventory.json"
    inventory.write_text(json.dumps({"all": {"children": {"mirrormaker": {"hosts": {"localhost": {"ansible_connection": "local"}}}, **groups}}}))
    extra = {
        "mirrormaker2_kafka_home": str(home), "mirrormaker2_kafka_version": "3.9",
        "mirrormaker2_config_dir": str(tmp_path / "etc"),
        "mirrormaker2_service_manager": "supervisor", "mirrormaker2_supervisorctl": str(ctl),
        "mirrormaker2_supervisor_conf_dir": str(tmp_path / "conf.d"),
        "mirrormaker2_flows": [{"source": "primary", "target": "secondary"}],
    }
    extra.update(overrides)
    return run_playbook(playbook, inventory=inventory, extra_vars=extra, check=True, diff=True)


def test_an_absent_user_and_group_would_be_created(tmp_path, sandbox):
    assert getent("passwd", ABSENT_USER) is None and getent("group", ABSENT_USER) is None, f"{ABSENT_USER} must not exist here"
    result = deploy(tmp_path, sandbox, mirrormaker2_user=ABSENT_USER)
    assert not result.failed, result.stdout[-4000:]
    assert result.task(f"{ROLE}Create the service group {ABSENT_USER}")["changed"]
    assert result.task(f"{ROLE}Create the service user {ABSENT_USER}")["changed"]
    assert getent("passwd", ABSENT_USER) is None and getent("group", ABSENT_USER) is None, "check mode created an account"
    assert not (tmp_path / "etc").exists()


def test_an_existing_user_is_used_as_it_is(tmp_path, sandbox):
    user = pwd.getpwnam("nobody")
    primary = grp.getgrgid(user.pw_gid).gr_name
    before = (getent("passwd", "nobody"), getent("group", primary))
    result = deploy(tmp_path, sandbox, mirrormaker2_user="nobody")
    assert not result.failed, result.stdout[-4000:]
    for task in (f"{ROLE}Create the service group {primary}", f"{ROLE}Create the service user nobody"):
        assert "skip_reason" in result.task(task), f"{task} ran for an existing account"
    assert result.task(f"{ROLE}Choose the group of the service files")["ansible_facts"]["_mirrormaker2_file_group"] == primary
    assert (getent("passwd", "nobody"), getent("group", primary)) == before


def test_an_absent_user_that_may_not_be_created_fails_before_any_change(tmp_path, sandbox):
    result = deploy(tmp_path, sandbox, mirrormaker2_user=ABSENT_USER, mirrormaker2_create_user=False)
    assert result.failed
    message = result.task(f"{ROLE}Fail when the service account is absent and may not be created")["msg"]
    assert f"User {ABSENT_USER} does not exist" in message and "nothing was changed" in message
    assert result.changed_count == 0
    assert getent("passwd", ABSENT_USER) is None
