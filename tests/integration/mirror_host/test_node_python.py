# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node_python role on a node whose only Python is too old for ansible-core (HDInsight 5.x: Ubuntu 18.04's 3.6.9).

Sandbox quirk, handled here: the sandbox's nodes run Debian 12, whose /usr/bin/python3 is 3.11. A 3.6-only node is played
by the MirrorMaker node with its inventory interpreter pointed at a real CPython 3.6.15, and "a newer Python the image already
has" is a /usr/local/bin/python3.8 link to a real CPython 3.8.18: this machine's pyenv builds, which the node's root (an
overlay of the machine's) holds under /root/.pyenv; the node lets its users through /root (mode 711 in the node's own
layer, put back at the end), as their shared libraries are found by that path. node_python_search is narrowed so that
/usr/bin/python3 (3.11 here, 3.6 on HDInsight) is not among the usual places. Read back independently: the Python a later
module really ran with (setup's own report), dpkg on the node, and the node's files over SSH.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from sandbox.nodes import as_root, ssh_argv
from tests.support.ansible_play import run_playbook

pytestmark = pytest.mark.integration

PYENV = Path("/root/.pyenv/versions")
IMAGE_PYTHON = "/usr/local/bin/python3.8"


def pyenv_python(minor: str) -> str | None:
    """The newest pyenv CPython 3.<minor> of this machine (the path is the same inside a node), or None."""
    found = sorted(PYENV.glob(f"3.{minor}.*/bin/python3.{minor}"), key=lambda path: [int(part) for part in path.parents[1].name.split(".")])
    return str(found[-1]) if found else None


OLD_PYTHON, NEW_PYTHON = pyenv_python("6"), pyenv_python("8")
ROLE_ONLY = [{"name": "Nodes", "hosts": "mirrormaker", "gather_facts": False, "roles": ["kafkaops.mirror.node_python"]}]
LATER = {"name": "A later play", "hosts": "mirrormaker", "gather_facts": False, "tasks": [
    {"name": "which python runs modules", "ansible.builtin.setup": {"gather_subset": ["!all", "!min", "python"]}},
]}


class Node:
    def __init__(self, state, directory: Path):
        self.node = next(node for node in state["clusters"]["secondary"]["nodes"] if node["name"] == state["mirrormaker_node"])
        inventory = yaml.safe_load((Path(state["dir"]) / "inventory.yml").read_text())
        inventory["all"]["children"]["mirrormaker"]["hosts"][self.node["name"]]["ansible_python_interpreter"] = OLD_PYTHON
        self.inventory = directory / "inventory-python36.yml"
        self.inventory.write_text(yaml.safe_dump(inventory, sort_keys=False))
        self.directory = directory

    def ssh(self, command: str, check=True) -> subprocess.CompletedProcess:
        return subprocess.run(ssh_argv(self.node, command), capture_output=True, text=True, timeout=120, check=check)

    def run(self, plays: list, check=False, **extra):
        path = self.directory / f"play-{len(list(self.directory.glob('play-*.yml')))}.yml"
        path.write_text(yaml.safe_dump(plays, sort_keys=False))
        return run_playbook(path, inventory=self.inventory, extra_vars=extra, check=check, diff=True, timeout=600)


@pytest.fixture(scope="module")
def node(sandbox, tmp_path_factory):
    if not (OLD_PYTHON and NEW_PYTHON):
        pytest.skip(f"this machine has no pyenv CPython 3.6 and 3.8 under {PYENV} (the project's image has 3.6.15 and 3.8.18)")
    node = Node(sandbox, tmp_path_factory.mktemp("node-python"))
    node.ssh("sudo chmod 711 /root")
    try:
        assert node.ssh(f"{OLD_PYTHON} -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'").stdout.strip() == "3.6"
        yield node
    finally:
        node.ssh(f"sudo rm -f {IMAGE_PYTHON}; sudo chmod 700 /root", check=False)


def ran_with(result) -> str:
    return result.task("which python runs modules")["ansible_facts"]["ansible_python"]["executable"]


def test_a_module_fails_on_the_old_python_without_the_role(node):
    result = node.run([LATER])
    assert result.failed
    assert "future feature annotations" in result.stdout, result.stdout[-3000:]


def test_a_newer_python_the_image_has_is_found_and_used(node):
    node.ssh(f"sudo ln -sf {NEW_PYTHON} {IMAGE_PYTHON}")
    search = {"node_python_search": ["/usr/bin/python3.8", IMAGE_PYTHON]}
    result = node.run(ROLE_ONLY + [LATER], **search)
    assert not result.failed, result.stdout[-4000:]
    assert ran_with(result) == IMAGE_PYTHON
    version = result.task("which python runs modules")["ansible_facts"]["ansible_python"]["version"]
    assert (version["major"], version["minor"]) == (3, 8), version
    assert result.changed_count == 0
    # Check mode finds it the same way (the probe is read-only and runs in check mode), and a second run changes nothing.
    check = node.run(ROLE_ONLY + [LATER], check=True, **search)
    assert not check.failed and check.changed_count == 0 and ran_with(check) == IMAGE_PYTHON, check.stdout[-3000:]


def test_opt_out_leaves_the_inventory_interpreter(node):
    result = node.run(ROLE_ONLY + [LATER], node_python_manage=False)
    assert result.failed and "future feature annotations" in result.stdout, result.stdout[-3000:]


def apt_candidate_not_installed() -> str | None:
    """A Debian package apt knows (package lists of this machine, which the node's root is an overlay of) that is not installed."""
    for package in ("python3.11-examples", "idle-python3.11", "python3-dbg", "pypy3"):
        policy = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True, check=False).stdout
        if "Candidate:" in policy and "Candidate: (none)" not in policy and "Installed: (none)" in policy:
            return package
    return None


