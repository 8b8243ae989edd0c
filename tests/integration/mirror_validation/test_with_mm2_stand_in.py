# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validator against a mirror made by the sandbox's MirrorMaker 2 stand-in, deployed with the mirrormaker2 role:
records, offset-sync anchors and checkpoints written by an independent implementation of MM2's formats."""
from __future__ import annotations

import shlex
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from sandbox import nodes
from tests.support import mirror_copy
from tests.support.ansible_play import run_playbook
from tests.support.validation_runs import topic_of

pytestmark = [
    pytest.mark.integration,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore:open_text is deprecated:DeprecationWarning"),
]
PROGRAM = "kafka-mirrormaker2"  # the program name the mirrormaker2 role installs


@pytest.fixture(scope="module")
def stand_in_mirror(sandbox, tmp_path_factory):
    """A topic on the primary, mirrored by the stand-in that the mirrormaker2 role deploys; the program is removed afterwards."""
    source = sandbox["clusters"]["primary"]["bootstrap_servers"]
    topic = "mvmm%s-orders" % uuid.uuid4().hex[:6]
    mirror_copy.ensure_topic(source, topic, 3)
    mirror_copy.produce(source, topic, mirror_copy.source_records(topic, 3, 200))
    playbook = tmp_path_factory.mktemp("mm2") / "deploy.yml"
    # mirror_host first, as playbooks/mirror.yml does: the role's modules need the Kafka clients on the MirrorMaker host.
    playbook.write_text(yaml.safe_dump([{"name": "deploy MirrorMaker 2", "hosts": "mirrormaker", "gather_facts": False,
                                         "roles": [{"role": "kafkaops.mirror.mirror_host"}, {"role": "kafkaops.mirror.mirrormaker2"}]}]))
    flow = {"source": "primary", "target": "secondary", "topics": [topic], "refresh_topics_interval_seconds": 2,
            "emit_checkpoints_interval_seconds": 2}
    inventory = Path(sandbox["dir"]) / "inventory.yml"
    mm_vars = yaml.safe_load(inventory.read_text())["all"]["children"]["mirrormaker"]["vars"]
    # On the MirrorMaker node (a host of its own in the sandbox's ssh node mode): commands run there as root.
    on_node = nodes.as_root([n for n in sandbox["clusters"]["secondary"]["nodes"] if n["name"] == sandbox["mirrormaker_node"]][0])
    supervisorctl = on_node + shlex.split(mm_vars["mirrormaker2_supervisorctl"])
    # Its own config dir on the node: the session sandbox's is left as the mirrormaker2 tests expect it (empty).
    deployed = run_playbook(playbook, inventory=inventory, timeout=600, extra_vars={
        "mirrormaker2_config_dir": f"/etc/kafka-mirrormaker2-{topic}", "mirrormaker2_flows": [flow],
        "mirrormaker2_max_lag": 0, "mirrormaker2_health_timeout": 120, "mirrormaker2_health_poll_interval": 2})
    try:
        assert not deployed.failed, deployed.stdout[-3000:]
        yield topic
    finally:
        subprocess.run(supervisorctl + ["stop", PROGRAM], capture_output=True, check=False)
        subprocess.run(on_node + ["rm", "-f", f"{mm_vars['mirrormaker2_supervisor_conf_dir']}/{PROGRAM}.conf"], capture_output=True, check=False)
        subprocess.run(supervisorctl + ["update"], capture_output=True, check=False)


def test_stand_in_mirror_passes_with_its_offset_syncs_as_anchors(stand_in_mirror, run_job):
    code, report = run_job(stand_in_mirror, "--catch-up-timeout", "60", "--catch-up-interval", "2")
    topic = topic_of(report, stand_in_mirror)
    assert code == 0, report["message"]
    assert [(p["source_count"], p["target_count"]) for p in topic["partitions"]] == [(200, 200)] * 3
    assert topic["totals"]["anchor_mismatches"] == 0 and sum(p["anchors_checked"] for p in topic["partitions"]) >= 3
    assert report["checks"]["offset_syncs"].startswith("checked")
