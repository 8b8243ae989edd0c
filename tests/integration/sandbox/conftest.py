# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Throwaway sandboxes for tests that stop, crash or reconfigure one (the session fixtures stay untouched).

They use the same address block as the session fixtures but third octets 3 and 4 (`subnet=3`), so
both can run at once; one throwaway sandbox per provider at a time.
"""
from __future__ import annotations

import pytest

from sandbox import api

THROWAWAY_SUBNET = 3


@pytest.fixture
def fresh_sandbox(tmp_path, sandbox_net):
    """`fresh_sandbox(provider="noida", **up_options)` -> state; each one is brought down after the test."""
    started = []

    def start(provider: str = "noida", **options):
        net = sandbox_net + (1 if provider == "tansu" else 0)
        directory = tmp_path / f"sandbox-{provider}-{len(started)}"
        started.append(directory)
        return api.up(directory, provider=provider, net=net, subnet=THROWAWAY_SUBNET, **options)

    yield start
    for directory in started:
        api.down(directory)
