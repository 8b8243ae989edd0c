# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One answer to "where is this checkout's collections root" (docs/development.md, "Test helpers"): the Makefile and the
sandbox's MirrorMaker 2 stand-in give tests.support.checkout.collections_path()'s answer, in every layout."""
from __future__ import annotations

import re

from sandbox.mm2 import __main__ as stand_in
from tests.support.checkout import REPO, collections_path


def test_the_makefile_exports_the_checkouts_collections_root_in_every_layout():
    text = (REPO / "Makefile").read_text()
    assert re.findall(r"^VENV := (.*)$", text, re.M) == ["$(CURDIR)/.venv"]
    assert re.findall(r"^COLLECTIONS_PATH := (.*)$", text, re.M) == ["$(VENV)/collections"]  # one assignment, no layout branch
    assert "export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS_PATH)" in text
    assert REPO / ".venv" / "collections" == collections_path()


def test_the_stand_in_takes_ansible_collections_path_else_the_same_root(monkeypatch):
    monkeypatch.delenv("ANSIBLE_COLLECTIONS_PATH", raising=False)
    assert stand_in._collections_path() == str(collections_path())  # pylint: disable=protected-access
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", "/first:/second")
    assert stand_in._collections_path() == "/first"  # pylint: disable=protected-access
