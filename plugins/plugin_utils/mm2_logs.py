# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The likely cause of a MirrorMaker that failed to start or died, from the tail of its log and its console output.

Pure, for filter kafkaops.mirror.mm2_start_failure (the mirrormaker2 role's start check). The newest line that matches a known
failure wins, so a later cause is not hidden by an earlier, recovered one.
"""
from __future__ import annotations

import re

# (pattern, cause, fix), searched in this order on each line from the newest.
KNOWN_FAILURES = (
    (r"Could not find or load main class|ClassNotFoundException|NoClassDefFoundError",
     "the Kafka installation lacks MirrorMaker's classes", "point mirrormaker2_kafka_home at a complete Kafka installation (libs/ with connect-mirror-*.jar)"),
    (r"java: (command )?not found|JAVA_HOME is not set|No java found|Unable to locate a Java Runtime",
     "no Java for the Kafka scripts", "install Java (8 or 11 for Kafka 2.x/3.x, 17 for 4.x) or set JAVA_HOME in mirrormaker2_kafka_opts' environment"),
    (r"UnsupportedClassVersionError",
     "the Java on this host is older than this Kafka release needs", "use the Java the release needs (Kafka 4.x: 17 or later) or an older Kafka home"),
    (r"OutOfMemoryError", "MirrorMaker ran out of heap", "raise mirrormaker2_heap_opts (-Xmx) or lower tasks/flows per process"),
    (r"UnknownHostException|No resolvable bootstrap urls|Couldn't resolve server",
     "a broker or bootstrap name does not resolve on this host", "run hosts_sync (mirror.yml does), or set mirror_source_ip_advertising: true"),
    (r"SaslAuthenticationException|Authentication failed|LoginException|GSSException|Cannot locate KDC",
     "the cluster refused MirrorMaker's login", "check kafka_sasl_* / the keytab and principal, and the JAAS file in mirrormaker2_config_dir"),
    (r"SSLHandshakeException|PKIX path building failed|SslAuthenticationException",
     "the TLS handshake failed", "check the truststore/CA (kafka_ssl_cafile or ssl_truststore_location) and the brokers' certificates"),
    (r"(Topic|Cluster|Group|TransactionalId)AuthorizationException|Not authorized",
     "MirrorMaker's principal lacks an ACL (Ranger on ESP clusters)",
     "grant it Describe/Read on the source, Create/Write/Describe on the target topics and its internal topics"),
    (r"Replication factor: \d+ larger than available brokers|InvalidReplicationFactorException",
     "an internal topic's replication factor is larger than the cluster", "mirrormaker2_internal_replication_factor: auto (sized to the cluster)"),
    (r"NotEnoughReplicas|min\.insync\.replicas",
     "writes need more in-sync replicas than an internal topic has", "raise the internal topics' replication factor above the cluster's min.insync.replicas"),
    (r"BindException|Address already in use",
     "MirrorMaker's REST listener's port is taken", "free the port or change mirrormaker2_rest_listeners"),
    (r"Permission denied|AccessDeniedException",
     "a file MirrorMaker reads or writes is not the service user's", "check the owner of mirrormaker2_config_dir, its log directory and the Kafka home"),
    (r"ConfigException|Invalid value .* for configuration|Missing required configuration",
     "a property MirrorMaker read is invalid", "fix the property the line names (mirrormaker2_properties or the flow's options)"),
    # Its offset-syncs producer on a topic that is gone (deleted, or never created: MirrorSourceConnector creates it only when
    # it starts); a source that does not auto-create topics answers this to every send, and no offset sync is written.
    (r"offset-syncs-(source|target)-producer.*UNKNOWN_TOPIC_OR_PARTITION",
     "the offset-syncs topic does not exist on the cluster that holds it, so MirrorMaker 2 writes no offset sync (records are "
     "still copied)", "restart MirrorMaker, which creates the topic when it starts (its log says why it could not, if it could not)"),
    # Before the generic timeout below: MirrorSourceConnector (and MirrorCheckpointConnector) derive their tasks from their
    # first listing of the source at start (Scheduler.execute waits admin.timeout.ms for it). Apache 4.3.1 was seen to recover
    # from such a timeout when the herder reconfigured the connector again; when nothing does, it has no tasks.
    (r"timed out running task: loading initial (set of topic-partitions|consumer groups)",
     "a MirrorMaker connector could not list the source cluster within admin.timeout.ms when it started, and may have run with "
     "no tasks since",
     "check that the source cluster answers promptly from this host (a broker restarting or overloaded while MirrorMaker "
     "started), then restart MirrorMaker"),
    (r"TimeoutException|Timed out waiting for a node assignment|disconnected|Connection refused|Connection to node -?\d+ .* could not be established",
     "a cluster did not answer", "check that this host reaches every broker's advertised address (the preflight checks it)"),
)


def start_failure(text):
    """{cause, fix, line} for the newest line of `text` matching a known failure, else a generic answer."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in reversed(lines):
        for pattern, cause, fix in KNOWN_FAILURES:
            if re.search(pattern, line):
                return {"cause": cause, "fix": fix, "line": line[:500]}
    last_error = next((line for line in reversed(lines) if re.search(r"\b(ERROR|FATAL|Exception|Error:)", line)), None)
    return {"cause": "not recognised from the log" if lines else "MirrorMaker wrote nothing before it stopped",
            "fix": "read the log lines below" if lines else "run the service's command by hand as the service user to see what it prints",
            "line": (last_error or "")[:500]}
