# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirror_host role on the sandbox's MirrorMaker host (reached as sshuser with sudo): check mode installs nothing,
the first run makes a virtualenv with exactly the pinned packages, the later plays run with its Python, a second run
changes nothing, bad input fails before any change, and a Java too old would be replaced through the package manager.

Read back independently, over SSH as the login user: the virtualenv's own Python reports the installed versions; dpkg
says what is installed. The tests run in file order against one virtualenv (module fixture) at a path of the node's own.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from sandbox.nodes import ssh_argv
from tests.support.ansible_play import run_playbook, run_tasks
from tests.support.checkout import REPO

pytestmark = pytest.mark.integration

PINS_FILE = REPO / "roles" / "mirror_host" / "files" / "requirements.txt"
# The sandbox's nodes run Python 3.11: the role picks requirements.txt. confluent-kafka is optional (a pip call of its own).
OPTIONAL = ("confluent-kafka",)
PIP_TASK = "kafkaops.mirror.mirror_host : Install " + ", ".join(
    line.split("#")[0].strip() for line in PINS_FILE.read_text().splitlines()
    if line.split("#")[0].strip() and line.split("==")[0].strip() not in OPTIONAL)
OPTIONAL_TASK = "kafkaops.mirror.mirror_host : Install the optional " + ", ".join(
    line.split("#")[0].strip() for line in PINS_FILE.read_text().splitlines() if line.split("==")[0].strip() in OPTIONAL)
WARN_TASK = "kafkaops.mirror.mirror_host : Warn that an optional package did not install"
# What the later plays see: the play after the role records the host's interpreter and the role's facts.
REPORT_TASK = "what the later plays see"
# On the node, beside (not at) the default path that playbooks on the same sandbox use.
VENV_ROOT = "/opt/kafkaops-mirror-test"


def pins() -> dict:
    """{distribution name, lower case: version} from the role's pin file, parsed here independently of the role."""
    found = {}
    for line in PINS_FILE.read_text().splitlines():
        requirement = line.split("#")[0].strip()
        if requirement:
            name, version = requirement.split("==")
            found[name.lower()] = version
    return found


class Host:
    def __init__(self, state):
        self.inventory = Path(state["dir"]) / "inventory.yml"
        self.node = next(node for node in state["clusters"]["secondary"]["nodes"] if node["name"] == state["mirrormaker_node"])
        # pip on the node uses the sandbox's wheelhouse (the inventory's mirror_host_pip_environment): nodes reach no index.
        self.venv = f"{VENV_ROOT}/venv"

    def ssh(self, command: str, check=True) -> subprocess.CompletedProcess:
        return subprocess.run(ssh_argv(self.node, command), capture_output=True, text=True, timeout=120, check=check)

    def exists(self, path: str) -> bool:
        return self.ssh(f"test -e {shlex.quote(path)}", check=False).returncode == 0

    def playbook(self, directory: Path) -> Path:
        play = [
            {"name": "Prepare the MirrorMaker host", "hosts": "mirrormaker", "gather_facts": False,
             "roles": [{"role": "kafkaops.mirror.mirror_host"}]},
            {"name": "A later play", "hosts": "mirrormaker", "gather_facts": False, "tasks": [
                {"name": REPORT_TASK, "ansible.builtin.debug": {"msg": {
                    "interpreter": "{{ ansible_python_interpreter | default('') }}",
                    "venv_python": "{{ mirror_host_venv_python | default('') }}",
                    "java_home": "{{ mirror_host_java_home | default('') }}"}}},
            ]},
        ]
        path = directory / "mirror_host.yml"
        path.write_text(json.dumps(play))
        return path

    def run(self, directory: Path, check=False, **extra):
        extra.setdefault("mirror_host_venv", self.venv)
        started = time.monotonic()
        result = run_playbook(self.playbook(directory), inventory=self.inventory, extra_vars=extra, check=check, diff=True, timeout=900)
        result.seconds = time.monotonic() - started
        return result

    def installed(self) -> dict:
        """{name: version} as the virtualenv's own Python reports them to the login user."""
        script = ("import json, importlib.metadata as m; "
                  "print(json.dumps({n: m.version(n) for n in ('kafka-python', 'confluent-kafka', 'pyspark')}))")
        return json.loads(self.ssh(f"{self.venv}/bin/python -c {shlex.quote(script)}").stdout)


