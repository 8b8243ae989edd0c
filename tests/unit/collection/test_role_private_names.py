# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal names stay in their role (docs/development.md, "Conventions"): a `_<role>_*` or `__<role>_*` variable belongs to
roles/<role>/ (the longest role name it starts with), and no other role, no playbook and no template outside that folder
reads or sets it. Roles hand each other public facts (`mirrormaker2_kafka_version_resolved`, `kafka_topics_changes`, ...).

Every YAML file of playbooks/ and roles/ (but a role's files/) is read as YAML, keys and values, so comments do not count;
every file under a role's templates/ is read as text without its `{# ... #}` comments.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, NamedTuple

import yaml

from tests.support.checkout import REPO

YAML_SUFFIXES = {".yml", ".yaml"}
JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.S)


class Use(NamedTuple):
    path: str  # relative to the tree's root
    line: int  # 1-based
    name: str
    owner: str  # the role the name belongs to

    def __str__(self) -> str:
        return (f"{self.path}:{self.line}: {self.name} is internal to role {self.owner} (roles/{self.owner}/); read what that role "
                "shares through a public fact instead (docs/development.md, \"Conventions\")")


def role_names(root: Path) -> list[str]:
    return sorted(path.name for path in (root / "roles").iterdir() if path.is_dir())


def name_pattern(roles: list[str]) -> re.Pattern:
    """`_<role>_x` or `__<role>_x` not inside a longer word; the longest role name wins (`_mirror_validation_x` is never a
    `mirror` role's)."""
    alternatives = "|".join(re.escape(role) for role in sorted(roles, key=len, reverse=True))
    return re.compile(r"(?<![A-Za-z0-9_])__?(%s)_[A-Za-z0-9_]+" % alternatives)


def scanned_files(root: Path) -> Iterator[tuple[Path, str | None, bool]]:
    """(path, the role that owns it or None for a playbook, whether it is a template)."""
    for path in sorted((root / "playbooks").rglob("*")):
        if path.is_file() and path.suffix in YAML_SUFFIXES:
            yield path, None, False
    for role in role_names(root):
        for path in sorted((root / "roles" / role).rglob("*")):
            folder = path.relative_to(root / "roles" / role).parts[0]
            if not path.is_file() or folder == "files":
                continue
            if folder == "templates":
                yield path, role, True
            elif path.suffix in YAML_SUFFIXES:
                yield path, role, False


def _scalars(text: str) -> Iterator[yaml.ScalarNode]:
    seen = set()
    for document in yaml.compose_all(text, Loader=yaml.SafeLoader):
        stack = [document]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:  # an alias is the node of its anchor
                continue
            seen.add(id(node))
            if isinstance(node, yaml.ScalarNode):
                yield node
            elif isinstance(node, yaml.MappingNode):
                stack.extend(item for pair in node.value for item in pair)
            elif isinstance(node, yaml.SequenceNode):
                stack.extend(node.value)


def _yaml_lines(text: str, pattern: re.Pattern) -> Iterator[tuple[int, str]]:
    """(line, name) of every internal role name in a key or value; a multi-line scalar is matched line by line in the source."""
    lines = text.splitlines()
    found = set()
    for node in _scalars(text):
        names = {match.group(0) for match in pattern.finditer(node.value)}
        if not names:
            continue
        first = node.start_mark.line
        last = node.end_mark.line - 1 if node.end_mark.column == 0 else node.end_mark.line
        for index in range(first, max(first, last) + 1):
            for match in pattern.finditer(lines[index]):
                if match.group(0) in names:
                    found.add((index + 1, match.group(0)))
    return iter(sorted(found))


def _template_lines(text: str, pattern: re.Pattern) -> Iterator[tuple[int, str]]:
    # A comment becomes as many empty lines as it spans, so the line numbers stay the file's.
    text = JINJA_COMMENT.sub(lambda match: "\n" * match.group(0).count("\n"), text)
    for number, line in enumerate(text.splitlines(), 1):
        for match in pattern.finditer(line):
            yield number, match.group(0)


def foreign_uses(root: Path) -> tuple[list[Use], int]:
    """Every internal role name used outside its role, and the number of files read."""
    pattern = name_pattern(role_names(root))
    uses, checked = [], 0
    for path, file_owner, template in scanned_files(root):
        checked += 1
        text = path.read_text(encoding="utf-8")
        for line, name in (_template_lines if template else _yaml_lines)(text, pattern):
            owner = pattern.match(name).group(1)
            if owner != file_owner:
                uses.append(Use(path.relative_to(root).as_posix(), line, name, owner))
    return uses, checked


