# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PySpark job that proves a MirrorMaker 2 mirror is complete, record by record.

Self-contained on purpose: it runs under spark-submit on a Spark cluster (shipped with --py-files or
added by the entry script), where the Ansible collection is not installed.
"""
