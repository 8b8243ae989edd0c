# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The local sandbox: two HDInsight-like Kafka clusters with Ambari emulators on 127.0.0.0/8.

`python -m sandbox up|down|status|seed`, or the API in `sandbox.api`. See docs/development.md.
"""
