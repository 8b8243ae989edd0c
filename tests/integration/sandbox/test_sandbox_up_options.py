# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options of `up`. `up(advertise_ip=True)` / `python -m sandbox up --advertise-ip`: the brokers start advertising their IP addresses and
Ambari's stored kafka-env holds the runbook's IP-advertising snippet, so the two agree (no component stale, the brokers
run what Ambari reports). Read back with a Kafka metadata request of this test's own and by GETs to the Ambari emulator
(tests/support/ip_advertising.py), on tansu (which advertises FQDNs otherwise, as HDInsight's brokers do); real Kafka's lab
is checked by the differential test's fixture, which starts one so anyway. A directory whose Ambari kept a configuration
without the snippet is refused, with nothing changed.
`up(mirrormaker_node=...)`: an unknown node, or another node than the directory started with, is refused too."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sandbox import api
from tests.support.ip_advertising import advertised, assert_ip_advertising_as_ambari_stores

pytestmark = pytest.mark.integration


def test_brokers_advertise_ips_and_ambari_holds_the_snippet(fresh_sandbox):
    # On tansu here. Real Kafka (apache) is checked the same way where a lab starts so anyway, at no extra lab's cost:
    # tests/integration/differential's lab (KRaft 3.9.2, up(advertise_ip=True)) runs this check once it is up.
    assert_ip_advertising_as_ambari_stores(fresh_sandbox("tansu", advertise_ip=True))


def test_a_kept_configuration_without_the_snippet_is_refused_and_left_as_it_was(fresh_sandbox):
    state = fresh_sandbox("tansu")
    assert advertised(state, "primary") == sorted(b["node"] for b in state["clusters"]["primary"]["brokers"])  # FQDNs
    api.down(state["dir"])
    stored = Path(state["dir"]) / "clusters" / "primary" / "ambari-state.json"
    before = hashlib.sha256(stored.read_bytes()).hexdigest()
    with pytest.raises(api.SandboxError, match="kafka-env has no IP advertising"):
        api.up(state["dir"], provider="tansu", net=state["net"], subnet=state["subnet"], advertise_ip=True)
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == before
    assert api.status(state["dir"])["running"] is False


@pytest.mark.skipif(os.geteuid() != 0, reason="hn0 is a host node only as root (ssh node mode)")
def test_an_unknown_or_changed_mirrormaker_node_is_refused(fresh_sandbox):
    state = fresh_sandbox("noida", mirrormaker_node="hn0")
    hn0 = next(n for n in state["clusters"]["secondary"]["nodes"] if n["role"] == "head")
    assert state["mirrormaker_node"] == hn0["name"] and "ssh" in hn0 and hn0["service_accounts"]
    api.down(state["dir"])
    kept = (Path(state["dir"]) / "state.json").read_bytes()
    for node, message in (("hn1", "choose one of the secondary's nodes hn0, wn0, wn1, wn2"), ("wn0", "ran MirrorMaker on hn0-second")):
        with pytest.raises(api.SandboxError, match=message):
            api.up(state["dir"], provider="noida", net=state["net"], subnet=state["subnet"], mirrormaker_node=node)
        assert (Path(state["dir"]) / "state.json").read_bytes() == kept
