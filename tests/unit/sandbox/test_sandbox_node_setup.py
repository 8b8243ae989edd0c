# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node modes, the commands a host node needs, and the MirrorMaker node's Kafka home (pure file work, no namespaces)."""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from sandbox import kafka_dist, kafka_home, nodes, wheelhouse
from sandbox.providers import ApacheProvider, NoidaProvider
from tests.support.checkout import REPO


def test_without_root_the_mode_is_local_and_ssh_is_refused(monkeypatch):
    monkeypatch.setattr(nodes, "can_isolate", lambda: False)
    assert nodes.choose_mode(None) == "local"
    with pytest.raises(nodes.NodeSetupError, match="needs root.*--node-mode local"):
        nodes.choose_mode("ssh")


def test_as_root_the_mode_is_ssh_unless_local_is_asked_for(monkeypatch):
    monkeypatch.setattr(nodes, "can_isolate", lambda: True)
    assert nodes.choose_mode(None) == "ssh"
    assert nodes.choose_mode("local") == "local"
    with pytest.raises(nodes.NodeSetupError, match="unknown node mode 'docker'"):
        nodes.choose_mode("docker")


def test_a_missing_sshd_or_sudo_names_the_package_and_the_command(monkeypatch):
    real_which = nodes.shutil.which
    monkeypatch.setattr(nodes.shutil, "which", lambda name, path=None: None if name in ("sshd", "sudo", "visudo") else real_which(name, path=path))
    with pytest.raises(nodes.NodeSetupError) as failure:
        nodes.check_host_commands()
    message = str(failure.value)
    assert "sshd (package openssh-server)" in message and "sudo (package sudo)" in message
    assert "apt-get install -y openssh-server sudo" in message


def test_account_lines_read_the_node_s_files_and_fall_back_to_the_machine_s(tmp_path):
    etc = tmp_path / "upper" / "etc"
    etc.mkdir(parents=True)
    (etc / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\nkafka:x:1002:1002::/home/kafka:/bin/bash\n")
    (etc / "group").write_text("hadoop:x:1002:\n")
    lines = nodes.account_lines({"upper": str(tmp_path / "upper")}, "kafka", "hadoop")
    assert lines["passwd"] == "kafka:x:1002:1002::/home/kafka:/bin/bash" and lines["group"] == "hadoop:x:1002:"
    if os.access("/etc/shadow", os.R_OK):  # not in the upper dir: the node sees the machine's, which has no kafka
        assert lines["shadow"] is None


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_node_kafka_home_claims_its_version_and_runs_the_stand_in_on_system_python(tmp_path):
    upper = tmp_path / "upper"
    assert kafka_home.write_node_kafka_home(upper, NoidaProvider(), tmp_path, REPO, "3.9") is None
    home = upper / kafka_home.KAFKA_HOME_ON_NODE.lstrip("/")
    assert [p.name for p in (home / "libs").iterdir()] == ["kafka-clients-3.9.jar"]
    script = (home / "bin" / "connect-mirror-maker.sh").read_text()
    assert "exec /usr/bin/python3 -m sandbox.mm2" in script and f"PYTHONPATH={kafka_home.KAFKA_HOME_ON_NODE}/sandbox-stand-in" in script
    vendor = home / "sandbox-stand-in"
    for package in ("sandbox/mm2/__main__.py", "kafka/__init__.py", "ansible_collections/kafkaops/mirror/plugins/module_utils/_mm2/records.py"):
        assert (vendor / package).is_file(), package
    # every directory up from the upper dir is 0755 and every file 0644: the service account reads them all
    assert {mode(p) for p in [home, *home.rglob("*")] if p.is_dir()} == {0o755}
    assert {mode(p) for p in vendor.rglob("*") if p.is_file()} == {0o644}
    assert mode(upper / "usr") == 0o755
    assert not list(vendor.rglob("__pycache__"))

    kafka_home.write_node_kafka_home(upper, NoidaProvider(), tmp_path, REPO, "2.4.1")
    assert [p.name for p in (home / "libs").iterdir()] == ["kafka-clients-2.4.1.jar"]


@pytest.mark.skipif(not os.access(kafka_home.NODE_PYTHON, os.X_OK), reason=f"no {kafka_home.NODE_PYTHON} (the nodes' system Python)")
def test_the_stand_in_copy_imports_on_the_system_python_alone(tmp_path):
    upper = tmp_path / "upper"
    kafka_home.write_node_kafka_home(upper, NoidaProvider(), tmp_path, REPO, "2.4.1")
    vendor = upper / kafka_home.KAFKA_HOME_ON_NODE.lstrip("/") / "sandbox-stand-in"
    probe = "import sandbox.mm2.runner, sandbox.mm2.settings, kafka; print(sandbox.mm2.runner.__file__, kafka.__file__)"
    # -I -S: no site-packages, no environment, no checkout: only the copy and the standard library
    run = subprocess.run([kafka_home.NODE_PYTHON, "-I", "-S", "-c", f"import sys; sys.path[:0] = [{str(vendor)!r}]; {probe}"],
                         capture_output=True, text=True, check=False, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert all(path.startswith(str(vendor)) for path in run.stdout.split())


def test_apache_kafka_home_is_an_empty_mount_point_for_the_real_distribution(tmp_path, monkeypatch):
    real = tmp_path / "kafka"
    monkeypatch.setattr(kafka_dist, "ensure_home", lambda version: real)
    (real / "bin").mkdir(parents=True)
    for name in ("kafka-server-start.sh", "kafka-storage.sh", "connect-mirror-maker.sh"):
        (real / "bin" / name).write_text("#!/bin/sh\n")
    upper = tmp_path / "upper"
    kafka_home.write_node_kafka_home(upper, NoidaProvider(), tmp_path, REPO, "3.9")
    bind = kafka_home.write_node_kafka_home(upper, ApacheProvider(), tmp_path, REPO, "3.2.0")
    assert bind == {"source": str(real.resolve()), "target": kafka_home.KAFKA_HOME_ON_NODE}
    assert not list((upper / kafka_home.KAFKA_HOME_ON_NODE.lstrip("/")).iterdir())


def test_a_built_wheelhouse_is_reused_without_pip(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    repo = tmp_path / "repo"
    (repo / wheelhouse.PINS).parent.mkdir(parents=True)
    (repo / wheelhouse.PINS).write_text("kafka-python==3.0.12\n")
    built = []
    monkeypatch.setattr(wheelhouse.subprocess, "run", lambda command, **_: built.append(command) or subprocess.CompletedProcess(command, 0, "", ""))
    first = wheelhouse.ensure(repo)
    assert wheelhouse.ensure(repo) == first and len(built) == 1 and str(repo / wheelhouse.PINS) in built[0]
    (repo / wheelhouse.PINS).write_text("kafka-python==3.0.13\n")
    assert wheelhouse.ensure(repo) != first and len(built) == 2, "other pins, another wheelhouse"
    assert wheelhouse.pip_environment(first) == {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(first)}


def test_a_failed_wheel_build_says_what_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / wheelhouse.PINS).parent.mkdir(parents=True)
    (tmp_path / wheelhouse.PINS).write_text("kafka-python==3.0.12\n")
    monkeypatch.setattr(wheelhouse.subprocess, "run", lambda command, **_: subprocess.CompletedProcess(command, 1, "", "No matching distribution"))
    with pytest.raises(wheelhouse.WheelhouseError, match="pip wheel.*no package source for the mirror_host role: No matching distribution"):
        wheelhouse.ensure(tmp_path)
