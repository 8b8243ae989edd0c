# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for tests against a standalone Ambari emulator (not the whole sandbox)."""
from __future__ import annotations

import pytest

from tests.support.ambari_emulator import Emulator


@pytest.fixture
def emulator(tmp_path):
    """A fresh emulator per test: config versions and stale flags start from HDInsight defaults."""
    emu = Emulator(tmp_path / "ambari").start()
    yield emu
    emu.stop()


@pytest.fixture
def make_emulator(tmp_path):
    """Factory for emulators with custom restart commands or hosts; all are stopped at the end."""
    started = []

    def factory(name: str = "ambari", **kwargs) -> Emulator:
        emu = Emulator(tmp_path / name, **kwargs).start()
        started.append(emu)
        return emu

    yield factory
    for emu in started:
        emu.stop()
