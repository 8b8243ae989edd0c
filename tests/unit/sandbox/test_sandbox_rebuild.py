# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`python -m sandbox rebuild --cluster ALIAS` / sandbox.api.rebuild: one cluster's broker torn down and brought up again empty.

supervisord and the broker are fakes here (the order of the calls and what is wiped is what is tested); the real thing runs in
tests/integration/preflight/test_stale_state.py (the classic stale-MirrorMaker-state case).
"""
from __future__ import annotations

import json

import pytest

from sandbox import __main__ as cli
from sandbox import api, broker, probes
from sandbox.providers import BrokerSpec


class FakeSupervisor:
    """supervisord's XML-RPC as rebuild uses it: one program per name, PIDs counting up on every start."""

    def __init__(self, programs):
        self.info = {name: {"name": name, "statename": "RUNNING", "pid": pid} for name, pid in programs.items()}
        self.calls = []
        self.next_pid = 500

    @property
    def supervisor(self):
        return self

    def rpc(self):
        return self

    def getProcessInfo(self, name):  # noqa: N802 (supervisord's XML-RPC name)
        return dict(self.info[name])

    def getAllProcessInfo(self):  # noqa: N802
        return [dict(info) for info in self.info.values()]

    def stopProcess(self, name, wait):  # noqa: N802
        self.calls.append(("stop", name))
        self.info[name].update(statename="STOPPED", pid=0)

    def startProcess(self, name, wait):  # noqa: N802
        self.calls.append(("start", name))
        self.next_pid += 1
        self.info[name].update(statename="RUNNING", pid=self.next_pid)


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A sandbox directory with state.json and broker.json of both clusters, supervisord faked as running."""
    state = {"dir": str(tmp_path), "provider": "noida", "supervisord": {"pid": 1}, "clusters": {}, "processes": {}}
    for index, alias in enumerate(("primary", "secondary")):
        cluster_dir = tmp_path / "clusters" / alias
        (cluster_dir / "data" / "topics").mkdir(parents=True)
        (cluster_dir / "data" / "kafka.json").write_text("{}")
        broker.write_spec(cluster_dir, BrokerSpec(provider="noida", alias=alias, cluster_name=alias, ip=f"127.9.{index + 1}.10",
                                                  fqdn=f"wn0-{alias}", port=9092, data_dir=str(cluster_dir / "data"), log_dir=str(tmp_path)))
        state["clusters"][alias] = {"alias": alias, "bootstrap_servers": f"127.9.{index + 1}.10:9092"}
        state["processes"][f"{alias}-broker"] = 100 + index
    (tmp_path / api.STATE_FILE).write_text(json.dumps(state))
    fake = FakeSupervisor(state["processes"])
    monkeypatch.setattr(api, "_supervisor", lambda _directory: fake)
    monkeypatch.setattr(api, "_supervisord_running", lambda _state: True)
    monkeypatch.setattr(probes, "port_in_use", lambda _host, _port: False)
    probed = []
    monkeypatch.setattr(probes, "kafka_metadata", lambda host, port: probed.append((host, port)) or [probes.AdvertisedBroker(1, host, port)])
    return tmp_path, fake, probed


def test_rebuild_wipes_only_that_cluster_and_waits_for_its_broker(lab):
    directory, fake, probed = lab
    result = api.rebuild(directory, "secondary")
    assert fake.calls == [("stop", "secondary-broker"), ("start", "secondary-broker")]
    assert probed == [("127.9.2.10", 9092)]
    assert not any((directory / "clusters" / "secondary" / "data").iterdir())
    assert sorted(p.name for p in (directory / "clusters" / "primary" / "data").iterdir()) == ["kafka.json", "topics"]
    assert (result["cluster"], result["pid_before"], result["pid"], result["wiped"]) == ("secondary", 101, 501, ["kafka.json", "topics"])
    # state.json records the new PID, so that `down` and `status` find the rebuilt broker
    assert json.loads((directory / api.STATE_FILE).read_text())["processes"] == {"primary-broker": 100, "secondary-broker": 501}


def test_rebuild_refuses_an_unknown_cluster_and_touches_nothing(lab):
    directory, fake, _probed = lab
    with pytest.raises(api.SandboxError, match="has no cluster 'tertiary'; its clusters are primary, secondary"):
        api.rebuild(directory, "tertiary")
    assert fake.calls == [] and (directory / "clusters" / "secondary" / "data" / "kafka.json").exists()


def test_rebuild_refuses_a_broker_that_does_not_stop(lab, monkeypatch):
    directory, fake, _probed = lab
    monkeypatch.setattr(fake, "stopProcess", lambda name, wait: fake.calls.append(("stop", name)))
    with pytest.raises(api.SandboxError, match="did not stop within 0.2 s; nothing was wiped"):
        api.rebuild(directory, "secondary", timeout=0.2)
    assert (directory / "clusters" / "secondary" / "data" / "kafka.json").exists()


def test_rebuild_needs_a_running_sandbox(tmp_path):
    with pytest.raises(api.SandboxError, match="no running sandbox in"):
        api.rebuild(tmp_path, "secondary")


def test_cli_rebuild_needs_a_cluster(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["rebuild", "--dir", "x"])
    assert exit_info.value.code == 2
    assert "rebuild needs --cluster ALIAS" in capsys.readouterr().err


def test_cli_rebuild_reports_what_it_did(lab, capsys):
    directory, _fake, _probed = lab
    assert cli.main(["rebuild", "--dir", str(directory), "--cluster", "secondary"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rebuilt secondary in ") and "secondary-broker pid 101 -> 501, on 127.9.2.10:9092 again" in out
    assert "(wiped: kafka.json, topics)" in out and "its topics, records and consumer groups are gone" in out
    assert cli.main(["rebuild", "--dir", str(directory), "--cluster", "tertiary"]) == 2
    assert "sandbox rebuild failed: the sandbox in" in capsys.readouterr().err
