# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secure clusters for real (issue 28) on the single-broker real-Kafka lab (tests/integration/conftest.py sandbox_apache_single,
started secure: sandbox/lab_security.py's SCRAM-SHA-512, mTLS and SASL_SSL listeners and an ACL authorizer next to PLAINTEXT;
primary 2.4.1, secondary 3.2.0, MirrorMaker 2 of 3.2.0 on the node's Java 8: Maven Central has no connect-mirror 2.4.1).

MirrorMaker's principal is User:mirrormaker, with only the ACLs kafka_mirror_acls grants it; every read-back is an
independent kafka-python client authenticating as the lab's admin (tests/support/secure_lab.py).

1. kafka_mirror_acls: check mode changes nothing and shows the diff, the first run creates, the second changes nothing, bad
   input fails before anything changes; read back by the admin.
2. Refusals that change nothing: a wrong SCRAM password and a client certificate from a CA the brokers do not trust (one run,
   one cluster each), then a missing ACL, stop mirror.yml in its preflight, naming the cluster, the principal and what was
   refused; MirrorMaker's configuration on its node is as it was and the target holds no new topic.
3. The flow at -vvv: source over SCRAM (SASL_PLAINTEXT), target over mTLS (SSL, client certificate): mirror.yml with the
   validation job, read back; every output of the run and every file it wrote on the MirrorMaker node is searched for each
   secret, and a file that holds one is 0600 or 0640.
4. failover.yml, preview (check mode) then for real, over SASL_SSL on both clusters: the group's offsets on the target, read back.
"""
from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from tests.support import secure_lab
from tests.support.ansible_play import run_module
from tests.support.checkout import REPO
from tests.support.real_lab import RealLab, mirror_plan
from tests.support.secure_lab import HOST_PYTHON, PREFLIGHT_GATE, VALIDATION_REPORT, failed_message, mirrormaker_files

pytestmark = [pytest.mark.integration, pytest.mark.spark,
              pytest.mark.skipif(os.geteuid() != 0, reason="the lab's nodes are SSH hosts (root)")]

MIRROR, FAILOVER = REPO / "playbooks" / "mirror.yml", REPO / "playbooks" / "failover.yml"
PREFIX, ORDERS, PARTITIONS, PER_PARTITION = "sx", "sx-orders", 2, 150
REMOTE = f"primary.{ORDERS}"
GROUP, CONSUMED = "sx-app", {0: 60, 1: PER_PARTITION}
MIRRORMAKER = "User:mirrormaker"
PLAN = mirror_plan(PREFIX, health_timeout=150)
FLOW_ACLS = {"principal": MIRRORMAKER, "source_alias": "primary", "target_alias": "secondary", "topics": [f"{PREFIX}-.*"],
             "groups": [f"{PREFIX}-.*"]}
APPLY_TASK = "kafkaops.mirror.failover : Translate the groups' offsets and commit them on the target"


@pytest.fixture(scope="module")
def lab(sandbox_apache_single, mirror_host_ready, source_names_synced):
    lab = RealLab(sandbox_apache_single, PLAN)
    mirror_host_ready(sandbox_apache_single)
    source_names_synced(sandbox_apache_single)  # the MirrorMaker node resolves the primary's FQDNs (TLS checks them)
    secure_lab.admin_client(lab, "primary", "create", ORDERS, PARTITIONS, 1)
    secure_lab.admin_client(lab, "primary", "keyed", ORDERS, PARTITIONS, PER_PARTITION)
    for partition, offset in CONSUMED.items():
        secure_lab.admin_client(lab, "primary", "commit", GROUP, ORDERS, partition, offset)
    secure_lab.deliver_client_files(lab, ("mirrormaker", "intruder"))
    yield lab
    lab.remove_mirrormaker()  # the lab's next file finds no MirrorMaker of this one's (RealLab.remove_mirrormaker)


def acls_task(lab: RealLab, alias: str, side: str, check: bool = False, **changes) -> dict:
    """kafka_mirror_acls on the MirrorMaker host (its virtualenv), as the lab's admin over SCRAM."""
    admin = secure_lab.connection(lab.state, alias, "SCRAM", lab.state["security"]["admin"])
    return run_module("kafka_mirror_acls", {**admin, **FLOW_ACLS, "cluster": side, **changes}, check=check, diff=True, hosts="mirrormaker",
                      inventory=lab.inventory, extra_vars={"ansible_python_interpreter": HOST_PYTHON})


