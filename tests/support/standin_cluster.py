# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One flow's properties, and a cluster as the MirrorMaker 2 stand-in's copy sees it (sandbox/mm2/clients.py's Cluster), for its unit tests: topics
with partition counts, created on demand, nothing to read back, and no topic configs. A test's subclass says what its
producer and consumer are."""
from __future__ import annotations

# connect-mirror-maker.properties of one flow, primary -> secondary, for the stand-in's settings loader.
PROPERTIES = """
clusters = primary, secondary
primary.bootstrap.servers = 127.0.1.10:9092
secondary.bootstrap.servers = 127.0.2.10:9092
primary->secondary.enabled = true
"""


class StandInClusterFake:
    def __init__(self, topics=None, batches=()):
        self.topics, self.batches = dict(topics or {}), batches

    def partition_counts(self, topics=None):
        return dict(self.topics)

    def ensure_topic(self, name, partitions, *_args):
        self.topics.setdefault(name, partitions)

    def read_all(self, _topic):
        return []

    def read_partitions(self, _topic):
        return []

    def admin(self):
        return self

    def describe_configs(self, resources, config_filter):
        return {"topic": {resource.name: {} for resource in resources}}