@pytest.fixture(scope="module")
def host(sandbox):
    host = Host(sandbox)
    yield host
    host.ssh(f"sudo rm -rf {VENV_ROOT}", check=False)


def report(result) -> dict:
    return result.task(REPORT_TASK)["msg"]


def test_bad_python_fails_before_any_change(host, tmp_path):
    result = host.run(tmp_path, mirror_host_python="/nonexistent/python3")
    assert result.failed
    assert "Cannot run /nonexistent/python3" in result.stdout and "Set mirror_host_python" in result.stdout, result.stdout[-3000:]
    assert result.changed_count == 0
    assert not host.exists(host.venv)


def test_check_mode_installs_nothing_and_keeps_the_interpreter(host, tmp_path):
    result = host.run(tmp_path, check=True)
    assert not result.failed, result.stdout[-4000:]
    assert result.task(PIP_TASK)["changed"], "check mode must report the virtualenv to be made"
    assert not host.exists(host.venv)
    seen = report(result)
    assert seen["venv_python"] == "" and seen["interpreter"] != f"{host.venv}/bin/python"


def test_first_run_installs_the_pins_and_switches_the_interpreter(host, tmp_path, record_property):
    result = host.run(tmp_path)
    assert not result.failed, result.stdout[-4000:]
    assert result.task(PIP_TASK)["changed"]
    assert host.installed() == pins()
    python = f"{host.venv}/bin/python"
    seen = report(result)
    assert seen["interpreter"] == python and seen["venv_python"] == python
    settings = host.ssh(f"{shlex.quote(seen['java_home'])}/bin/java -XshowSettings:properties -version 2>&1").stdout
    assert int(next(line.split("=")[1] for line in settings.splitlines() if "java.specification.version" in line).strip()) >= 17
    record_property("mirror_host_first_run_seconds", round(result.seconds, 1))
    print(f"\nmirror_host first run: {result.seconds:.1f} s")


def test_second_run_changes_nothing(host, tmp_path, record_property):
    before = host.installed()
    result = host.run(tmp_path)
    assert not result.failed, result.stdout[-4000:]
    assert result.changed_count == 0, [t["task"] for t in result.tasks if t["result"].get("changed")]
    assert host.installed() == before
    check = host.run(tmp_path, check=True)
    assert not check.failed and check.changed_count == 0, check.stdout[-3000:]
    assert report(check)["venv_python"] == f"{host.venv}/bin/python"
    record_property("mirror_host_second_run_seconds", round(result.seconds, 1))
    print(f"\nmirror_host second run: {result.seconds:.1f} s")


def test_a_pin_the_virtualenv_lost_is_installed_again(host, tmp_path):
    """The role asks pip only for pins the virtualenv does not hold: one removed by hand must still come back."""
    host.ssh(f"sudo {host.venv}/bin/python -m pip uninstall -q -y kafka-python")
    assert "kafka-python" not in host.ssh(f"{host.venv}/bin/python -m pip list --format=freeze").stdout.lower()
    check = host.run(tmp_path, check=True)
    assert not check.failed and check.task(PIP_TASK)["changed"], check.stdout[-3000:]
    assert "kafka-python" not in host.ssh(f"{host.venv}/bin/python -m pip list --format=freeze").stdout.lower()
    result = host.run(tmp_path)
    assert not result.failed and result.task(PIP_TASK)["changed"], result.stdout[-3000:]
    assert host.installed() == pins()


def test_too_old_java_would_be_replaced_in_check_mode(host, tmp_path):
    package = "default-jre-headless"  # a real Debian package that the machine does not have installed
    policy = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True, check=False).stdout
    if "Candidate:" not in policy or "Candidate: (none)" in policy:
        pytest.skip(f"apt knows no {package} here (no package lists)")
    if "Installed: (none)" not in policy:
        pytest.skip(f"{package} is installed on this machine")
    result = host.run(tmp_path, check=True, mirror_host_java_min_version=99, mirror_host_java_package=package)
    assert not result.failed, result.stdout[-4000:]
    assert result.task(f"kafkaops.mirror.node_python : Show what apt-get would install, {package}")["changed"]
    installed = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False).stdout
    assert "install ok installed" not in installed