def mirrormaker_acls(lab: RealLab, alias: str) -> list:
    return [acl[1:5] for acl in secure_lab.admin_client(lab, alias, "acls")["acls"] if acl[0] == MIRRORMAKER]


def flow_inventory(lab: RealLab, tmp_path: Path, source: tuple, target: tuple, name: str = "inventory.yml") -> Path:
    """The lab's inventory with the primary reached as (listener, user[, password]) `source` and the secondary as `target`."""
    return secure_lab.secure_inventory(lab.state, tmp_path / name, {
        "primary": secure_lab.connection(lab.state, "primary", *source), "secondary": secure_lab.connection(lab.state, "secondary", *target)})


def test_acls_module_plans_creates_and_refuses_bad_input(lab):
    assert mirrormaker_acls(lab, "primary") == mirrormaker_acls(lab, "secondary") == []
    preview = acls_task(lab, "secondary", "target", check=True)
    assert preview["changed"] and preview["added"], preview
    assert "ALLOW WRITE on topic prefixed primary.sx- from *" in preview["diff"]["after"]
    assert "ALLOW WRITE" not in preview["diff"]["before"]
    assert mirrormaker_acls(lab, "secondary") == [], "check mode created ACLs"

    bad = acls_task(lab, "secondary", "target", topics=["sx-[0-9]+"])
    assert bad.get("failed") and "sx-[0-9]+" in bad["msg"] and "cannot be written as an ACL" in bad["msg"], bad
    assert mirrormaker_acls(lab, "secondary") == []

    for alias, side in (("primary", "source"), ("secondary", "target")):
        first = acls_task(lab, alias, side)
        assert first["changed"] and len(first["added"]) == len(first["acls"]), first
        held = mirrormaker_acls(lab, alias)
        assert len(held) == len(first["acls"])
        assert ["TOPIC", "PREFIXED", "sx-" if side == "source" else "primary.sx-", "READ"] in held
        again = acls_task(lab, alias, side)
        assert not again["changed"] and again["added"] == [], again
    assert ["CLUSTER", "LITERAL", "kafka-cluster", "IDEMPOTENT_WRITE"] in mirrormaker_acls(lab, "primary")  # 2.4.1: before KIP-679


def test_refusals_stop_the_flow_before_anything_changes(lab, tmp_path):
    configured = mirrormaker_files(lab)
    topics_before = set(secure_lab.admin_client(lab, "secondary", "topics")["topics"])
    # Both logins refused in one run: the preflight reports every cluster before it fails.
    cases = [("wrong SCRAM password on the primary, untrusted client certificate on the secondary",
              ("SCRAM", "mirrormaker", "not-the-password"), ("MTLS", "intruder"),
              ["cluster primary", "SASL user 'mirrormaker'", "SaslAuthenticationFailedError",
               "cluster secondary", "intruder.pem", "certificate"])]
    deleted = secure_lab.admin_client(lab, "primary", "acl-delete", MIRRORMAKER, "TOPIC", "PREFIXED", "sx-", "READ")
    assert deleted == {"deleted": 1}
    cases.append(("missing ACL", ("SCRAM", "mirrormaker"), ("MTLS", "mirrormaker"),
                  ["cluster primary", "SASL user 'mirrormaker'", "may not READ on topic sx-orders", "ALLOW READ on topic prefixed sx-"]))
    try:
        for index, (what, source, target, named) in enumerate(cases):
            lab.inventory = flow_inventory(lab, tmp_path, source, target, f"refused-{index}.yml")
            play = lab.play(MIRROR)
            assert play.failed, what
            message = failed_message(play)
            assert [task["task"] for task in play.tasks if task["status"] == "failed"] == [PREFLIGHT_GATE], (what, message)
            for text in named:
                assert text in message, (what, text, message)
            assert mirrormaker_files(lab) == configured, f"{what}: MirrorMaker's configuration changed"
            assert set(secure_lab.admin_client(lab, "secondary", "topics")["topics"]) == topics_before, what
    finally:
        restored = acls_task(lab, "primary", "source")
        assert restored["added"] == ["ALLOW READ on topic prefixed sx- from *"], restored


