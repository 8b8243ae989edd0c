# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No role installs a Debian or Ubuntu package through the apt module (ansible.builtin.apt, or ansible.builtin.package,
which picks apt there): they go through node_python's apt_install entry point, apt-get under raw.

The apt module needs python3-apt. Ubuntu 18.04 (HDInsight 5.0 and 5.1) builds it for /usr/bin/python3 only, which is 3.6;
under the 3.8 that node_python installs, the module respawns itself under 3.6 (ansible/modules/apt.py,
probe_interpreters_for_module), where ansible-core 2.19's module code refuses to run (module_utils/basic.py _PY_MIN). The
lab's nodes cannot show this (their Python has python3-apt), so the rule is checked here, on the task files."""
from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.checkout import REPO
from tests.unit.collection.test_role_entry_points import tasks_of

APT_MODULES = {"apt", "ansible.builtin.apt", "package", "ansible.builtin.package"}
NOT_DEBIAN = "ansible_facts.os_family != 'Debian'"


def conditions(task: dict) -> list:
    when = task.get("when", [])
    return [when] if isinstance(when, str) else list(when)


def apt_module_tasks(root: Path = REPO) -> list:
    """(file, task name) of every task that could install a package through the apt module on Debian or Ubuntu."""
    found = []
    for path in sorted([*root.glob("roles/*/tasks/*.yml"), *root.glob("playbooks/*.yml"), *root.glob("roles/*/handlers/*.yml")]):
        for task in tasks_of(yaml.safe_load(path.read_text()) or []):
            if APT_MODULES & set(task) and NOT_DEBIAN not in conditions(task):
                found.append((str(path.relative_to(root)), task.get("name")))
    return found


def test_no_role_installs_a_debian_package_with_the_apt_module():
    assert apt_module_tasks() == [], "install through node_python's apt_install entry point (apt-get under raw)"


def test_the_check_finds_an_apt_module_task(tmp_path):
    tasks = tmp_path / "roles" / "r" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "main.yml").write_text(yaml.safe_dump([
        {"name": "java", "become": True, "ansible.builtin.package": {"name": "openjdk-8-jre-headless"}},
        {"name": "elsewhere", "ansible.builtin.package": {"name": "java"}, "when": [NOT_DEBIAN]},
        {"name": "in a block", "block": [{"name": "venv", "apt": {"name": "python3.8-venv"}}]},
    ]))
    assert apt_module_tasks(tmp_path) == [("roles/r/tasks/main.yml", "java"), ("roles/r/tasks/main.yml", "venv")]
