# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench.controller_python's pin reading and plays, and the Makefile's choice of the virtualenv's Python."""
from __future__ import annotations

import subprocess

import pytest
import yaml

from bench import controller_python
from tests.support.checkout import REPO


def test_the_pin_is_read_from_the_requirements_line_whatever_its_case_and_comment():
    text = "# tools\n-r requirements.txt\nAnsible-Core == 2.19.14  # pinned\nansible-lint==26.10.1\n"
    assert controller_python.pinned("ansible-core", text) == "Ansible-Core==2.19.14"
    with pytest.raises(SystemExit, match="molecule is not pinned"):
        controller_python.pinned("molecule", text)


@pytest.mark.parametrize("kind", sorted(controller_python.KINDS))
def test_each_play_is_tasks_of_one_kind_on_localhost(kind):
    [play] = yaml.safe_load(controller_python.playbook(kind, 3))
    assert play["hosts"] == "localhost" and play["connection"] == "local" and play["gather_facts"] is False
    assert [task["name"] for task in play["tasks"]] == [f"{kind} 0", f"{kind} 1", f"{kind} 2"]
    bodies = [{key: value for key, value in task.items() if key != "name"} for task in play["tasks"]]
    assert bodies[0] == bodies[1] == bodies[2] and len(bodies[0]) == 1


def test_make_builds_the_virtualenv_with_the_distributions_python(tmp_path):
    """`make -n` prints the commands without running them: the venv comes from /usr/bin/python3 where it is a 3.11-3.13 with
    venv (this machine's is), not from the python3 that PATH finds first (pyenv's here)."""
    usable = subprocess.run(["/usr/bin/python3", "-c", "import sys, ensurepip, venv; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))"],
                            check=False).returncode == 0
    if not usable:
        pytest.skip("/usr/bin/python3 here is not a CPython 3.11-3.13 with venv")
    venv = tmp_path / "venv"
    planned = subprocess.run(["make", "-n", "-C", str(REPO), f"VENV={venv}", f"{venv}/.installed"], capture_output=True, text=True, check=True).stdout
    assert f"/usr/bin/python3 -m venv {venv}" in planned.splitlines()
