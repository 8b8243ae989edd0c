# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for the hosts_sync tests."""
from __future__ import annotations

import pytest

from tests.support.hosts_lab import Lab


@pytest.fixture
def lab(tmp_path):
    return Lab(tmp_path)
