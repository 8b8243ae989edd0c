"""Fixtures for the hosts_sync tests."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The standalone Ambari emulator helper lives with the Ambari tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ambari"))

from hosts_lab import Lab  # noqa: E402


@pytest.fixture
def lab(tmp_path):
    return Lab(tmp_path)
