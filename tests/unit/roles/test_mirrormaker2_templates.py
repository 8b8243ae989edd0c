# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirrormaker2 role's service and logging templates: a unit systemd 237 (Ubuntu 18.04, HDInsight 5.x) accepts, and a
rolling file appender in both logging systems. Rendered with plain Jinja2 and the few filters they use."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess

import jinja2
import pytest
import yaml

from ansible_collections.kafkaops.mirror.plugins.plugin_utils.mm2_logs import start_failure
from tests.support.checkout import REPO

ROLE = REPO / "roles" / "mirrormaker2"
# [Unit]/[Service]/[Install] directives the unit may use: each exists in systemd 237 with the values rendered here
# (systemd.unit(5), systemd.service(5), systemd.exec(5), systemd.kill(5) of v237).
SYSTEMD_237 = {"Description", "Documentation", "After", "Wants", "Type", "User", "WorkingDirectory", "Environment", "ExecStart",
               "StandardOutput", "StandardError", "SyslogIdentifier", "Restart", "RestartSec", "SuccessExitStatus", "TimeoutStopSec",
               "LimitNOFILE", "WantedBy"}
# StandardOutput/StandardError values of 237 (file: came in 236 but append: in 240; truncate: in 248).
OUTPUT_237 = {"inherit", "null", "tty", "journal", "syslog", "kmsg", "journal+console", "syslog+console", "kmsg+console", "socket"}


def render(name, **overrides):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(ROLE / "templates")), undefined=jinja2.StrictUndefined,
                             trim_blocks=True)
    env.filters.update(quote=shlex.quote, to_json=json.dumps, zip=lambda a, *b: list(zip(a, *b)),
                       bool=lambda value: value if isinstance(value, bool) else str(value).lower() in ('1', 'true', 'yes', 'on'))
    values = dict(yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()))
    values.update(ansible_managed="managed", mirrormaker2_config_dir="/etc/kafka-mirrormaker2", mirrormaker2_log_dir="/var/log/mm2",
                  mirrormaker2_flows=[{"source": "a", "target": "b"}], _mirrormaker2_log_file="/var/log/mm2/kafka-mirrormaker2.log",
                  _mirrormaker2_app_log_file="/var/log/mm2/mirrormaker.log",
                  _mirrormaker2_environment={"KAFKA_HEAP_OPTS": "-Xmx1g", "KAFKA_LOG4J_OPTS": "-Dlog4j.configuration=file:/x"},
                  _mirrormaker2_command=["/opt/kafka/bin/connect-mirror-maker.sh", "/etc/kafka-mirrormaker2/connect-mirror-maker.properties"])
    values.update(overrides)
    return env.get_template(name).render(**values)


def directives(unit):
    return [tuple(line.split("=", 1)) for line in unit.splitlines() if "=" in line and not line.startswith(("#", ";"))]


def test_systemd_unit_uses_only_what_systemd_237_knows():
    unit = render("mirrormaker2.service.j2")
    used = directives(unit)
    names = {name for name, _value in used}
    assert names <= SYSTEMD_237, names - SYSTEMD_237
    outputs = {value for name, value in used if name in ("StandardOutput", "StandardError")}
    assert outputs <= OUTPUT_237, outputs
    assert "append:" not in unit and "file:" not in unit.split("[Service]")[1].split("Environment")[0]


def systemd_verify(tmp_path, script_name, *args):
    """`systemd-analyze verify` of the unit rendered for `script_name` (an executable stand-in) with `args`: what it says
    of the unit, and whether it passed."""
    script = tmp_path / "bin" / script_name
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    unit = tmp_path / "kafka-mirrormaker2.service"
    unit.write_text(render("mirrormaker2.service.j2", mirrormaker2_user="root", mirrormaker2_config_dir=str(tmp_path),
                           _mirrormaker2_command=[str(script), *args]))
    verify = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, check=False)
    problems = [line for line in verify.stderr.splitlines() if str(unit) in line or "kafka-mirrormaker2" in line or "escape" in line]
    return verify.returncode == 0 and not problems, verify.stderr


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_unit_passes_the_current_systemd(tmp_path):
    passed, said = systemd_verify(tmp_path, "connect-mirror-maker.sh", str(tmp_path / "x.properties"))
    assert passed, said


