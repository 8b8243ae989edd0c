# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Options of plugins/module_utils/_kafka/connection_options.py kafka_connection_argument_spec(); must be kept in sync with it.
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
requirements:
  - kafka-python >= 3.0.0 on the host that runs the module, to reach Kafka
options:
  bootstrap_servers:
    description:
      - Kafka brokers to fetch cluster metadata from, as C(host:port) (a list, or one comma-separated string).
      - After that, clients talk to every broker at the address it I(advertises); the module checks that each
        advertised address resolves and accepts TCP from the host it runs on, and otherwise fails naming them.
    type: list
    elements: str
    required: true
  security_protocol:
    description: Protocol of the listener at O(bootstrap_servers).
    type: str
    default: PLAINTEXT
    choices: [PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL]
  sasl_mechanism:
    description: SASL mechanism; required when O(security_protocol) is V(SASL_PLAINTEXT) or V(SASL_SSL).
    type: str
    choices: [PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI]
  sasl_kerberos_service_name:
    description: Kerberos service name of the brokers for O(sasl_mechanism=GSSAPI); kafka-python uses V(kafka) when unset.
    type: str
  sasl_kerberos_principal:
    description:
      - Kerberos principal (for example V(kafka-mirror@EXAMPLE.COM)) to log in as with O(sasl_kerberos_keytab), for O(sasl_mechanism=GSSAPI).
      - The module runs C(kinit -k -t <keytab> <principal>) into a private credential cache that it removes when it ends, because
        kafka-python reads credentials only from the Kerberos credential cache. Needs MIT Kerberos' C(kinit) and the Python package
        C(gssapi) on the host that runs the module.
      - Leave it and O(sasl_kerberos_keytab) unset to use a ticket obtained with C(kinit) beforehand.
    type: str
  sasl_kerberos_keytab:
    description: Keytab of O(sasl_kerberos_principal), a path on the host that runs the module.
    type: path
  sasl_plain_username:
    description: User name for O(sasl_mechanism=PLAIN) and the SCRAM mechanisms.
    type: str
  sasl_plain_password:
    description: Password for O(sasl_mechanism=PLAIN) and the SCRAM mechanisms.
    type: str
  ssl_cafile:
    description: CA bundle (PEM) that signed the broker certificates.
    type: path
  ssl_certfile:
    description: Client certificate (PEM) for TLS client authentication.
    type: path
  ssl_keyfile:
    description: Private key (PEM) of O(ssl_certfile).
    type: path
  ssl_password:
    description: Password of O(ssl_keyfile).
    type: str
  ssl_check_hostname:
    description: Whether the broker certificate must match the advertised host name.
    type: bool
    default: true
  request_timeout_ms:
    description: Timeout of each Kafka request, and of fetching the first metadata, in milliseconds.
    type: int
    default: 30000
  api_version:
    description:
      - Kafka version to assume instead of asking the brokers (ApiVersions), such as V(2.4) or V(3.7.1).
      - Leave unset unless a broker answers ApiVersions wrongly; a pin lower than the cluster disables newer APIs.
    type: str
"""

    # Option `source` of the modules that read a flow's two clusters: the top-level options reach the target. A module
    # gives `source` its own description, type and required; the suboptions come from here.
    SOURCE_CLUSTER = r"""
options:
  source:
    description: Connection to the source cluster, with the same keys as the top-level connection options.
    type: dict
    suboptions:
      bootstrap_servers:
        description: Brokers of the source cluster, C(host:port).
        type: list
        elements: str
        required: true
      security_protocol:
        description: As the top-level O(security_protocol).
        type: str
        default: PLAINTEXT
        choices: [PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL]
      sasl_mechanism:
        description: As the top-level O(sasl_mechanism).
        type: str
        choices: [PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI]
      sasl_kerberos_service_name:
        description: As the top-level O(sasl_kerberos_service_name).
        type: str
      sasl_kerberos_principal:
        description: As the top-level O(sasl_kerberos_principal).
        type: str
      sasl_kerberos_keytab:
        description: As the top-level O(sasl_kerberos_keytab).
        type: path
      sasl_plain_username:
        description: As the top-level O(sasl_plain_username).
        type: str
      sasl_plain_password:
        description: As the top-level O(sasl_plain_password).
        type: str
      ssl_cafile:
        description: As the top-level O(ssl_cafile).
        type: path
      ssl_certfile:
        description: As the top-level O(ssl_certfile).
        type: path
      ssl_keyfile:
        description: As the top-level O(ssl_keyfile).
        type: path
      ssl_password:
        description: As the top-level O(ssl_password).
        type: str
      ssl_check_hostname:
        description: As the top-level O(ssl_check_hostname).
        type: bool
        default: true
      request_timeout_ms:
        description: As the top-level O(request_timeout_ms).
        type: int
        default: 30000
      api_version:
        description: As the top-level O(api_version).
        type: str
"""
