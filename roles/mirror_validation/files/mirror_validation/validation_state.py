# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The incremental mode's state file: per partition pair, the source and target offsets up to which a passed run proved
the copy complete, and the last record below each (offset and fingerprint), by which a later run recognises the same log.

It lives where the driver runs (the MirrorMaker host: the role runs Spark in client mode). A file that cannot be parsed
as this state is not trusted at all: the run validates in full, says so, and a pass replaces the file. One that cannot
be read (permissions, an I/O error) stops the run before it reads Kafka: it could not be replaced either.
"""
from __future__ import annotations

import json
import os
import tempfile

from .errors import ValidationUnavailable

FORMAT = "kafkaops.mirror validation state 1"
# Offsets below a range's end searched for its last record: control records of transactions (MirrorMaker 2's exactly-once
# mode, 3.5+) and compaction leave offsets without one.
LAST_RECORD_LOOKBACK = 16


def _partition_ok(entry):
    if not isinstance(entry, dict):
        return False
    offsets_ok = all(isinstance(entry.get(name), int) and entry[name] >= 0 for name in ("source_offset", "target_offset"))
    lasts_ok = all(entry.get(name) is None or (isinstance(entry[name], list) and len(entry[name]) == 2 and isinstance(entry[name][0], int)
                                               and isinstance(entry[name][1], str))
                   for name in ("source_last", "target_last"))
    return offsets_ok and lasts_ok


def _topic_ok(entry):
    return (isinstance(entry, dict) and isinstance(entry.get("target_topic"), str) and isinstance(entry.get("run"), str)
            and isinstance(entry.get("validated_at"), str) and isinstance(entry.get("partitions"), dict)
            and all(key.isdigit() and _partition_ok(value) for key, value in entry["partitions"].items()))


def load(path):
    """(topics, warning): {source topic: entry} of the state file at `path` ({} when there is none yet) and, when the file
    is not valid state, why (its offsets are then not used). ValidationUnavailable when the file cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as error:
        raise ValidationUnavailable("state_file %s cannot be read: %s; fix its permissions or point state_file elsewhere" % (path, error)) from None
    try:
        state = json.loads(text)
    except ValueError as error:
        return {}, "state_file %s is not JSON (%s): every partition validated in full, the file is replaced after a pass" % (path, error)
    if not isinstance(state, dict) or state.get("format") != FORMAT or not isinstance(state.get("topics"), dict) \
            or not all(_topic_ok(entry) for entry in state["topics"].values()):
        return {}, ("state_file %s does not hold this job's state (%r): every partition validated in full, the file is replaced"
                    " after a pass" % (path, FORMAT))
    return state["topics"], None


def stored_partition(topics, source_topic, target_topic, partition):
    """The stored entry of one partition pair, or None when the state has none (or names another target topic)."""
    topic = topics.get(source_topic)
    if topic is None or topic["target_topic"] != target_topic:
        return None
    return topic["partitions"].get(str(partition))


def save(path, previous, validated):
    """Write the state: `validated` ({source topic: entry}, this run's) over `previous` (the topics this run did not
    validate keep their entries). Written to a temporary file beside `path` and renamed onto it, so that a reader (the next
    run, after a crash of this one) sees the old state or the new one, never a part."""
    topics = dict(previous)
    topics.update(validated)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".part", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump({"format": FORMAT, "topics": topics}, stream, indent=1, sort_keys=True)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(partial, path)
    except BaseException:
        os.unlink(partial)
        raise


def topic_entry(target_topic, run, validated_at, partitions):
    """The state of one topic pair; `partitions`: {partition: (source offset, target offset, source last, target last)}, a
    last record being [offset, fingerprint in hex] or None."""
    return {"target_topic": target_topic, "run": run, "validated_at": validated_at,
            "partitions": {str(partition): {"source_offset": source, "target_offset": target, "source_last": source_last,
                                            "target_last": target_last}
                           for partition, (source, target, source_last, target_last) in sorted(partitions.items())}}
