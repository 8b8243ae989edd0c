# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Options of plugins/module_utils/_ambari/client.py ambari_connection_argument_spec(); must be kept in sync with it.
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  url:
    description:
      - Base URL of Ambari, without C(/api/v1).
      - On HDInsight the cluster gateway, C(https://<cluster>.azurehdinsight.net); elsewhere usually C(http://<ambari-host>:8080).
    type: str
    required: true
  username:
    description: Ambari user (on HDInsight the cluster login user).
    type: str
    default: admin
  password:
    description: Password of O(username), sent with HTTP basic authentication.
    type: str
    required: true
  cluster_name:
    description: Name of the cluster in Ambari.
    type: str
    required: true
  validate_certs:
    description: Whether to verify the TLS certificate of O(url). Set to V(false) only for test clusters with self-signed certificates.
    type: bool
    default: true
  timeout:
    description:
      - Seconds to wait for one HTTP response from Ambari.
      - Connection errors and HTTP 502, 503 and 504 answers are retried 4 times with exponential backoff (0.5 to 4 seconds); 4xx answers are not.
        A restart request is posted again only when Ambari lists no request with its context that it accepted meanwhile.
    type: int
    default: 30
notes:
  - Every write sends the C(X-Requested-By) header Ambari's CSRF protection requires.
  - Requests send C(Accept */*) and bodies as C(text/plain), as Ambari's web UI does; Ambari 2.7.0 to 2.7.3 (HDInsight) fail
    an C(application/json) body, and every Ambari answers 406 to C(Accept application/json).
  - HTTP 401 or 403 fails with "wrong Ambari credentials for <url>".
"""
