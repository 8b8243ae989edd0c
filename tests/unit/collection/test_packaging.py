# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection as users get it: the galaxy tarball holds no local state, and every module and role documents itself."""
from __future__ import annotations

import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.support.ansible_play import ansible_env
from tests.support.checkout import REPO

BIN = Path(sys.executable).parent
JUNK = (".venv/", ".sandbox", ".git/", "__pycache__", ".pyc", "tests/output/", "collections/", ".ansible/", "reports/", ".pytest_cache")
MODULES = sorted(p.stem for p in (REPO / "plugins" / "modules").glob("*.py"))
ROLES = sorted(p.name for p in (REPO / "roles").iterdir() if p.is_dir())


def test_galaxy_build_has_no_local_state(tmp_path):
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), str(REPO)],
                   check=True, capture_output=True, env=ansible_env())
    (tarball,) = tmp_path.glob("kafkaops-mirror-*.tar.gz")
    with tarfile.open(tarball) as archive:
        names = archive.getnames()
    assert "plugins/modules/kafka_topic.py" in names
    assert "roles/mirrormaker2/meta/argument_specs.yml" in names
    junk = [name for name in names if any(marker in name for marker in JUNK)]
    assert not junk, f"local state in the galaxy tarball: {junk[:20]}"


# What ansible-doc shows of a module that documents itself, and of a role with an argument spec.
RENDERED = {"module": ("EXAMPLES", "RETURN VALUES"), "role": ("ENTRY POINT:", "main")}
# Where ansible-doc starts a plugin's page when it shows several: "> MODULE kafkaops.mirror.x (path)", "> ROLE: *kafkaops.mirror.x* (path)".
PAGE_START = re.compile(r"^> (?:MODULE|ROLE:) \*?kafkaops\.mirror\.(\w+)\*? ", re.M)


@pytest.fixture(scope="module")
def doc_pages():
    """{plugin type: {name: its page}}: one ansible-doc run per plugin type for every plugin of that type (a run per plugin
    cost a whole Ansible start each), cut into pages at each plugin's heading."""
    pages = {}
    for plugin_type, names in (("module", MODULES), ("role", ROLES)):
        proc = subprocess.run([str(BIN / "ansible-doc"), "-t", plugin_type, *(f"kafkaops.mirror.{name}" for name in names)],
                              capture_output=True, text=True, env=ansible_env(), check=False)
        assert proc.returncode == 0, proc.stderr
        starts = list(PAGE_START.finditer(proc.stdout))
        pages[plugin_type] = {start.group(1): proc.stdout[start.start():end.start() if end else None]
                              for start, end in zip(starts, starts[1:] + [None])}
    return pages


@pytest.mark.parametrize("plugin_type, name", [("module", module) for module in MODULES] + [("role", role) for role in ROLES])
def test_ansible_doc_renders(doc_pages, plugin_type, name):
    page = doc_pages[plugin_type].get(name, "")
    assert page, f"ansible-doc showed no page for {plugin_type} kafkaops.mirror.{name}; pages: {sorted(doc_pages[plugin_type])}"
    assert all(section in page for section in RENDERED[plugin_type]), page[:2000]


def _play_names(listing: str) -> list:
    return re.findall(r"^\s+play #\d+ \([^)]*\): (.+?)\tTAGS:", listing, re.M)


def test_installed_collection_runs_its_playbook_by_name(tmp_path):
    """README: `ansible-playbook kafkaops.mirror.mirror`, and a one-line user-side mirror.yml importing it, from the tarball."""
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), str(REPO)],
                   check=True, capture_output=True, env=ansible_env())
    (tarball,) = tmp_path.glob("kafkaops-mirror-*.tar.gz")
    installed = tmp_path / "installed"
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "install", "--offline", "--force", "-p", str(installed), str(tarball)],
                   check=True, capture_output=True, env=ansible_env())
    user_playbook = tmp_path / "mirror.yml"
    user_playbook.write_text("- ansible.builtin.import_playbook: kafkaops.mirror.mirror\n")
    env = {**ansible_env(), "ANSIBLE_COLLECTIONS_PATH": str(installed)}
    expected = [play["name"] for play in yaml.safe_load((REPO / "playbooks" / "mirror.yml").read_text())]
    for playbook in ("kafkaops.mirror.mirror", str(user_playbook)):
        proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "--list-tasks", playbook],
                              capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
        assert proc.returncode == 0, proc.stderr
        assert str(installed) in proc.stdout or playbook == str(user_playbook)
        assert _play_names(proc.stdout) == expected, proc.stdout