def test_flow_over_scram_and_mtls_keeps_every_secret_out(lab, tmp_path):
    lab.inventory = flow_inventory(lab, tmp_path, ("SCRAM", "mirrormaker"), ("MTLS", "mirrormaker"))
    started = time.time()
    play = lab.play(MIRROR, verbosity=3)
    assert not play.failed, failed_message(play)
    report = play.task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    assert report["passed"], report
    keys = secure_lab.admin_client(lab, "secondary", "keys", REMOTE)["keys"]
    for partition in range(PARTITIONS):
        assert sorted(keys[str(partition)]) == sorted(f"p{partition}-{i}" for i in range(PER_PARTITION)), partition

    secrets = secure_lab.secrets_of(lab.state)
    outputs = {"stdout": play.stdout, "stderr": play.stderr, "task results": repr(play.tasks)}
    leaks = [(where, secret[:4]) for where, text in outputs.items() for secret in secrets if secret in text]
    holding, written = [], 0
    for path in lab.mirrormaker_node_root().rglob("*"):
        if not path.is_file() or path.is_symlink() or path.stat().st_mtime < started:
            continue
        written += 1
        content = path.read_bytes().decode(errors="replace")
        found = [secret[:4] for secret in secrets if secret in content]
        if found:
            holding.append(path)
            mode = stat.S_IMODE(path.stat().st_mode)
            if mode & 0o137:
                leaks.append((f"{path} (mode {mode:o})", found))
    assert written and not leaks, leaks
    assert any(path.name == "connect-mirror-maker.properties" for path in holding), holding  # the one file meant to hold them


def test_failover_over_sasl_ssl_preview_then_apply(lab, tmp_path):
    lab.inventory = flow_inventory(lab, tmp_path, ("SASLSSL", "mirrormaker"), ("SASLSSL", "mirrormaker"))
    options = {"failover_pause": False, "failover_groups": [f"{PREFIX}-.*"], "failover_topics": [f"{PREFIX}-.*"],
               "failover_verify_window": PER_PARTITION, "failover_lag_timeout": 60, "failover_lag_poll_interval": 1}
    deadline = time.monotonic() + 120
    while True:  # MirrorMaker checkpoints the group every 5 s once it found it
        preview = lab.play(FAILOVER, check=True, **options)
        assert not preview.failed, failed_message(preview)
        if {row["partition"] for row in preview.task(APPLY_TASK).get("offsets", []) if row["group"] == GROUP} == set(CONSUMED):
            break
        assert time.monotonic() < deadline, preview.task(APPLY_TASK)
        time.sleep(5)
    assert secure_lab.admin_client(lab, "secondary", "group", GROUP)["offsets"] == {}, "check mode committed offsets"
    run = lab.play(FAILOVER, **options)
    assert not run.failed, failed_message(run)
    committed = secure_lab.admin_client(lab, "secondary", "group", GROUP)["offsets"]
    keys = secure_lab.admin_client(lab, "secondary", "keys", REMOTE)["keys"]
    for partition, consumed in CONSUMED.items():
        unread = keys[str(partition)][committed[f"{REMOTE}:{partition}"]:]
        assert {f"p{partition}-{i}" for i in range(consumed, PER_PARTITION)} <= set(unread), partition
