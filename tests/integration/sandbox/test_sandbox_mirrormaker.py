# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MirrorMaker node's connect-mirror-maker.sh under the node's own supervisord, installed the way the
mirrormaker2 role does it (a program in /etc/supervisor/conf.d running as `kafka`, then `supervisorctl update`):
the stand-in runs as the service account inside the node, under supervisord's own PID, and `down` stops it."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sandbox import api, processes, seed
from sandbox.node_init import SUPERVISOR_CONF_D
from sandbox.nodes import account_lines
from tests.support.node_mirrormaker import CONFIG_DIR, PROGRAM, SUPERVISORCTL, as_root_on, mirrored_count, properties

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="host nodes (ssh node mode) need root")]


def test_stand_in_runs_as_kafka_under_the_node_s_supervisord(fresh_sandbox):
    state = fresh_sandbox("noida")
    seed.seed(state["dir"])
    node = next(n for n in state["clusters"]["secondary"]["nodes"] if n["name"] == state["mirrormaker_node"])
    program = "\n".join([
        f"[program:{PROGRAM}]",
        f"command={state['kafka_home']}/bin/connect-mirror-maker.sh {CONFIG_DIR}/connect-mirror-maker.properties",
        f"directory={CONFIG_DIR}",
        "user=kafka",
        "autorestart=false",
        "redirect_stderr=true",
        f"stdout_logfile={CONFIG_DIR}/{PROGRAM}.log",
        "",
    ])
    installed = as_root_on(node, f"install -d -o kafka -g hadoop -m 0750 {CONFIG_DIR} && cat > {CONFIG_DIR}/connect-mirror-maker.properties "
                                 f"<<'EOF'\n{properties(state)}EOF\nchown kafka:hadoop {CONFIG_DIR}/connect-mirror-maker.properties && "
                                 f"chmod 0600 {CONFIG_DIR}/connect-mirror-maker.properties && cat > {SUPERVISOR_CONF_D}/{PROGRAM}.conf "
                                 f"<<'EOF'\n{program}EOF\n{SUPERVISORCTL} update")
    assert installed.returncode == 0 and "ERROR" not in installed.stdout, installed.stdout + installed.stderr

    orders = next(t for t in seed.TOPICS if t.name == "orders")
    deadline = time.monotonic() + 60
    while mirrored_count(state, "primary.orders", orders.partitions) < orders.records and time.monotonic() < deadline:
        time.sleep(0.5)
    log = as_root_on(node, f"tail -c 3000 {CONFIG_DIR}/{PROGRAM}.log").stdout
    assert mirrored_count(state, "primary.orders", orders.partitions) == orders.records, log

    status = as_root_on(node, f"{SUPERVISORCTL} pid {PROGRAM}")
    pid = int(status.stdout.strip())
    assert b"sandbox.mm2" in Path(f"/proc/{pid}/cmdline").read_bytes(), "supervisord's PID must be the stand-in itself (exec)"
    uid = next(line.split()[1] for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("Uid:"))
    assert uid == account_lines(node, "kafka", "hadoop")["passwd"].split(":")[2], "the stand-in runs as the service account"
    assert os.readlink(f"/proc/{pid}/ns/mnt") == node["mount_namespace"], "the stand-in must run inside the node"

    # orders was copied within offset.flush.interval.ms (60 s): only the clean stop at `down` commits its source offsets.
    api.down(state["dir"])
    assert not processes.alive(pid)
    log_lines = stand_in_log_lines(node)
    assert any("stopped (sandbox.mm2)" in line for line in log_lines[-20:]), "\n".join(log_lines[-20:])

    # Up again in the same directory: the node's supervisord starts the stand-in, which resumes where it committed.
    api.up(state["dir"], provider="noida", net=state["net"], subnet=state["subnet"])
    deadline = time.monotonic() + 60
    while sum("started herders" in line for line in stand_in_log_lines(node)) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(5)  # a stand-in that lost its commit copies everything again within a poll or two
    assert mirrored_count(state, "primary.orders", orders.partitions) == orders.records, "\n".join(stand_in_log_lines(node)[-30:])


def stand_in_log_lines(node: dict) -> list:
    """The stand-in's log, read from the node's upper dir (the node's own files, whether it runs or not)."""
    log = Path(node["upper"]) / CONFIG_DIR.lstrip("/") / f"{PROGRAM}.log"
    return log.read_text(errors="replace").splitlines() if log.exists() else []
