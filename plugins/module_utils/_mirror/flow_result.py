# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of one read of a flow's health (module kafka_mirror_status), whichever MirrorMaker the flow runs: what
_mirror.status (MirrorMaker 2) and _mirror.mm1_status (MirrorMaker 1) return, and what the wait and the catch-up verdict read."""
from __future__ import annotations


def flow_result(source_alias, target_alias, partitions, topics, **details):
    """{flow, partitions, topics, lag_total, lag_max} and the reader's own `details` (heartbeats, checkpoints, problems, ...)."""
    lags = [p["lag"] for p in partitions]
    return dict({"flow": "%s->%s" % (source_alias, target_alias), "partitions": partitions, "topics": topics,
                 "lag_total": sum(lags), "lag_max": max(lags) if lags else 0}, **details)