def test_check_mode_says_what_it_would_install_and_installs_nothing(node):
    package = apt_candidate_not_installed()
    if package is None:
        pytest.skip("apt knows none of the candidate packages here (no package lists)")
    result = node.run(ROLE_ONLY, check=True, node_python_search=[], node_python_package=package)
    assert not result.failed, result.stdout[-4000:]
    simulated = result.task(f"kafkaops.mirror.node_python : Show what apt-get would install, {package}")
    assert simulated["changed"] and f"Inst {package}" in simulated["stdout"]
    assert "cannot run there in check mode" in result.task("kafkaops.mirror.node_python : Say that modules cannot run on this node in check mode yet")["msg"]
    status = node.ssh(f"dpkg-query -W -f='${{Status}}' {package}", check=False).stdout
    assert "install ok installed" not in status


def test_no_package_to_install_fails_naming_what_to_set(node):
    """Debian 12 has no python3.8 (Ubuntu 18.04 does): the real run fails before anything changed, and says what to do."""
    result = node.run(ROLE_ONLY, node_python_search=[])
    assert result.failed
    message = result.task("kafkaops.mirror.node_python : Fail when apt-get could not install python3.8")["msg"]
    assert f"apt-get could not install python3.8 on {node.node['name']} (debian 12" in message
    assert "Set node_python_package" in message and "node_python_candidates" in message
    assert "python3.8" not in node.ssh("ls /usr/bin", check=False).stdout


# Ubuntu 18.04's package of the newest Python it has: /usr/bin/python3.8.
PACKAGE, PACKAGE_PYTHON = "python3.8", "/usr/bin/python3.8"
LAB_APT = "/var/lib/kafkaops-lab-apt"  # the node's own layer: a local apt repository, and what it replaced, kept to put back


def lab_repository(directory: Path) -> dict:
    """{file name: bytes} of a local apt repository holding one python3.8 .deb of this test's own, whose /usr/bin/python3.8
    is a link to this machine's real CPython 3.8.18: the stand-in for Ubuntu's package, which Debian 12 does not have (a
    sandbox quirk; the role installs the package by its name, as on Ubuntu)."""
    root, repository = directory / "python3.8-root", directory / "repository"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {PACKAGE}\nVersion: 3.8.18-0kafkaopslab1\nArchitecture: all\nMaintainer: kafkaops.mirror tests <tests@localhost>\n"
        "Description: lab stand-in for Ubuntu's python3.8, a link to a real CPython 3.8.18\n")
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "usr" / "bin" / "python3.8").symlink_to(NEW_PYTHON)
    repository.mkdir()
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(root), str(repository / "python3.8.deb")], capture_output=True,
                   check=True, timeout=60)
    packages = subprocess.run(["dpkg-scanpackages", ".", "/dev/null"], cwd=repository, capture_output=True, check=True, timeout=60).stdout
    return {"python3.8.deb": (repository / "python3.8.deb").read_bytes(), "Packages": packages}


