# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hosts_sync role on plain per-node hosts files: idempotent, byte-exact outside the block, stale removal, conflicts."""
from __future__ import annotations

import pytest

from tests.support.ambari_emulator import Emulator, cluster_hosts
from tests.support.ansible_play import run_tasks
from tests.support.hosts_lab import TARGET_TEXT, source_hosts_text

pytestmark = pytest.mark.integration

BEGIN = "# BEGIN kafkaops.mirror hosts_sync primary"
END = "# END kafkaops.mirror hosts_sync primary"
WRITE_TASK = "kafkaops.mirror.hosts_sync : Write the managed block of primary"


def sync(lab, check=False, **role_vars):
    task = {"name": "sync hosts", "ansible.builtin.include_role": {"name": "kafkaops.mirror.hosts_sync"}, "vars": role_vars}
    return run_tasks([task], hosts="secondary_kafka", inventory=lab.inventory, check=check, diff=True)


def block_lines(text, begin=BEGIN, end=END):
    lines = text.splitlines()
    return lines[lines.index(begin) + 1:lines.index(end)]


def test_first_run_writes_block_second_run_changes_nothing(lab):
    play = sync(lab)
    assert not play.failed, play.stdout[-3000:]
    for name, path in lab.targets.items():
        text = path.read_text()
        assert text.startswith(TARGET_TEXT), "lines outside the block must stay byte for byte"
        lines = block_lines(text)
        assert len(lines) == 6 and all(line.split("\t")[1].split(".")[0][:2] in ("wn", "zk") for line in lines)
        assert "127.20.70.10\twn0-primar.src.internal.cloudapp.net\twn0-primar" in lines
        assert "hn0-primar" not in text and "headnodehost" not in text
        assert len(list(path.parent.glob("hosts.*~"))) == 1, "a backup is kept"
        assert play.task(WRITE_TASK, host=name)["changed"]

    before = lab.target_bytes()
    again = sync(lab)
    assert not again.failed and again.changed_count == 0
    assert lab.target_bytes() == before


def test_check_mode_changes_nothing_and_diff_shows_the_block(lab):
    play = sync(lab, check=True)
    assert not play.failed, play.stdout[-3000:]
    result = play.task(WRITE_TASK, host="wn0-second")
    assert result["changed"] and "wn2-primar" in result["diff"][0]["after"]
    assert lab.target_bytes() == {name: TARGET_TEXT.encode() for name in lab.targets}


def test_stale_entries_are_removed_and_changes_applied(lab):
    assert not sync(lab).failed
    for path in lab.sources.values():
        path.write_text(source_hosts_text(workers=2).replace("127.20.70.11\t", "127.20.70.99\t"))
    play = sync(lab)
    assert not play.failed
    text = lab.targets["wn0-second"].read_text()
    assert "wn2-primar" not in text and "127.20.70.99\twn1-primar" in text and "127.20.70.11" not in text
    assert text.startswith(TARGET_TEXT) and text.count(BEGIN) == 1


def test_conflict_outside_the_block_is_refused(lab):
    target = lab.targets["wn1-second"]
    target.write_bytes(TARGET_TEXT.encode() + b"10.9.9.9 wn1-primar.src.internal.cloudapp.net\n")
    before = lab.target_bytes()
    play = sync(lab)
    assert play.failed
    result = play.task("kafkaops.mirror.hosts_sync : Refuse entries that lines outside the managed block contradict", host="wn1-second")
    assert "line 8 maps wn1-primar.src.internal.cloudapp.net to 10.9.9.9, but the source cluster says 127.20.70.11" in result["msg"]
    assert str(target) in result["msg"]
    assert target.read_bytes() == before["wn1-second"]


def test_sources_that_disagree_fail_without_change(lab):
    lab.sources["wn1-primar"].write_text(source_hosts_text().replace("127.20.70.12\t", "127.20.70.77\t"))
    play = sync(lab)
    assert play.failed and "the source disagrees about wn2-primar" in play.stdout
    assert lab.target_bytes() == {name: TARGET_TEXT.encode() for name in lab.targets}


def test_empty_source_is_refused(lab):
    for path in lab.sources.values():
        path.write_text("127.0.0.1 localhost\n")
    play = sync(lab)
    assert play.failed and "refusing to empty the managed block" in play.stdout
    assert lab.target_bytes() == {name: TARGET_TEXT.encode() for name in lab.targets}


def test_two_sources_coexist_and_absent_removes_only_one(lab):
    assert not sync(lab).failed
    play = sync(lab, hosts_sync_source_alias="third", hosts_sync_source_group="third_kafka")
    assert not play.failed, play.stdout[-3000:]
    text = lab.targets["wn0-second"].read_text()
    assert block_lines(text, "# BEGIN kafkaops.mirror hosts_sync third", "# END kafkaops.mirror hosts_sync third") == [
        "127.20.72.10\twn0-thirdc.x.internal.cloudapp.net\twn0-thirdc"
    ]
    assert len(block_lines(text)) == 6

    removed = sync(lab, hosts_sync_state="absent")
    assert not removed.failed
    text = lab.targets["wn0-second"].read_text()
    assert BEGIN not in text and "wn0-thirdc" in text and text.startswith(TARGET_TEXT)


def test_ambari_source(lab):
    emu = Emulator(lab.root / "ambari", hosts=cluster_hosts("primar", "127.20.73")).start()
    try:
        play = sync(lab, hosts_sync_source="ambari", hosts_sync_ambari_url=emu.url, hosts_sync_ambari_cluster_name="primary",
                    hosts_sync_ambari_password=emu.config["password"])
        assert not play.failed, play.stdout[-3000:]
        lines = block_lines(lab.targets["wn1-second"].read_text())
        assert "127.20.73.10\twn0-primar.emul.internal.cloudapp.net\twn0-primar" in lines and len(lines) == 6
        assert not sync(lab, hosts_sync_source="ambari", hosts_sync_ambari_url=emu.url, hosts_sync_ambari_cluster_name="primary",
                        hosts_sync_ambari_password=emu.config["password"]).changed_count
    finally:
        emu.stop()
