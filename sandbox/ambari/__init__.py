"""An emulator of the Ambari v1 REST API subset kafkaops.mirror uses (reference/ambari-api.md).

`python -m sandbox.ambari --config <json>`; see docs/development.md for the config and fault injection.
"""
