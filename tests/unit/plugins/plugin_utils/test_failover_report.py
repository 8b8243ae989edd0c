# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failover role's report and settings check (plugin_utils/failover_report and its filters), formerly Jinja templates."""
from ansible_collections.kafkaops.mirror.plugins.filter import failover as plugin
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.failover_report import report

ROW = {"group": "app", "topic": "primary.orders", "source_topic": "orders", "partition": 0, "source_offset": 93, "translated_offset": 91,
       "exact_offset": 93, "re_read": 0, "basis": "offset sync (90 -> 88)", "action": "commit", "reason": "group inactive on the target",
       "preview": {"status": "re_read", "re_read": 2, "skipped": 0, "detail": "records 89..90 read again"}}
RESULT = {"groups": [{"group": "app", "status": "committed", "actions": {"commit": 1, "up_to_date": 0}}], "offsets": [ROW],
          "preview_totals": {"partitions": 1, "exact": 1, "re_read": 0, "re_read_translated": 2, "skipped": 0,
                             "unverified": 0}, "untranslated": ["late[0]: no sync"],
          "would_skip": [], "refused": [], "committed": ["app"]}


def test_report_lines():
    result = report(RESULT, False, True, ["b0:9092", "b1:9092"], "secondary", "default")
    assert result["lines"] == [
        "group app: committed (commit=1, up_to_date=0)",
        "  primary.orders[0] source 93 -> target 91 (offset sync (90 -> 88), exact 93): committed; group inactive on the target"
        " | preview re_read: re-read 0 (2 from MirrorMaker's offset), skipped 0 - records 89..90 read again",
        "preview: 1 partition(s) counted from the records, 1 at their exact position; 0 record(s) read again (2 from MirrorMaker's"
        " translated offsets), 0 skipped; 0 not verifiable",
        "consumers must change: bootstrap.servers=b0:9092,b1:9092 (cluster secondary)",
        "  subscribe to primary.orders instead of orders (default replication policy)",
        "NOT TRANSLATED (nothing committed, never guessed): late[0]: no sync",
    ]
    assert result["renames"] == {"orders": "primary.orders"} and result["committed"] == ["app"]


def test_report_in_check_mode_with_identity_names_and_an_active_group():
    row = dict(ROW, topic="orders", preview=None, basis=None, exact_offset=None)
    group = {"group": "app", "status": "refused_active", "actions": {"refused_active": 1}}
    lines = report(dict(RESULT, offsets=[row], groups=[group], untranslated=[]), True, False, "b0:9092", "secondary", "identity")["lines"]
    assert lines == [
        "group app: refused_active (refused_active=1) - ACTIVE on the target, left untouched",
        "  orders[0] source 93 -> target 91 (no translation): would commit (check mode); group inactive on the target",
        "consumers must change: bootstrap.servers=b0:9092 (cluster secondary)",
        "  topic names stay the same (identity replication policy)",
    ]


def test_missing_settings():
    groups = {"primary_kafka": ["p0"], "secondary_kafka": []}
    missing = plugin.failover_missing({"failover_source_alias": "", "failover_target_alias": "secondary"}, "primary_kafka", "secondary_kafka",
                                      groups, {"p0": {}})
    assert missing == ["failover_source_alias (default: kafka_cluster_alias of the group primary_kafka)",
                       "kafka_bootstrap_servers for group primary_kafka (not set for its host p0)",
                       "inventory group secondary_kafka with at least one host"]
    assert set(plugin.FilterModule().filters()) == {"failover_missing", "failover_report"}


def test_report_of_a_mirrormaker_1_flow():
    row = dict(ROW, topic="orders", source_topic="orders", partition=4, source_offset=None, source_offsets={"0": 12, "1": 30},
               translated_offset=0, exact_offset=7, re_read=1, basis="partition_start", reason="commit 7",
               preview={"status": "re_read", "re_read": 8, "skipped": 0, "detail": "target offset 7 holds the first copy"})
    lines = report(dict(RESULT, offsets=[row], untranslated=[]), True, True, "b0:9092", "secondary", "MirrorMaker 1")["lines"]
    assert lines[1] == ("  orders[4] source offsets 0:12, 1:30 -> target 0 (partition_start, exact 7): would commit (check mode); commit 7"
                        " | preview re_read: re-read 1 (8 from the partition's start), skipped 0 - target offset 7 holds the first copy")
    assert lines[-1] == "  topic names stay the same (MirrorMaker 1 keeps them)"
