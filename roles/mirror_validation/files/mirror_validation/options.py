# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job's options: JobOptions is their one table (name, type, default, help), read from the configuration file the
role writes (--config) and from the command line (cli.py), both made from it.

The job owns the defaults, not the role: it also runs without the role (by hand, the tests, bench/validation.py), and
a default kept here is the same for every caller. The role hands over only what its user set (vars/main.yml).
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import MISSING, dataclass, field, fields
from typing import Optional, Union, get_type_hints

from .connection import Connection, secret_env_var
from .kafka_reader import CLIENTS
from .mirrormaker1 import ENGINES, MM1
from .naming import POLICIES, FlowNames, parse_release

MODES = ("full", "incremental", "bounded")
SIDES = ("source", "target")


def _option(help_text, default=MISSING, choices=None, secret=False):
    """A field of the table: `help_text` for --help and the role's documentation; `secret`: never on the command line."""
    # Called only in JobOptions' body, where @dataclass reads the field it returns (pylint cannot see that).
    return field(default=default, metadata={"help": help_text, "choices": choices, "secret": secret})  # pylint: disable=invalid-field-call


@dataclass
class JobOptions:
    source: Connection = _option("the source cluster: an object of the Kafka modules' connection options (bootstrap_servers, ...)")
    target: Connection = _option("the target cluster, as source")
    topics: str = _option("regular expression (full match) of source topics to validate")
    source_alias: str = _option("MM2 alias of the source cluster (prefix of remote topics)")
    exclude: Optional[str] = _option("regular expression (full match) of source topics to leave out", None)
    target_alias: Optional[str] = _option("MM2 alias of the target cluster; enables the offset-sync anchor check", None)
    replication_policy: str = _option("MM2 replication policy", "default", POLICIES)
    replication_policy_separator: str = _option("replication.policy.separator", ".")
    offset_syncs_topic_location: str = _option("offset-syncs.topic.location", "source", ("source", "target"))
    mirrormaker_version: Optional[str] = _option(
        "Kafka release that runs MirrorMaker 2 (2.4.1, 3.9): names its internal topics as that release does"
        " (replication.policy.separator in them from 3.1, KIP-690); unset: the newest release's rules", None)
    internal_topic_separator: bool = _option(
        "replication.policy.internal.topic.separator.enabled (3.5.2+, KAFKA-15102): false puts '.' back in internal topic names", True)
    catch_up_timeout: float = _option("seconds to wait for the target to catch up", 300)
    catch_up_interval: float = _option("seconds between polls of the target end offsets", 5)
    max_duplicate_ratio: float = _option("duplicates per source record tolerated per topic (MM2 is at-least-once)", 0.01)
    slice_records: int = _option("offsets per read range of MM2's internal topics", 250000)
    task_records: int = _option(
        "offsets per Spark task: partition pairs (and ranges of MM2's internal topics) are packed together up to this, and a"
        " larger partition is cut into ranges of about this size at MM2's offset syncs (0: slice_records)", 1000000)
    window_records: int = _option(
        "records per side that wait in a task for their counterpart on the other side; a partition with records that waited"
        " longer is read again whole, those records waiting outside the window (0: no limit)", 100000)
    client: str = _option("Kafka client; auto prefers confluent-kafka", "auto", CLIENTS)
    receive_max_bytes: Optional[int] = _option(
        "largest broker response the client accepts (0 or unset: the client's default); a fetch asks for 50 MiB at most", None)
    read_timeout: float = _option("seconds without progress before a read fails", 30)
    sample_limit: int = _option("offsets kept per defect kind and partition", 10)
    report: Optional[str] = _option("write the JSON report here", None)
    html: Optional[str] = _option("write the HTML report here", None)
    topic_drift_file: Optional[str] = _option(
        "JSON result of kafkaops.mirror.kafka_mirror_topic_drift_info to include in the report; its errors count as defects", None)
    engine: str = _option(
        "the MirrorMaker whose mirror is validated: mm2 compares partition by partition and checks MM2's offset syncs and"
        " checkpoints; mm1 (kafka.tools.MirrorMaker) keeps topic names and partitions again by key, so records are matched"
        " per topic across partitions by fingerprint and their order checked per key", "mm2", ENGINES)
    mode: str = _option(
        "full: every record; incremental: per partition only what was written since the offsets the last passed incremental run"
        " validated (kept in state_file), in full where there are none or they are stale; bounded: a sample of partitions"
        " (sample_partitions), a first look that the report says is not a full validation", "full", MODES)
    state_file: Optional[str] = _option(
        "incremental: JSON file of the offsets validated per partition pair, read at the start and replaced after a passed run", None)
    sample_partitions: Optional[int] = _option(
        "bounded: partitions checked per topic, spread evenly over its partitions; the report lists the others as not checked", None)

    def flow_names(self, with_target=True):
        """The flow's names (naming.FlowNames) for the MirrorMaker release; ValueError for what that release cannot do."""
        return FlowNames(self.source_alias, self.target_alias if with_target else None, self.replication_policy,
                         self.replication_policy_separator, self.offset_syncs_topic_location, parse_release(self.mirrormaker_version),
                         self.internal_topic_separator)

    def naming_rules(self):
        """What the report says about the names it looked for."""
        policy = self.flow_names(with_target=False).policy
        release = ("MirrorMaker of Kafka %s" % self.mirrormaker_version if self.mirrormaker_version
                   else "the newest MirrorMaker release (no mirrormaker_version)")
        return "internal topics named as %s does: separator %r in their names" % (release, policy.internal_separator)


