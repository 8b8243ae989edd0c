# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 2's vocabulary, defined once for the whole collection (private: not an API for other collections).

- patterns: the whole-name pattern lists of topics/groups and their one comma rule; MM2's default excludes.
- naming: replication policies, remote-topic names, heartbeats, MM2's internal topic names and the internal-topic rule,
  as Apache Kafka's connect/mirror-client defines them for each release.
- selection: which topics and groups one flow replicates (MirrorSourceConnector.shouldReplicateTopic, the filters).
- findings: the one severity of each finding that more than one module reports.
- records: the wire format of MM2's internal topics' records (Checkpoint, OffsetSync, Heartbeat).
- internal_records: the one rule for those records (tombstones, undecodable records); their reader is
  _kafka.internal_topic_reader.
- versions: Kafka releases and the release each feature arrived in.
- keys: MirrorMaker 2's property keys and the release each arrived in.
- flow_options: the one check of the options that describe a flow (aliases, policy, separator, offset-syncs location,
  release), for the modules that read one.

May import: the standard library and _mm2 only (no kafka-python, no ansible), so that the validation job can vendor it
(tests/unit/collection/test_module_utils_layering.py). The bottom of module_utils: _mm2 <- _kafka <- _ambari <- _mirror
<- modules; plugin_utils and the filters may import all of them.

The validation job (roles/mirror_validation) cannot import the collection: `make vendored` (scripts/vendor_mm2_naming.py)
generates its naming.py (from patterns.py, naming.py and selection.py), vendored_mm2_records.py (records.py, with
internal_records' decode_records) and findings.py (finding_text), and unit tests fail when a copy drifts apart.
"""
