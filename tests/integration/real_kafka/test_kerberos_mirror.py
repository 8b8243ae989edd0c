# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kerberos for real (issue 28) on the single-broker real-Kafka lab (tests/integration/conftest.py sandbox_apache_single, started
secure): an MIT KDC from Debian's krb5-kdc with the lab's realm, and a SASL_PLAINTEXT listener with GSSAPI on the 2.4.1 primary and
the 3.2.0 secondary (sandbox/lab_kerberos.py), the shape of an HDInsight ESP cluster. Every client logs in with a keytab on the
MirrorMaker node (its /etc/krb5.conf is the realm's); every read-back is an independent kafka-python client authenticating as the
lab's admin over SCRAM (tests/support/secure_lab.py), not over the Kerberos path under test.

1. kafka_mirror_acls as lab-admin@REALM over GSSAPI against both brokers: MirrorMaker's principal User:mm2-kerberos gets its
   least-privilege ACLs, read back by the admin.
2. A stale keytab (the principal's keys changed since it was exported) for the primary stops mirror.yml in its preflight,
   naming the cluster, the principal and what was refused; no topic is created, MirrorMaker's configuration is as it was.
3. The flow over GSSAPI on both clusters: mirror.yml (preflight, kafka_topics, MirrorMaker 2 of 3.2.0 with a keytab JAAS login,
   the validation job) with the validation passing, records read back; no keytab's bytes nor any password in the run's output.
"""
from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import pytest

from tests.support import secure_lab
from tests.support.ansible_play import run_module
from tests.support.checkout import REPO
from tests.support.real_lab import RealLab, mirror_plan
from tests.support.secure_lab import HOST_PYTHON, PREFLIGHT_GATE, VALIDATION_REPORT, failed_message, kerberos_connection, mirrormaker_files

pytestmark = [pytest.mark.integration, pytest.mark.spark,
              pytest.mark.skipif(os.geteuid() != 0, reason="the lab's nodes are SSH hosts (root)")]

MIRROR = REPO / "playbooks" / "mirror.yml"
PREFIX, ORDERS, PARTITIONS, PER_PARTITION = "kx", "kx-orders", 2, 100
REMOTE = f"primary.{ORDERS}"
MIRRORMAKER = "User:mm2-kerberos"  # mm2-kerberos@KAFKAOPS.LAB by the brokers' DEFAULT principal.to.local rule
PLAN = mirror_plan(PREFIX, health_timeout=150)
FLOW_ACLS = {"principal": MIRRORMAKER, "source_alias": "primary", "target_alias": "secondary", "topics": [f"{PREFIX}-.*"],
             "groups": [f"{PREFIX}-.*"]}


@pytest.fixture(scope="module")
def lab(sandbox_apache_single, mirror_host_ready, source_names_synced):
    lab = RealLab(sandbox_apache_single, PLAN)
    mirror_host_ready(sandbox_apache_single)  # the lab's inventory sets mirror_host_kerberos: python-gssapi in the virtualenv
    source_names_synced(sandbox_apache_single)  # the MirrorMaker node resolves the primary's FQDNs (its principal's host name)
    secure_lab.admin_client(lab, "primary", "create", ORDERS, PARTITIONS, 1)
    secure_lab.admin_client(lab, "primary", "keyed", ORDERS, PARTITIONS, PER_PARTITION)
    secure_lab.deliver_keytabs(lab, ("lab-admin", "mm2-kerberos", "stale"))
    yield lab
    lab.remove_mirrormaker()  # the lab's next file finds no MirrorMaker of this one's (RealLab.remove_mirrormaker)


def flow_inventory(lab: RealLab, tmp_path: Path, source_keytab: str, name: str) -> Path:
    """The lab's inventory with both clusters reached over GSSAPI as mm2-kerberos, the primary with the keytab `source_keytab`."""
    return secure_lab.secure_inventory(lab.state, tmp_path / name, {
        "primary": kerberos_connection(lab.state, "primary", source_keytab, lab.state["security"]["kerberos"]["principals"]["mm2-kerberos"]),
        "secondary": kerberos_connection(lab.state, "secondary", "mm2-kerberos")})


def kerberos_secrets(state: dict) -> list:
    """What must never be printed: every keytab of the realm, whole and as base64 (as a log would carry it), and the lab's
    passwords (secure_lab.secrets_of)."""
    keytabs = [Path(path).read_bytes() for path in state["security"]["kerberos"]["keytabs"].values()]
    return [base64.b64encode(data).decode() for data in keytabs] + [data.hex() for data in keytabs] + secure_lab.secrets_of(state)


def mirrormaker_acls(lab: RealLab, alias: str) -> list:
    return [acl[1:5] for acl in secure_lab.admin_client(lab, alias, "acls")["acls"] if acl[0] == MIRRORMAKER]


def test_acls_module_over_gssapi_with_a_keytab_on_both_releases(lab):
    assert mirrormaker_acls(lab, "primary") == mirrormaker_acls(lab, "secondary") == []
    for alias, side in (("primary", "source"), ("secondary", "target")):
        admin = kerberos_connection(lab.state, alias, "lab-admin")
        result = run_module("kafka_mirror_acls", {**admin, **FLOW_ACLS, "cluster": side}, hosts="mirrormaker", inventory=lab.inventory,
                            extra_vars={"ansible_python_interpreter": HOST_PYTHON})
        assert result["changed"] and len(result["added"]) == len(result["acls"]), result
        held = mirrormaker_acls(lab, alias)  # read back by the admin over SCRAM
        assert len(held) == len(result["acls"]) and ["TOPIC", "PREFIXED", f"{'' if side == 'source' else 'primary.'}kx-", "READ"] in held


def test_a_stale_keytab_stops_the_flow_in_preflight_before_anything_changes(lab, tmp_path):
    configured = mirrormaker_files(lab)
    topics_before = set(secure_lab.admin_client(lab, "secondary", "topics")["topics"])
    lab.inventory = flow_inventory(lab, tmp_path, "stale", "stale.yml")
    play = lab.play(MIRROR)
    assert play.failed
    message = failed_message(play)
    assert [task["task"] for task in play.tasks if task["status"] == "failed"] == [PREFLIGHT_GATE], message
    for text in ("cluster primary", "mm2-kerberos@KAFKAOPS.LAB", "stale.keytab", "Password incorrect"):
        assert text in message, (text, message)
    assert "cluster secondary" not in message, message  # its keytab is current: only the primary is refused
    assert mirrormaker_files(lab) == configured, "MirrorMaker's configuration changed"
    assert set(secure_lab.admin_client(lab, "secondary", "topics")["topics"]) == topics_before
    outputs = play.stdout + play.stderr + repr(play.tasks)
    assert not [secret[:6] for secret in kerberos_secrets(lab.state) if secret in outputs]


def test_flow_over_gssapi_on_both_clusters(lab, tmp_path):
    lab.inventory = flow_inventory(lab, tmp_path, "mm2-kerberos", "kerberos.yml")
    started = time.time()
    play = lab.play(MIRROR)
    assert not play.failed, failed_message(play)
    report = play.task(VALIDATION_REPORT)["ansible_facts"]["mirror_validation_report"]
    assert report["passed"], report
    # PyPI's confluent-kafka has no GSSAPI in its librdkafka: the job reads with kafka-python (mirror_validation/kafka_reader.py).
    assert report["client"] == "kafka-python", report["client"]
    keys = secure_lab.admin_client(lab, "secondary", "keys", REMOTE)["keys"]
    for partition in range(PARTITIONS):
        assert sorted(keys[str(partition)]) == sorted(f"p{partition}-{i}" for i in range(PER_PARTITION)), partition
    properties = next(path for path in lab.mirrormaker_node_root().rglob("connect-mirror-maker.properties"))
    assert properties.stat().st_mtime >= started and "Krb5LoginModule required useKeyTab=true" in properties.read_text()
    outputs = play.stdout + play.stderr + repr(play.tasks)
    assert not [secret[:6] for secret in kerberos_secrets(lab.state) if secret in outputs]
