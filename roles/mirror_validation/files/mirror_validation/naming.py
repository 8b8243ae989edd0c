"""Topic names MirrorMaker 2 uses on the target cluster (DefaultReplicationPolicy / IdentityReplicationPolicy)."""
from __future__ import annotations

import re

POLICIES = ("default", "identity")

# MM2's own topics.exclude default plus its internal topics: never mirrored, never validated.
DEFAULT_EXCLUDE = r".*[\-\.]internal|.*\.replica|__.*|heartbeats|.*\.heartbeats|mm2-.*"


def remote_topic(topic, source_alias, policy="default", separator="."):
    """The name MM2 gives `topic` on the target."""
    if policy == "identity":
        return topic
    return "%s%s%s" % (source_alias, separator, topic)


def checkpoints_topic(source_alias):
    return "%s.checkpoints.internal" % source_alias


def offset_syncs_topic(target_alias):
    return "mm2-offset-syncs.%s.internal" % target_alias


def select_topics(names, include, exclude=None):
    """Source topics to validate: full-match `include`, minus full-match `exclude` and MM2's internal topics."""
    included = re.compile(include)
    excluded = [re.compile(DEFAULT_EXCLUDE)] + ([re.compile(exclude)] if exclude else [])
    return sorted(
        name for name in names
        if included.fullmatch(name) and not any(pattern.fullmatch(name) for pattern in excluded)
    )
