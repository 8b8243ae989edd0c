# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every role include names an entry point of the role's meta/argument_specs.yml exactly, so that Ansible validates it.

ansible-core looks the entry point up by the `tasks_from` string as written (ansible/playbook/role/__init__.py,
`argspecs.get(self._from_files.get('tasks', 'main'))`): `tasks_from: stop.yml` runs tasks/stop.yml but matches no entry
point named `stop`, so its options are never checked and the spec is documentation only (how the collection's four
tasks_from entry points went unvalidated until 2026-11-27)."""
from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.checkout import REPO

INCLUDES = {"include_role", "import_role", "ansible.builtin.include_role", "ansible.builtin.import_role"}
PREFIX = "kafkaops.mirror."


def tasks_of(node):
    """Every task dict in a play, block or task list, nested blocks and plays' task sections included."""
    if isinstance(node, list):
        for item in node:
            yield from tasks_of(item)
    elif isinstance(node, dict):
        yield node
        for key in ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always"):
            if key in node:
                yield from tasks_of(node[key])


def role_includes(root: Path = REPO):
    """(file, role, tasks_from) of every include_role/import_role of one of the collection's roles with a tasks_from."""
    for path in sorted([*root.glob("roles/*/tasks/*.yml"), *root.glob("playbooks/*.yml")]):
        for task in tasks_of(yaml.safe_load(path.read_text()) or []):
            for key in INCLUDES & set(task):
                include = task[key] or {}
                name = str(include.get("name", ""))
                if "tasks_from" in include and name.startswith(PREFIX):
                    yield path.relative_to(root).as_posix(), name[len(PREFIX):], include["tasks_from"]


def entry_points(role: str, root: Path = REPO) -> set:
    return set(yaml.safe_load((root / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"])


def unvalidated(root: Path = REPO) -> list:
    return [f"{path}: {role} tasks_from {tasks_from!r} is no entry point of roles/{role}/meta/argument_specs.yml "
            f"({sorted(entry_points(role, root))}): write the entry point's name, without .yml"
            for path, role, tasks_from in role_includes(root) if tasks_from not in entry_points(role, root)]


def test_every_role_include_is_validated_against_its_entry_point():
    found = list(role_includes())
    assert len(found) >= 8, found  # version (4), stop, record_cutover, cutover_status: the walk reaches them
    assert unvalidated() == []


def test_an_include_with_the_file_name_is_caught(tmp_path):
    (tmp_path / "roles" / "mirrormaker2" / "meta").mkdir(parents=True)
    (tmp_path / "roles" / "mirrormaker2" / "meta" / "argument_specs.yml").write_text(
        (REPO / "roles" / "mirrormaker2" / "meta" / "argument_specs.yml").read_text())
    (tmp_path / "roles" / "failover" / "tasks").mkdir(parents=True)
    (tmp_path / "roles" / "failover" / "tasks" / "main.yml").write_text(
        "- name: Stop\n  block:\n    - ansible.builtin.include_role: {name: kafkaops.mirror.mirrormaker2, tasks_from: stop.yml}\n")
    problems = unvalidated(tmp_path)
    assert len(problems) == 1 and "roles/failover/tasks/main.yml: mirrormaker2 tasks_from 'stop.yml'" in problems[0], problems