@dataclass(frozen=True)
class Setting:
    """One row of a table (JobOptions or Connection) as the command line and the configuration file read it."""

    name: str
    kind: type  # str, int, float, bool or Connection
    default: object  # dataclasses.MISSING: required
    help: str
    choices: Optional[tuple]
    secret: bool
    flag: str  # on the command line: --flag, after --source- or --target- for a connection's


def settings(table):
    """The rows of `table`, a dataclass of this package whose fields say their type and, in their metadata, their help."""
    hints = get_type_hints(table)
    rows = []
    for item in fields(table):
        kind = hints[item.name]
        if getattr(kind, "__origin__", None) is Union:  # Optional[X]: X, None meaning unset
            kind = next(arg for arg in kind.__args__ if arg is not type(None))
        rows.append(Setting(item.name, kind, item.default, item.metadata.get("help", ""), item.metadata.get("choices"),
                            item.metadata.get("secret", False), item.metadata.get("flag", item.name.replace("_", "-"))))
    return rows


_KINDS = {str: "text", int: "an integer", float: "a number", bool: "true or false"}


def _value(setting, value, where):
    """`value` as `setting` wants it. Text is read as a number or a truth value: Ansible's extra variables arrive as text."""
    if value is None or (value == "" and setting.default is None):
        return None  # an empty text is how the role says "unset" (its defaults for the aliases and the exclusion)
    kind = setting.kind
    if kind is bool:
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, bool):
            return value
    elif kind is str:
        if isinstance(value, list):  # bootstrap_servers as the Kafka modules take it
            return ",".join(str(item) for item in value)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
    elif kind in (int, float) and not isinstance(value, bool):
        try:
            return kind(value)
        except (TypeError, ValueError):
            pass
    # A password's value is never repeated: the message reaches Ansible's output.
    got = "a value of type %s" % type(value).__name__ if setting.secret else repr(value)
    raise ValueError("%s%s must be %s, got %s" % (where, setting.name, _KINDS[kind], got))


def _fill(table, given, where, extra=None):
    """`table` made from the mapping `given`: its keys checked, values converted, missing ones from the defaults."""
    rows = settings(table)
    unknown = sorted(set(given) - {row.name for row in rows})
    if unknown:
        raise ValueError("%sunknown option(s) %s; options are %s" % (where, ", ".join(unknown), ", ".join(row.name for row in rows)))
    values = dict(extra or {})
    missing = []
    for row in rows:
        if row.name in values:
            continue
        if row.name in given:
            values[row.name] = _value(row, given[row.name], where)
            if row.choices and values[row.name] is not None and values[row.name] not in row.choices:
                raise ValueError("%s%s must be one of %s, got %r" % (where, row.name, ", ".join(row.choices), values[row.name]))
        elif row.default is MISSING:
            missing.append(row.name)
    if missing:
        raise ValueError("%smissing option(s) %s" % (where, ", ".join(missing)))
    return table(**values)