MM1_INCLUDE = r"(?!(?:__.*|.*[-.]internal)(?!.))(?:(?:orders\..*)|(?:pay$))"


def systemd_words(exec_start):
    """ExecStart's words as systemd.service(5) says it reads them: quoted words, C escapes (\\\\ is one backslash), `$$` one
    dollar and `%%` one percent sign (specifiers); an unknown escape or a lone `$`/`%` is a failure here."""
    words, word, quote, i = [], None, None, 0
    while i < len(exec_start):
        char = exec_start[i]
        if quote is None and char == " ":
            if word is not None:
                words.append(word)
            word, i = None, i + 1
            continue
        word = word or ""
        if quote is None and char in "'\"":
            quote, i = char, i + 1
        elif char == quote:
            quote, i = None, i + 1
        elif char == "\\":
            nxt = exec_start[i + 1]
            assert nxt in "\\'\"", f"unknown escape \\{nxt} in {exec_start!r}"
            word, i = word + nxt, i + 2
        elif char in "$%":
            assert exec_start[i + 1] == char, f"a lone {char} in {exec_start!r}"
            word, i = word + char, i + 2
        else:
            word, i = word + char, i + 1
    if word is not None:
        words.append(word)
    return words


def test_systemd_command_line_keeps_a_mirrormaker_1_include_list_intact():
    command = ["/opt/kafka/bin/kafka-mirror-maker.sh", "--whitelist", MM1_INCLUDE, "--num.streams", "2"]
    unit = render("mirrormaker2.service.j2", _mirrormaker2_command=command)
    (exec_start,) = [value for name, value in directives(unit) if name == "ExecStart"]
    assert systemd_words(exec_start) == command


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_accepts_a_mirrormaker_1_include_list(tmp_path):
    passed, said = systemd_verify(tmp_path, "kafka-mirror-maker.sh", "--whitelist", MM1_INCLUDE)
    assert passed, said


def test_log4j_1_rolls_the_file_with_the_role_variables():
    text = render("log4j.properties.j2", mirrormaker2_log_max_file_size_mb=64, mirrormaker2_log_max_files=7)
    props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    assert props["log4j.rootLogger"] == "INFO, file"
    assert props["log4j.appender.file"] == "org.apache.log4j.RollingFileAppender"
    assert props["log4j.appender.file.File"] == "/var/log/mm2/mirrormaker.log"
    assert props["log4j.appender.file.MaxFileSize"] == "64MB" and props["log4j.appender.file.MaxBackupIndex"] == "7"
    assert "ConsoleAppender" not in text


def test_log4j2_rolls_the_file_with_the_role_variables():
    config = yaml.safe_load(render("log4j2.yaml.j2", mirrormaker2_log_max_file_size_mb=64, mirrormaker2_log_max_files=7))["Configuration"]
    rolling = config["Appenders"]["RollingFile"]
    assert rolling["fileName"] == "/var/log/mm2/mirrormaker.log" and rolling["filePattern"] == "/var/log/mm2/mirrormaker.log.%i"
    assert rolling["Policies"]["SizeBasedTriggeringPolicy"]["size"] == "64 MB" and rolling["DefaultRolloverStrategy"]["max"] == 7
    assert config["Loggers"]["Root"]["AppenderRef"] == [{"ref": "FILE"}] and "Console" not in config["Appenders"]


def test_supervisor_keeps_the_console_apart_from_the_log():
    text = render("supervisor-program.conf.j2", mirrormaker2_log_max_file_size_mb=64, mirrormaker2_log_max_files=7)
    assert re.search(r"^stdout_logfile=/var/log/mm2/kafka-mirrormaker2.log$", text, re.M)
    assert "stdout_logfile_maxbytes=64MB" in text and "stdout_logfile_backups=7" in text and "mirrormaker.log\n" not in text.split("; ")[0]


