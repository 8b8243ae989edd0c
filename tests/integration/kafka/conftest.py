# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for the Kafka admin module tests: one sandbox cluster per provider, a way to run modules on a cluster
node, and an independent read-back through plain kafka-python on that node."""
from __future__ import annotations

import pytest

from tests.support.kafka_targets import KafkaTarget, target_for


@pytest.fixture(params=["noida", pytest.param("tansu", marks=pytest.mark.tansu)])
def provider_state(request, mirror_host_ready):
    state = request.getfixturevalue("sandbox" if request.param == "noida" else "sandbox_tansu")
    mirror_host_ready(state)  # the role tests' plays run the modules on the MirrorMaker host
    return state


@pytest.fixture
def target(provider_state) -> KafkaTarget:
    """The secondary cluster, from its broker node (the MirrorMaker host), on each provider."""
    return target_for(provider_state, "secondary")


@pytest.fixture
def source(provider_state) -> KafkaTarget:
    return target_for(provider_state, "primary")
