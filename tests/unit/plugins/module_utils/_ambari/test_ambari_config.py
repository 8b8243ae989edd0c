# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.config import (
    ConfigInputError,
    ensure_config,
    plan_config,
    property_changes,
    validate,
)


def params(**overrides):
    base = {"config_type": "kafka-broker", "properties": None, "block": None, "note": None}
    base.update(overrides)
    return base


BLOCK = {"property": "content", "content": "x=1", "marker": "# {mark} m", "state": "present"}


@pytest.mark.parametrize(
    "current, wanted, expected",
    [
        ({"a": "true"}, {"a": True}, {}),
        ({"a": "false"}, {"a": True}, {"a": ("false", "true")}),
        ({"n": "3"}, {"n": 3}, {}),
        ({}, {"n": 3}, {"n": (None, "3")}),
        ({"n": "3"}, {"n": None}, {"n": ("3", None)}),
        ({}, {"n": None}, {}),
        ({"s": "a b"}, {"s": "a b "}, {"s": ("a b", "a b ")}),
    ],
)
def test_property_changes(current, wanted, expected):
    assert property_changes(current, wanted) == expected


def test_plan_keeps_other_properties_and_diffs_only_changes():
    plan = plan_config("v1", {"a": "1", "b": "2", "gone": "x"}, params(properties={"a": 5, "gone": None, "b": "2"}))
    assert plan["properties"] == {"a": "5", "b": "2"}
    assert plan["diff"] == [{"before_header": "kafka-broker (v1)", "after_header": "kafka-broker (new version)", "before": "a=1\ngone=x\n", "after": "a=5\n"}]


def test_plan_block_diff_shows_only_block_lines():
    plan = plan_config("v1", {"content": "line1\nline2\n"}, params(config_type="kafka-env", block=BLOCK))
    assert plan["properties"]["content"] == "line1\nline2\n# BEGIN m\nx=1\n# END m\n"
    assert plan["diff"][0]["before"] == "" and plan["diff"][0]["after"] == "# BEGIN m\nx=1\n# END m\n"
    unchanged = plan_config("v2", plan["properties"], params(config_type="kafka-env", block=BLOCK))
    assert unchanged["changes"] == {} and unchanged["diff"] == []


@pytest.mark.parametrize(
    "bad, message",
    [
        ({}, "give properties, block, or both"),
        ({"properties": {"a": {"nested": 1}}}, "must be a string, number, boolean or null"),
        ({"properties": {"": 1}}, "is empty"),
        ({"block": dict(BLOCK, content=None)}, "block.content is required"),
        ({"block": dict(BLOCK, marker="plain")}, "must contain {mark}"),
    ],
)
def test_validate_rejects(bad, message):
    with pytest.raises(ConfigInputError, match=message):
        validate(params(**bad))


class FakeClient:
    def __init__(self, properties):
        self.tag, self.properties, self.puts = "v1", properties, []

    def current_config(self, config_type):
        return self.tag, dict(self.properties), {}

    def put_config(self, config_type, properties, attributes, note):
        self.puts.append((config_type, properties, note))
        self.tag, self.properties = f"v{len(self.puts) + 1}", properties
        return self.tag


@pytest.mark.parametrize("check_mode", [True, False])
def test_ensure_config_puts_only_on_change_and_never_in_check_mode(check_mode):
    client = FakeClient({"listeners": "PLAINTEXT://localhost:9092"})
    result = ensure_config(params(properties={"listeners": "PLAINTEXT://0.0.0.0:9092"}), check_mode, client)
    assert result["changed"] and result["old_tag"] == "v1"
    assert result["note"] == "kafkaops.mirror ambari_config: listeners"
    assert len(client.puts) == (0 if check_mode else 1)
    assert result["new_tag"] == (None if check_mode else "v2")


def test_ensure_config_unchanged_sends_nothing():
    client = FakeClient({"a": "1"})
    result = ensure_config(params(properties={"a": 1}, note="n"), False, client)
    assert not result["changed"] and result["new_tag"] == "v1" and result["note"] is None and client.puts == []