@pytest.mark.parametrize("log, cause", [
    ("Error: Could not find or load main class org.apache.kafka.connect.mirror.MirrorMaker", "lacks MirrorMaker's classes"),
    ("[2024] ERROR Stopping due to error (org.apache.kafka.connect.mirror.MirrorMaker)\n"
     "org.apache.kafka.common.errors.SaslAuthenticationException: Authentication failed during authentication", "refused MirrorMaker's login"),
    ("java.net.UnknownHostException: wn0-kafkap.p50.internal.cloudapp.net", "does not resolve"),
    ("Caused by: org.apache.kafka.common.errors.InvalidReplicationFactorException: Replication factor: 3 larger than available brokers: 1",
     "replication factor is larger"),
    ("java.lang.OutOfMemoryError: Java heap space", "ran out of heap"),
    # Not the generic "a cluster did not answer": the connector runs on, without tasks (Apache 4.3.1's Scheduler line).
    ("[2026-11-29 00:00:01,000] ERROR Scheduler for MirrorSourceConnector timed out running task: loading initial set of "
     "topic-partitions (org.apache.kafka.connect.mirror.Scheduler)", "may have run with no tasks since"),
    ("ERROR Scheduler for MirrorCheckpointConnector timed out running task: loading initial consumer groups (x)", "no tasks"),
    # Apache 4.3.1 after its offset-syncs topic was deleted on a 3.9.2 source (auto-create off): records copied, no sync.
    ("[2026-11-29 01:46:13,619] WARN [Producer clientId=primary->secondary|MirrorSourceConnector-0|offset-syncs-source-producer] The "
     "metadata response from the cluster reported a recoverable issue with correlation id 33 : "
     "{mm2-offset-syncs.secondary.internal=UNKNOWN_TOPIC_OR_PARTITION} (org.apache.kafka.clients.NetworkClient)", "offset-syncs topic does not exist"),
    ("Exception in thread main java.lang.UnsupportedClassVersionError: has been compiled by a more recent version", "older than"),
])
def test_start_failure_names_the_likely_cause(log, cause):
    found = start_failure("[2024] INFO starting\n" + log)
    assert cause in found["cause"] and found["line"] and found["fix"]


def test_start_failure_prefers_the_newest_known_line_and_says_when_nothing_is_known():
    found = start_failure("java.net.UnknownHostException: old\nINFO recovered\njava.lang.OutOfMemoryError: Java heap space")
    assert "heap" in found["cause"]
    assert start_failure("")["cause"] == "MirrorMaker wrote nothing before it stopped"
    assert start_failure("INFO a\nERROR something odd")["line"] == "ERROR something odd"


def test_reports_default_to_the_users_home_never_beside_the_playbook():
    defaults = (REPO / "roles" / "mirror_validation" / "defaults" / "main.yml").read_text()
    specs = (REPO / "roles" / "mirror_validation" / "meta" / "argument_specs.yml").read_text()
    line = next(line for line in defaults.splitlines() if line.startswith("mirror_validation_report_dir:"))
    assert "playbook_dir" not in line and "~/kafkaops-mirror-reports" in line
    assert "playbook_dir" not in specs.split("mirror_validation_report_dir:")[1].split("\n      mirror_validation_")[0].split("default:")[1]


