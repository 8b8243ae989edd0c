# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/mirror.yml with bad input and faults: it stops where the problem is, says what and where,
and changes nothing after that point (read back with independent clients and plain file reads)."""
from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path

import pytest
import yaml

from sandbox import api, nodes
from sandbox.seed import seed
from tests.support.ansible_play import run_playbook
from tests.support.checkout import REPO

pytestmark = pytest.mark.integration

MIRROR = REPO / "playbooks" / "mirror.yml"
START_FAILED_TASK = "kafkaops.mirror.mirrormaker2 : Fail with MirrorMaker's log and the likely cause"
SUBNET = 7  # a throwaway sandbox of its own: these tests break and reconfigure it
ROLE_DEFAULTS = yaml.safe_load((REPO / "roles" / "mirrormaker2" / "defaults" / "main.yml").read_text())


@pytest.fixture(scope="module")
def lab(tmp_path_factory, sandbox_net):
    directory = tmp_path_factory.mktemp("mirror-faults")
    state = api.up(directory, provider="noida", net=sandbox_net, subnet=SUBNET)
    try:
        seed(directory)
        yield state
    finally:
        api.down(directory)


def mirrormaker_node(state):
    return next(n for n in state["clusters"]["secondary"]["nodes"] if n["name"] == state["mirrormaker_node"])


def target_hosts_files(state):
    return {node["name"]: Path(node["hosts_file"]).read_bytes() for node in state["clusters"]["secondary"]["nodes"]}


def failed_task(play):
    failures = [t for t in play.tasks if t["status"] == "failed"]
    assert failures, f"nothing failed:\n{play.stdout[-3000:]}"
    return failures[-1]  # the one that stopped the play (earlier ones may have been rescued)


def test_missing_inventory_variable_fails_in_preflight_naming_it(lab, tmp_path):
    inventory = yaml.safe_load((Path(lab["dir"]) / "inventory.yml").read_text())
    del inventory["all"]["children"]["secondary_kafka"]["vars"]["kafka_bootstrap_servers"]
    broken = tmp_path / "inventory.yml"
    broken.write_text(yaml.safe_dump(inventory))
    before = target_hosts_files(lab)

    play = run_playbook(MIRROR, inventory=broken)

    assert play.failed
    failure = failed_task(play)
    assert failure["action"] == "ansible.builtin.assert" and "preflight" in play.stdout.split("fatal:")[0].rsplit("TASK [", 1)[1]
    assert "kafka_bootstrap_servers" in failure["result"]["msg"]
    assert target_hosts_files(lab) == before, "a stage after preflight ran"


def test_secondary_ambari_down_stops_at_ambari_kafka(lab, kafka_admin):
    secondary_ambari = lab["clusters"]["secondary"]["ambari"]["url"]
    request = urllib.request.Request(f"{secondary_ambari}/_sandbox/faults", data=json.dumps({"http_status": 503, "count": 1000}).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).close()
    try:
        play = run_playbook(MIRROR, inventory=Path(lab["dir"]) / "inventory.yml", extra_vars={"mirrormaker2_health_timeout": 30})
    finally:
        urllib.request.urlopen(urllib.request.Request(f"{secondary_ambari}/_sandbox/faults", method="DELETE"), timeout=10).close()

    assert play.failed
    failure = failed_task(play)
    # With nothing asked of the target, ambari_kafka changes no config there; its first call to Ambari is the restart plan
    # (which brokers Ambari reports stale), and that is where the play stops.
    assert failure["action"] == "kafkaops.mirror.ambari_restart", failure["task"]
    assert secondary_ambari in failure["result"]["msg"]
    # Nothing ran after the failure (no later stage: topics, MirrorMaker, validation). Not told by module or role name: the
    # preflight, which ran before, reads MirrorMaker's state with kafka_mirror_status and the mirrormaker2 role's tasks too.
    after = play.tasks[play.tasks.index(failure) + 1:]
    assert not [t["task"] for t in after if t["status"] != "failed"], [t["task"] for t in after]
    admin = kafka_admin(lab, "secondary")
    assert not [t for t in admin.list_topics() if t.startswith("primary.")], "topics were created on the target after the failure"
    node = mirrormaker_node(lab)
    assert not nodes.machine_path(node, ROLE_DEFAULTS["mirrormaker2_config_dir"]).exists(), "the mirrormaker2 stage wrote files after the failure"
    assert not nodes.machine_path(node, f"{ROLE_DEFAULTS['mirrormaker2_supervisor_conf_dir']}/kafka-mirrormaker2.conf").exists(), \
        "a MirrorMaker program was installed"


def test_mirrormaker_that_cannot_start_shows_its_log(lab):
    # On the MirrorMaker node (a host of its own), where its service account can read it.
    broken_home = "/opt/kafka-broken"
    # Its log, in the LOG_DIR the role gives the launcher: an error, then more lines than the role shows of the tail.
    script = ("#!/bin/sh\n"
              "echo '[2026-11-29 00:00:00,000] ERROR early failure for the test (x)' >> \"$LOG_DIR/mirrormaker.log\"\n"
              "i=0; while [ $i -lt 60 ]; do echo \"[2026-11-29 00:00:01,000] INFO filler $i (x)\" >> \"$LOG_DIR/mirrormaker.log\"; i=$((i+1)); done\n"
              "echo 'Error: Could not find or load main class org.apache.kafka.connect.mirror.MirrorMaker' >&2\nexit 1\n")
    made = subprocess.run([*nodes.as_root(mirrormaker_node(lab)), "sh", "-c", f"mkdir -p {broken_home}/bin {broken_home}/libs && "
                           f"printf %s \"$0\" > {broken_home}/bin/connect-mirror-maker.sh && chmod 0755 {broken_home}/bin/connect-mirror-maker.sh && "
                           f"touch {broken_home}/libs/kafka-clients-3.9.0.jar", script],  # the version the role detects
                          capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr

    play = run_playbook(MIRROR, inventory=Path(lab["dir"]) / "inventory.yml", tags="mirrormaker2",
                        extra_vars={"mirrormaker2_kafka_home": broken_home, "mirrormaker2_health_timeout": 20,
                                    "mirrormaker2_config_dir": "/etc/kafka-mirrormaker2-broken"})

    assert play.failed
    failure = failed_task(play)
    assert "Could not find or load main class" in json.dumps(failure["result"]), (failure["task"], failure["result"])
    # The play fails where MirrorMaker is started, with its log's tail and the likely cause and fix, not at a later wait.
    assert failure["task"] == START_FAILED_TASK, failure["task"]
    assert "Likely cause: the Kafka installation lacks MirrorMaker's classes" in failure["result"]["msg"], failure["result"]["msg"]
    assert "What to do: point mirrormaker2_kafka_home at a complete Kafka installation" in failure["result"]["msg"], failure["result"]["msg"]
    # The error above the tail is shown on its own.
    message = failure["result"]["msg"]
    warnings = message.split("Last warnings and errors in /etc/kafka-mirrormaker2-broken/logs/mirrormaker.log:\n")[1].split("\nLast lines of")[0]
    assert "ERROR early failure for the test" in warnings and "filler" not in warnings, message
    tail = message.split("Last lines of /etc/kafka-mirrormaker2-broken/logs/mirrormaker.log:\n")[1]
    assert "INFO filler 59" in tail and "early failure" not in tail.split("\nLast lines of")[0], message