def test_no_role_or_playbook_uses_another_roles_internal_names():
    uses, checked = foreign_uses(REPO)
    roles = role_names(REPO)
    assert {"mirrormaker2", "kafka_topics", "mirror_validation", "failover", "preflight"} <= set(roles), roles
    assert checked > 50, f"only {checked} files read: is {REPO} the collection's checkout?"
    assert not uses, f"{len(uses)} use(s) of another role's internal names:\n  " + "\n  ".join(map(str, uses))


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_check_names_file_line_and_owner_of_each_foreign_use(tmp_path):
    """What the check reports, on a small tree shaped like the one before issue 30: the playbook and the roles read
    _mirrormaker2_kafka_version and __kafka_topics_result."""
    _write(tmp_path, "roles/mirrormaker2/tasks/version.yml", """---
- name: Use the version
  ansible.builtin.set_fact:
    _mirrormaker2_kafka_version: "{{ _mirrormaker2_release_setting or _mirrormaker2_detected[mirrormaker2_kafka_home] }}"
""")
    _write(tmp_path, "roles/mirrormaker2/README.md", "Sets `_mirrormaker2_kafka_version`.\n")  # prose is not read
    _write(tmp_path, "roles/kafka_topics/tasks/main.yml", """---
- name: Align
  kafkaops.mirror.kafka_topic:
    topics: []
  register: __kafka_topics_result
""")
    _write(tmp_path, "roles/failover/tasks/main.yml", """---
# Comments may name _mirrormaker2_kafka_version: only keys and values count.
- name: Wait
  kafkaops.mirror.kafka_mirror_status:
    groups: "{{ _failover_groups }}"
    topics_exclude: >-
      {{ [none | kafkaops.mirror.mm2_topics_exclude(
          _mirrormaker2_kafka_version)] }}
- name: Stop
  ansible.builtin.include_role:
    name: kafkaops.mirror.mirrormaker2
    tasks_from: stop.yml
  vars:
    _mirrormaker2_detected: {}
""")
    _write(tmp_path, "roles/mirror_host/vars/main.yml", "---\n_mirror_host_venv: /opt/venv\n")
    _write(tmp_path, "roles/mirror_validation/templates/arguments.j2", """{#- _mirrormaker2_kafka_version in a comment
   over two lines -#}
- --mirrormaker-version
- {{ _mirrormaker2_kafka_version | string | to_json }} {{ _mirror_validation_job }} {{ _mirror_host_venv }}
""")
    _write(tmp_path, "roles/mirror_validation/files/job.yml", "---\nx: _mirrormaker2_kafka_version\n")  # shipped data, not read
    _write(tmp_path, "playbooks/mirror.yml", """---
- name: MirrorMaker 2
  hosts: mirrormaker
  roles:
    - role: kafkaops.mirror.mirrormaker2
      vars:
        mirrormaker2_target_topic_changes: "{{ __kafka_topics_result.changes | default({}) }}"
- name: Validation
  hosts: mirrormaker
  vars:
    _play_flow: a->b
    _mirror_validation_flow: a->b
  roles:
    - role: kafkaops.mirror.mirror_validation
      when: _play_flow not in (mirrormaker2_cutover | default({}))
""")
    uses, checked = foreign_uses(tmp_path)
    assert checked == 6  # README.md and files/ are not read
    assert [(use.path, use.line, use.name, use.owner) for use in uses] == [
        ("playbooks/mirror.yml", 7, "__kafka_topics_result", "kafka_topics"),
        ("playbooks/mirror.yml", 12, "_mirror_validation_flow", "mirror_validation"),  # a play's own names take _play_
        ("roles/failover/tasks/main.yml", 8, "_mirrormaker2_kafka_version", "mirrormaker2"),
        ("roles/failover/tasks/main.yml", 14, "_mirrormaker2_detected", "mirrormaker2"),  # setting one counts as well
        ("roles/mirror_validation/templates/arguments.j2", 4, "_mirrormaker2_kafka_version", "mirrormaker2"),
        ("roles/mirror_validation/templates/arguments.j2", 4, "_mirror_host_venv", "mirror_host"),
    ]
    assert str(uses[0]).startswith("playbooks/mirror.yml:7: __kafka_topics_result is internal to role kafka_topics")


def test_the_longest_role_name_owns_a_name():
    pattern = name_pattern(["mirror", "mirror_validation", "kafka", "kafka_topics"])
    owners = {name: pattern.match(name).group(1) for name in
              ("_mirror_validation_flow", "__mirror_x", "_kafka_topics_source", "__kafka_result")}
    assert owners == {"_mirror_validation_flow": "mirror_validation", "__mirror_x": "mirror",
                      "_kafka_topics_source": "kafka_topics", "__kafka_result": "kafka"}
    # Not a variable of a role: inside a longer word, or a role name without its trailing underscore.
    assert [match.group(0) for match in pattern.finditer("test_mirror_x mirror_validation_x _mirror x_kafka_y __kafka")] == []
