"""PySpark job that proves a MirrorMaker 2 mirror is complete, record by record.

Self-contained on purpose: it runs under spark-submit on a Spark cluster (shipped with --py-files or
added by the entry script), where the Ansible collection is not installed.
"""
