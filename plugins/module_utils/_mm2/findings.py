# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Findings that more than one part of the collection reports, each with its one severity, and how a finding reads.

A finding is {severity, check, cluster, message, fix}; severity is error (MirrorMaker 2 cannot work as asked: nothing is
changed), warning (it works, with a risk the user should know) or info.
"""
from __future__ import annotations

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)


def finding(severity, check, cluster, message, fix=None):
    if severity not in SEVERITIES:
        raise ValueError("severity %r is not one of %s" % (severity, ", ".join(SEVERITIES)))
    return dict(severity=severity, check=check, cluster=cluster, message=message, fix=fix)


def finding_text(item, stop="."):
    """`message. Fix: fix.` as the modules' errors print it (the preflight table leaves out the final stop)."""
    return item["message"] + (". Fix: %s" % item["fix"] if item.get("fix") else "") + stop


def min_insync_findings(cluster, what, factor, min_insync_replicas):
    """A replication factor against the cluster's min.insync.replicas.

    Below it is an error: MirrorMaker 2 writes remote topics through Connect's producers with acks=all (and its internal
    topics with acks=all from Kafka 3.0, KIP-679), and the broker refuses every such write (NotEnoughReplicas), so
    replication stops at its first record. Equal to it (above 1) is a warning: one replica down stops the writes.
    """
    if factor is None or min_insync_replicas is None:
        return []
    factor, min_isr = int(factor), int(min_insync_replicas)
    if factor < min_isr:
        return [finding(ERROR, "min_insync_replicas", cluster,
                        "cluster %s: %s is %d, below min.insync.replicas %d: MirrorMaker writes with acks=all and they fail "
                        "(NotEnoughReplicas)" % (cluster, what, factor, min_isr),
                        "raise %s to at least %d, or lower min.insync.replicas" % (what, min_isr))]
    if factor == min_isr > 1:
        return [finding(WARNING, "min_insync_replicas", cluster,
                        "cluster %s: %s equals min.insync.replicas %d: with one replica down MirrorMaker's writes stop" % (cluster, what, min_isr))]
    return []
