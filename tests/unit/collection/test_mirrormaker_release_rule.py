# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one rule for the Kafka release that runs MirrorMaker 2 (roles/mirrormaker2/tasks/version.yml), as the roles that
include it use it: the release set (the including role's own variable, passed as mirrormaker2_release_setting, else
mirrormaker2_kafka_version), else the release read from the Kafka home's jars, read once per run and Kafka home.

One local play includes the file five times; between the includes the jars are changed on disk, so a second read
would show.
"""
from __future__ import annotations

import yaml

from tests.support.ansible_play import run_playbook

FIND = "kafkaops.mirror.mirrormaker2 : Find the Kafka jars of "


def include(home, name, **setting):
    return [{"name": "Include version.yml (%s)" % name, "ansible.builtin.include_role": {"name": "kafkaops.mirror.mirrormaker2", "tasks_from": "version.yml"},
             "vars": dict(mirrormaker2_kafka_home=str(home), **setting)},
            {"name": "Keep " + name, "ansible.builtin.set_fact": {name: "{{ mirrormaker2_kafka_version_resolved }}"}}]


def test_set_else_detected_once_per_kafka_home(tmp_path):
    first, second = tmp_path / "kafka-2.4.1", tmp_path / "kafka-3.9"
    for home, release in ((first, "2.4.1"), (second, "3.9.0")):
        (home / "libs").mkdir(parents=True)
        (home / "libs" / ("kafka-clients-%s.jar" % release)).write_bytes(b"")
    libs = first / "libs"
    swap = {"name": "Put another release's jar in the first home",
            "ansible.builtin.command": f"mv {libs}/kafka-clients-2.4.1.jar {libs}/kafka-clients-3.3.1.jar"}
    tasks = (include(first, "detected") + include(first, "set_by_the_caller", mirrormaker2_release_setting="3.3")
             + [swap] + include(first, "detected_again") + include(second, "other_home")
             + include(first, "set_for_mirrormaker2", mirrormaker2_kafka_version="2.8.2"))
    playbook = tmp_path / "release.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "connection": "local", "gather_facts": False, "tasks": tasks}]))
    play = run_playbook(playbook)
    assert not play.failed, play.stdout[-3000:]
    facts = {}
    for entry in play.tasks:
        if entry["task"].startswith("Keep "):
            facts.update(entry["result"]["ansible_facts"])
    assert facts == {"detected": "2.4.1", "set_by_the_caller": "3.3", "detected_again": "2.4.1", "other_home": "3.9.0",
                     "set_for_mirrormaker2": "2.8.2"}
    reads = [entry["task"][len(FIND):] for entry in play.tasks if entry["task"].startswith(FIND) and entry["status"] == "ok"]
    assert reads == [str(first), str(second)]  # the first home once: its changed jars were not read again
