# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for the Kafka admin module tests: the worker's real-Kafka lab, a way to run modules on a cluster
node, and an independent read-back through plain kafka-python on that node."""
from __future__ import annotations


import pytest

from tests.support.kafka_targets import KafkaTarget, target_for


# The modules' tests run on real Kafka only (the worker's shared apache lab: primary 2.4.1, secondary 3.2.0, three brokers
# each). They ran on noida and tansu too until real Kafka came to the lab; those cases added a third of the real-Kafka
# worker's time (592 s in a fresh-clone run) and only the stand-ins' quirks, which the modules need not follow.
@pytest.fixture(params=[pytest.param("apache", marks=pytest.mark.real_kafka)])
def provider_state(request, sandbox_apache, mirror_host_ready, source_names_synced):
    mirror_host_ready(sandbox_apache)  # the role tests' plays run the modules on the MirrorMaker host
    source_names_synced(sandbox_apache)
    return sandbox_apache


@pytest.fixture
def target(provider_state) -> KafkaTarget:
    """The secondary cluster, from its broker node (the MirrorMaker host)."""
    return target_for(provider_state, "secondary")


@pytest.fixture
def source(provider_state) -> KafkaTarget:
    return target_for(provider_state, "primary")
