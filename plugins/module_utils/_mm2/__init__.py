# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MirrorMaker 2's vocabulary, defined once for the whole collection (private: not an API for other collections).

- patterns: the whole-name pattern lists of topics/groups and their one comma rule; MM2's default excludes.
- naming: replication policies, remote-topic names, heartbeats, MM2's internal topic names and the internal-topic rule,
  as Apache Kafka's connect/mirror-client defines them for each release.
- selection: which topics and groups one flow replicates (MirrorSourceConnector.shouldReplicateTopic, the filters).
- findings: the one severity of each finding that more than one module reports.
- internal_records: the one reader of MM2's internal topics and its one rule for their records (tombstones, undecodable
  records).
- flow_options: the one check of the options that describe a flow (aliases, policy, separator, offset-syncs location,
  release), for the modules that read one.

The validation job (roles/mirror_validation) cannot import the collection: `make vendored` (scripts/vendor_mm2_naming.py)
generates its naming.py (from patterns.py and naming.py), vendored_mm2_records.py (the codec, with internal_records'
decode_records) and findings.py (finding_text), and unit tests fail when a copy drifts apart.
"""