def test_a_virtualenv_of_another_python_is_refused(host, tmp_path):
    # A directory that looks like a virtualenv of Python 3.99: the role must name it and leave it alone.
    other = f"{VENV_ROOT}/other-venv"
    fake = "#!/bin/sh\necho 3.99\n"
    host.ssh(f"sudo mkdir -p {other}/bin && printf {shlex.quote(fake)} | sudo tee {other}/bin/python >/dev/null && sudo chmod 755 {other}/bin/python")
    result = host.run(tmp_path, mirror_host_venv=other)
    assert result.failed
    assert f"{other} on " in result.stdout and "runs Python 3.99" in result.stdout, result.stdout[-3000:]
    assert "remove it, or set mirror_host_venv" in result.stdout
    assert result.changed_count == 0
    assert host.ssh(f"ls -A {other}; cat {other}/bin/python").stdout == "bin\n" + fake


def test_a_kafkaops_module_runs_with_the_virtualenv(host):
    """A later task's kafkaops.mirror module imports kafka-python, which on a fresh host only the virtualenv has."""
    play = run_tasks([
        {"name": "prepare", "ansible.builtin.include_role": {"name": "kafkaops.mirror.mirror_host"}},
        {"name": "which python", "ansible.builtin.command": {"argv": ["{{ ansible_python_interpreter }}", "-c", "import sys; print(sys.prefix)"]},
         "changed_when": False},
        {"name": "read the target cluster", "kafkaops.mirror.kafka_cluster_info": {
            "bootstrap_servers": "{{ hostvars[groups['secondary_kafka'][0]]['kafka_bootstrap_servers'] }}"}},
    ], hosts="mirrormaker", inventory=host.inventory, extra_vars={"mirror_host_venv": host.venv})
    assert not play.failed, play.stdout[-3000:]
    assert play.task("which python")["stdout"] == host.venv
    assert play.task("read the target cluster")["broker_count"] == 1


def test_an_optional_package_that_does_not_install_leaves_a_working_virtualenv(host, tmp_path):
    """confluent-kafka without a wheel for the host (here: a wheelhouse without it, as Ubuntu 18.04's glibc has none of
    2.16.1) is a warning: the required pins are installed, the play goes on, and a second run changes nothing."""
    wheels, venv = f"{VENV_ROOT}/wheels-without-confluent", f"{VENV_ROOT}/venv-without-confluent"
    source = wheelhouse(host.inventory)
    # As root: the wheelhouse is under the machine's root home, which only root can list.
    host.ssh("sudo sh -c " + shlex.quote(f"mkdir -p {wheels} && cp {shlex.quote(source)}/*.whl {wheels}/ && rm -f {wheels}/confluent_kafka-*"))
    assert "confluent_kafka" not in host.ssh(f"sudo ls {wheels}").stdout
    environment = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": wheels}
    first = host.run(tmp_path, mirror_host_venv=venv, mirror_host_pip_environment=environment)
    assert not first.failed, first.stdout[-4000:]
    assert first.task(PIP_TASK)["changed"]
    warning = first.task(WARN_TASK)["msg"]
    assert "confluent-kafka==" in warning and "did not install" in warning and "reads with kafka-python" in warning, warning
    check = f"{venv}/bin/python -c 'import kafka, pyspark; import confluent_kafka'"
    probe = host.ssh(check, check=False)
    assert probe.returncode != 0 and "No module named 'confluent_kafka'" in probe.stderr, probe.stderr
    assert host.ssh(f"{venv}/bin/python -c 'import kafka, pyspark'", check=False).returncode == 0
    again = host.run(tmp_path, mirror_host_venv=venv, mirror_host_pip_environment=environment)
    assert not again.failed and again.changed_count == 0, [t["task"] for t in again.tasks if t["result"].get("changed")]
    assert "did not install" in again.task(WARN_TASK)["msg"]


def wheelhouse(inventory: Path) -> str:
    """The sandbox's wheelhouse, as its inventory hands it to the role."""
    groups = yaml.safe_load(inventory.read_text())["all"]["children"]
    return groups["mirrormaker"]["vars"]["mirror_host_pip_environment"]["PIP_FIND_LINKS"]