# The Kafka modules' connection options the job has no use for: its reads time out by read_timeout, and both clients
# find the brokers' API versions themselves. The role hands the inventory's connection whole.
IGNORED_CONNECTION_OPTIONS = ("request_timeout_ms", "api_version")
# Connection fields that are one option of the job for both sides, not a setting of a side.
JOB_WIDE = ("receive_max_bytes",)


def _connection(side, given, environ, receive_max_bytes):
    """The Connection of `side` from its object of the configuration, its secrets from `environ` when the object has none."""
    if not isinstance(given, dict):
        raise ValueError("%s must be an object of connection options, got %r" % (side, type(given).__name__))
    given = {key: value for key, value in given.items() if key not in IGNORED_CONNECTION_OPTIONS}
    wide = sorted(set(given) & set(JOB_WIDE))
    if wide:
        raise ValueError("%s.%s: an option of the job for both sides, not of one connection" % (side, ", ".join(wide)))
    for row in settings(Connection):
        if row.secret and given.get(row.name) is None and environ.get(secret_env_var(side, row.name)) is not None:
            given[row.name] = environ[secret_env_var(side, row.name)]
    return _fill(Connection, given, "%s." % side, {"receive_max_bytes": receive_max_bytes or None})


def problems(options):
    """What is wrong with values of the right type."""
    found = []
    if options.max_duplicate_ratio < 0:
        found.append("max_duplicate_ratio must be >= 0")
    if options.slice_records < 1 or options.task_records < 0 or options.window_records < 0:
        found.append("slice_records must be >= 1, task_records and window_records >= 0")
    if options.catch_up_timeout < 0 or options.catch_up_interval <= 0:
        found.append("catch_up_timeout must be >= 0 and catch_up_interval > 0")
    if options.mode == "incremental" and not options.state_file:
        found.append("state_file is required with mode incremental (where the validated offsets are kept)")
    if options.mode != "incremental" and options.state_file:
        found.append("state_file is used by mode incremental only, got mode %s" % options.mode)
    if options.mode == "bounded" and (options.sample_partitions is None or options.sample_partitions < 1):
        found.append("sample_partitions must be >= 1 with mode bounded, got %r" % options.sample_partitions)
    if options.mode != "bounded" and options.sample_partitions is not None:
        found.append("sample_partitions is used by mode bounded only, got mode %s" % options.mode)
    if options.engine == MM1 and options.mode != "full":
        found.append("mode %s is not implemented for engine mm1 (MirrorMaker 1): its ranges are per partition pair, and MirrorMaker 1"
                     " does not keep partitions; validate a MirrorMaker 1 mirror with mode full" % options.mode)
    if options.engine == MM1 and options.topic_drift_file:
        found.append("topic_drift_file is not used with engine mm1: the drift's rules are MirrorMaker 2's (partition for partition)")
    return found


def job_options(given, environ=None):
    """JobOptions from the mapping `given` (the configuration, the command line's options over it); ValueError says what is wrong.
    The passwords the connections do not hold come from `environ` (default os.environ): see connection.secret_env_var."""
    environ = os.environ if environ is None else environ
    receive_max_bytes = _value(next(row for row in settings(JobOptions) if row.name == "receive_max_bytes"),
                               given.get("receive_max_bytes"), "")
    connections = {side: _connection(side, given[side], environ, receive_max_bytes) for side in SIDES if side in given}
    options = _fill(JobOptions, given, "", connections)
    found = problems(options)
    if found:
        raise ValueError("; ".join(found))
    options.flow_names()  # a release that cannot run these settings (identity before 3.0, syncs on the target before 3.0) stops here
    return options


def read_json(path, option):
    """The JSON object in the file at `path`, given as `option` (the configuration, the topic drift); ValueError when it
    holds none."""
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError) as error:
        raise ValueError("%s %s cannot be read as JSON: %s" % (option, path, error)) from None
    if not isinstance(value, dict):
        raise ValueError("%s %s holds no JSON object" % (option, path))
    return value


def main(stdin=None):
    """`python -m mirror_validation.options`: the configuration on standard input checked as the job will read it, so that the
    role refuses bad values on the controller before it writes anything for the job (standard library only: no Spark, no
    Kafka client). Exit 0, or 2 with what is wrong; the passwords are in the configuration, never in the message."""
    try:
        job_options(json.load(stdin or sys.stdin), environ={})
    except ValueError as error:  # json.JSONDecodeError included
        print("mirror validation: bad settings: %s" % error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