def in_node(node: Node, command: str, data: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*as_root(node.node), "sh", "-c", command], input=data, capture_output=True, timeout=300, check=True)


@pytest.fixture
def apt_with_python38(node, tmp_path):
    """The node's apt knows only a local repository with the stand-in python3.8 (no network: its other sources are moved
    aside, in the node's own layer), and its package lists are updated, as an Ubuntu 18.04 node's lists know python3.8. Put
    back afterwards: the package removed, the sources and the lists restored (the worker's sandbox serves later tests)."""
    if not (shutil.which("dpkg-deb") and shutil.which("dpkg-scanpackages")) or "exec" not in node.node:
        pytest.skip("needs dpkg-deb and dpkg-scanpackages on this machine and a host node (ssh node mode)")
    in_node(node, f"mkdir -p {LAB_APT}/saved")
    for name, data in lab_repository(tmp_path).items():
        in_node(node, f"cat > {LAB_APT}/{name}", data)
    in_node(node, f"cp -a /var/lib/apt/lists {LAB_APT}/saved/lists && mv /etc/apt/sources.list.d {LAB_APT}/saved/ && "
                  f"{{ [ ! -e /etc/apt/sources.list ] || mv /etc/apt/sources.list {LAB_APT}/saved/; }} && mkdir /etc/apt/sources.list.d && "
                  f"echo 'deb [trusted=yes] file:{LAB_APT} ./' > /etc/apt/sources.list.d/kafkaops-lab.list && apt-get update -q")
    try:
        yield
    finally:
        in_node(node, f"dpkg -r {PACKAGE} >/dev/null 2>&1; rm -rf /etc/apt/sources.list.d && mv {LAB_APT}/saved/sources.list.d /etc/apt/ && "
                      f"{{ [ ! -e {LAB_APT}/saved/sources.list ] || mv {LAB_APT}/saved/sources.list /etc/apt/; }} && "
                      f"rm -rf /var/lib/apt/lists && mv {LAB_APT}/saved/lists /var/lib/apt/lists && rm -rf {LAB_APT}")


def test_the_distributions_python_is_installed_then_used(node, apt_with_python38):
    """The install path for real (issue 27 item 1): no Python 3.8+ on the node, so check mode says what apt-get would install
    and installs nothing; the real run installs python3.8 with apt-get, looks again and runs the later plays' modules on
    /usr/bin/python3.8; a second run finds it and changes nothing. Read back with dpkg on the node and setup's own report."""
    search = {"node_python_search": [PACKAGE_PYTHON]}  # as on Ubuntu 18.04, where /usr/bin/python3 is the inventory's 3.6
    check = node.run(ROLE_ONLY, check=True, **search)
    assert not check.failed, check.stdout[-4000:]
    assert f"Inst {PACKAGE}" in check.task(f"kafkaops.mirror.node_python : Show what apt-get would install, {PACKAGE}")["stdout"]
    assert in_node(node, f"dpkg-query -W -f='${{Status}}' {PACKAGE} 2>/dev/null || true").stdout.decode() != "install ok installed"

    first = node.run(ROLE_ONLY + [LATER], **search)
    assert not first.failed, first.stdout[-4000:]
    assert first.task(f"kafkaops.mirror.node_python : Install with apt-get {PACKAGE}")["changed"]
    assert ran_with(first) == PACKAGE_PYTHON
    installed = in_node(node, f"dpkg-query -W -f='${{Status}} ${{Version}}' {PACKAGE}; readlink {PACKAGE_PYTHON}").stdout.decode()
    assert installed == f"install ok installed 3.8.18-0kafkaopslab1{NEW_PYTHON}\n", installed

    again = node.run(ROLE_ONLY + [LATER], **search)
    assert not again.failed and again.changed_count == 0 and ran_with(again) == PACKAGE_PYTHON, again.stdout[-3000:]
