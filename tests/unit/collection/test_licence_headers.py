# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Licence: GPL-3.0-or-later in every file that can carry a comment (docs/development.md, "Conventions")."""
from __future__ import annotations

import subprocess
from pathlib import PurePosixPath

from tests.support.checkout import REPO

LICENCE_LINE = "GNU General Public License v3.0+"
HEAD_LINES = 5
# Kinds that take `#` comments (Jinja2 templates take `{#- ... -#}`), and files without a suffix that do.
COMMENTABLE_SUFFIXES = {".py", ".sh", ".yml", ".yaml", ".ini", ".cfg", ".j2"}
COMMENTABLE_NAMES = {"Makefile", ".ansible-lint", ".yamllint", ".gitignore"}
# Prose, or generated: docs/ is prose, changelog.yaml is written by antsibull-changelog.
EXCLUDED_DIRS = ("docs/",)
EXCLUDED_FILES = {"changelogs/changelog.yaml"}


def _tracked_files() -> list[str]:
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    return [name for name in listing.decode().split("\0") if name]


def _commentable(name: str, head: bytes) -> bool:
    if name in EXCLUDED_FILES or name.startswith(EXCLUDED_DIRS):
        return False
    path = PurePosixPath(name)
    return path.suffix in COMMENTABLE_SUFFIXES or path.name in COMMENTABLE_NAMES or head.startswith(b"#!")


def test_every_commentable_file_carries_the_licence_header():
    checked, offenders = 0, []
    for name in _tracked_files():
        path = REPO / name
        if not path.is_file():  # tracked but deleted in the working tree
            continue
        data = path.read_bytes()
        if not _commentable(name, data):
            continue
        checked += 1
        if LICENCE_LINE not in "".join(data.decode("utf-8", "replace").splitlines(True)[:HEAD_LINES]):
            offenders.append(name)
    assert checked > 100, f"only {checked} files checked: is {REPO} a git checkout?"
    assert not offenders, (
        f"{len(offenders)} file(s) lack '{LICENCE_LINE}' in their first {HEAD_LINES} lines; add the header of "
        "plugins/modules/kafka_topic.py (lines 3-4) in the file's comment syntax, after a shebang or coding line, "
        "before a YAML `---`, as `{#- ... -#}` lines in a Jinja2 template:\n  " + "\n  ".join(offenders))