def environment(**settings):
    """The role's _mirrormaker2_environment as Ansible templates it, from vars/main.yml and the defaults."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    # mirrormaker2_log_dir's default is itself a template (of mirrormaker2_config_dir), given here as Ansible resolves it.
    values = {**yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()), "_mirrormaker2_log4j_opts": "-Dlog4j.configuration=file:/x",
              "_mirrormaker2_kafka_opts": "", "mirrormaker2_log_dir": "/etc/kafka-mirrormaker2/logs", **settings}
    expression = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["_mirrormaker2_environment"]
    return Templar(loader=DataLoader(), variables=values).template(trust_as_template(expression))


def test_jvm_performance_options_set_only_when_given():
    unset = environment()
    assert unset == {"KAFKA_HEAP_OPTS": "-Xms1g -Xmx1g", "KAFKA_LOG4J_OPTS": "-Dlog4j.configuration=file:/x", "KAFKA_OPTS": "",
                     "LOG_DIR": "/etc/kafka-mirrormaker2/logs"}
    tuned = environment(mirrormaker2_jvm_performance_opts="-XX:+UseSerialGC")
    assert tuned == {**unset, "KAFKA_JVM_PERFORMANCE_OPTS": "-XX:+UseSerialGC"}
    program = render("supervisor-program.conf.j2", _mirrormaker2_environment=tuned)
    assert "KAFKA_JVM_PERFORMANCE_OPTS=" in program and "UseSerialGC" in program


def test_java_home_set_only_when_given():
    """mirrormaker2_java_home reaches the service as JAVA_HOME (which Kafka's launchers read before PATH); unset, the environment
    stays as it was, so a deployment that does not use it keeps its service file."""
    assert "JAVA_HOME" not in environment()
    java8 = environment(mirrormaker2_java_home="/usr/lib/jvm/temurin-8-jre-amd64")
    assert java8["JAVA_HOME"] == "/usr/lib/jvm/temurin-8-jre-amd64"
    unit = render("mirrormaker2.service.j2", _mirrormaker2_environment=java8)
    assert 'Environment="JAVA_HOME=/usr/lib/jvm/temurin-8-jre-amd64"' in unit
    assert "JAVA_HOME=\"/usr/lib/jvm/temurin-8-jre-amd64\"" in render("supervisor-program.conf.j2", _mirrormaker2_environment=java8)


# What the Prometheus JMX exporter matches rules against (`domain<key=value, ...><>attribute: value`), for MBeans of
# MirrorMaker 2 of 3.2.0 (MirrorMetrics, Connect's worker metrics): the metric each must become.
EXPORTER_NAMES = {
    "kafka.connect.mirror<type=MirrorSourceConnector, target=secondary, topic=primary.rk-orders, partition=2><>record-count: 40":
        ("kafka_mirrormaker2_source_record-count", {"target": "secondary", "topic": "primary.rk-orders", "partition": "2"}, None),
    "kafka.connect.mirror<type=MirrorSourceConnector, target=secondary, topic=a.b-c, partition=0><>replication-latency-ms-max: 12.0":
        ("kafka_mirrormaker2_source_replication-latency-ms-max", {"target": "secondary", "topic": "a.b-c", "partition": "0"}, None),
    "kafka.connect.mirror<type=MirrorCheckpointConnector, source=primary, target=secondary, group=app, topic=primary.t, partition=1>"
    "<>checkpoint-latency-ms: 3.0":
        ("kafka_mirrormaker2_checkpoint_checkpoint-latency-ms",
         {"source": "primary", "target": "secondary", "group": "app", "topic": "primary.t", "partition": "1"}, None),
    "kafka.connect<type=connector-metrics, connector=MirrorSourceConnector><>status: running":
        ("kafka_mirrormaker2_connector_status", {"connector": "MirrorSourceConnector", "status": "running"}, 1),
    "kafka.connect<type=connector-task-metrics, connector=MirrorSourceConnector, task=0><>status: failed":
        ("kafka_mirrormaker2_task_status", {"connector": "MirrorSourceConnector", "task": "0", "status": "failed"}, 1),
    "kafka.connect<type=connect-worker-metrics><>task-count: 3": ("kafka_mirrormaker2_worker_task-count", {}, None),
}


def test_metrics_rules_name_mirrormakers_mbeans():
    """The first rule that matches, as the exporter takes it (a pattern is not anchored: jmx_exporter compiles it into
    `^.*(?:<pattern>).*$`); its name and labels with the groups substituted (the exporter then turns '-' into '_')."""
    rules = yaml.safe_load(render("metrics.yml.j2"))["rules"]

    def substitute(text, match):
        return re.sub(r"\$(\d+)", lambda ref: match.group(int(ref.group(1))), text)

    for bean, (name, labels, value) in EXPORTER_NAMES.items():
        rule, match = next(((rule, found) for rule in rules for found in [re.match(f"^.*(?:{rule['pattern']}).*$", bean)] if found), (None, None))
        assert rule, bean
        got = (substitute(rule["name"], match), {key: substitute(text, match) for key, text in rule.get("labels", {}).items()}, rule.get("value"))
        assert got == (name, labels, value), bean


EXPORTER_VARS = dict(_mirrormaker2_exporter_command=["/opt/venv/bin/python", "/opt/exporter/kafka_mirror_exporter.py", "--config",
                                                     "/etc/kafka-mirrormaker2/exporter.json"],
                     _mirrormaker2_exporter_log_file="/var/log/mm2/kafka-mirror-exporter.log")
# Directives of systemd 237 the exporter's oneshot service and its timer use (systemd.service(5), systemd.timer(5) of v237).
EXPORTER_SYSTEMD_237 = SYSTEMD_237 | {"TimeoutStartSec", "OnBootSec", "OnUnitActiveSec", "AccuracySec"}


def test_exporter_units_use_only_what_systemd_237_knows():
    service, timer = (render(name, **EXPORTER_VARS) for name in ("exporter.service.j2", "exporter.timer.j2"))
    names = {name for name, _value in directives(service) + directives(timer)}
    assert names <= EXPORTER_SYSTEMD_237, names - EXPORTER_SYSTEMD_237
    (exec_start,) = [value for name, value in directives(service) if name == "ExecStart"]
    assert systemd_words(exec_start) == EXPORTER_VARS["_mirrormaker2_exporter_command"] + ["--once"]
    assert ("Type", "oneshot") in directives(service) and ("OnUnitActiveSec", "60") in directives(timer)


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_exporter_units_pass_the_current_systemd(tmp_path):
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    values = dict(EXPORTER_VARS, mirrormaker2_user="root", mirrormaker2_exporter_dir=str(tmp_path))
    values["_mirrormaker2_exporter_command"] = [str(script), "/opt/exporter/kafka_mirror_exporter.py", "--config", "/x.json"]
    for name in ("service", "timer"):
        (tmp_path / f"kafka-mirror-exporter.{name}").write_text(render(f"exporter.{name}.j2", **values))
    verify = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "kafka-mirror-exporter.timer"), str(tmp_path / "kafka-mirror-exporter.service")],
                            capture_output=True, text=True, check=False)
    problems = [line for line in verify.stderr.splitlines() if "kafka-mirror-exporter" in line]
    assert verify.returncode == 0 and not problems, verify.stderr


def test_exporter_program_runs_the_loop_as_the_service_user():
    program = render("exporter-program.conf.j2", mirrormaker2_user="kafka", **EXPORTER_VARS)
    lines = dict(line.split("=", 1) for line in program.splitlines() if "=" in line and not line.startswith(("#", ";")))
    assert lines["command"] == " ".join(EXPORTER_VARS["_mirrormaker2_exporter_command"]) and "--once" not in lines["command"]
    assert lines["user"] == "kafka" and lines["autorestart"] == "true"
    assert lines["stdout_logfile"] == "/var/log/mm2/kafka-mirror-exporter.log"


def test_exporter_configuration_is_what_the_exporter_loads():
    """exporter.json.j2 with two flows (one disabled) and a SASL connection: valid JSON the exporter accepts, each flow with
    kafka_mirror_status' options as tasks/flow_status.yml gives them."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.exporter import STATUS_TIMEOUT_S, flow_params, load_config
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.status import status_argument_spec

    sasl = {"bootstrap_servers": ["b:9092"], "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
            "sasl_plain_username": "u", "sasl_plain_password": 'p"w'}
    text = render("exporter.json.j2", mirrormaker2_kafka_version_resolved="3.2.0", mirrormaker2_exporter_listen="10.0.0.4:9406",
                  mirrormaker2_clusters=[{"alias": "a", "bootstrap_servers": "a:9092"}, {"alias": "b", "connection": sasl}],
                  mirrormaker2_flows=[{"source": "a", "target": "b", "topics": ["orders.*"], "groups": ["app"]},
                                      {"source": "b", "target": "a", "enabled": False}])
    config = load_config(text)
    assert config["textfile"] == "/var/lib/kafka-mirror-exporter/kafka_mirror.prom" and config["listen"] == "10.0.0.4:9406"
    assert config["interval"] == 60 and config["topic_drift"] is True
    (flow,) = config["flows"]
    params = flow_params(flow)
    # A cluster's bootstrap_servers as a string is split as the modules' argument spec splits it.
    assert params["source"]["bootstrap_servers"] == ["a:9092"] and params["sasl_plain_password"] == 'p"w'
    # The options the flow leaves out get kafka_mirror_status' defaults, as the module's argument spec fills them in (the
    # exporter's read timeout apart).
    module_input = dict({key: value for key, value in flow.items() if key != "target"}, **flow["target"])
    module_input["source"]["bootstrap_servers"] = ["a:9092"]
    module_input["bootstrap_servers"] = ["b:9092"]
    validated = ArgumentSpecValidator(status_argument_spec()).validate(module_input)
    assert not validated.error_messages
    assert dict(params, timeout=None) == dict(validated.validated_parameters, timeout=None)
    assert params["timeout"] == STATUS_TIMEOUT_S < status_argument_spec()["timeout"]["default"]
    assert (params["source_alias"], params["target_alias"], params["topics"], params["groups"], params["mirrormaker_version"]) == (
        "a", "b", ["orders.*"], ["app"], "3.2.0")
