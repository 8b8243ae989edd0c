# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.text_block import BlockError, edit_block

MARK = "# {mark} t"


@pytest.mark.parametrize(
    "text, content, state, expected",
    [
        ("a\nb\n", "x", "present", "a\nb\n# BEGIN t\nx\n# END t\n"),
        ("a\nb", "x\n", "present", "a\nb\n# BEGIN t\nx\n# END t\n"),
        ("", "x\ny", "present", "# BEGIN t\nx\ny\n# END t\n"),
        ("a\n# BEGIN t\nold\n# END t\nz\n", "new", "present", "a\n# BEGIN t\nnew\n# END t\nz\n"),
        ("a\n# BEGIN t\nold\n# END t\nz\n", "", "absent", "a\nz\n"),
        ("a\nz\n", "", "absent", "a\nz\n"),
        ("a\r\n# BEGIN t\r\nold\r\n# END t\r\nz", "new", "present", "a\r\n# BEGIN t\nnew\n# END t\nz"),
    ],
)
def test_edit_block(text, content, state, expected):
    assert edit_block(text, content, MARK, state)[0] == expected


def test_edit_block_is_idempotent_and_reports_lines():
    once, old, new = edit_block("a\n", "x", MARK)
    assert old == [] and new == ["# BEGIN t", "x", "# END t"]
    twice, old, new = edit_block(once, "x", MARK)
    assert twice == once and old == new


def test_other_blocks_are_left_alone():
    text = "# BEGIN other\nkeep\n# END other\n"
    assert edit_block(text, "x", MARK)[0] == text + "# BEGIN t\nx\n# END t\n"


@pytest.mark.parametrize("text", ["# BEGIN t\nx\n", "# END t\n# BEGIN t\n", "# BEGIN t\n# END t\n# BEGIN t\n# END t\n"])
def test_broken_blocks_are_refused(text):
    with pytest.raises(BlockError, match="at most one complete block"):
        edit_block(text, "x", MARK)


def test_marker_needs_mark():
    with pytest.raises(BlockError, match="must contain"):
        edit_block("", "x", "# no marker")
