"""The local sandbox: two HDInsight-like Kafka clusters with Ambari emulators on 127.0.0.0/8.

`python -m sandbox up|down|status|seed`, or the API in `sandbox.api`. See docs/development.md.
"""
