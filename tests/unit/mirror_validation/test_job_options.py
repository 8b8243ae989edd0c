# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job's options table (options.JobOptions) as the configuration file is read with it, and the role's side of it: each
option the role hands over has a role variable of its name, and its default is in one place, the role's or the job's."""
from __future__ import annotations

from dataclasses import MISSING, fields
from pathlib import Path

import pytest
import yaml

from mirror_validation.options import JobOptions, job_options

ROLE = Path(__file__).resolve().parents[3] / "roles" / "mirror_validation"
CONNECTION = {"bootstrap_servers": ["a:9092", "b:9092"]}
REQUIRED = {"source": CONNECTION, "target": CONNECTION, "topics": ".*", "source_alias": "primary"}


def role_yaml(path):
    return yaml.safe_load((ROLE / path).read_text())


def test_each_option_the_role_hands_over_is_a_role_variable_with_its_default_in_one_place():
    handed = role_yaml("vars/main.yml")["_mirror_validation_job_options"]
    specs = role_yaml("meta/argument_specs.yml")["argument_specs"]["main"]["options"]
    role_defaults = role_yaml("defaults/main.yml")
    table = {item.name: item for item in fields(JobOptions)}
    for name in handed:
        variable = "mirror_validation_" + name
        assert name in table and variable in specs, name
        # The role's default (from the inventory or the mirrormaker2 role) or the job's, never both.
        assert ("default" in specs[variable]) == (variable in role_defaults), variable
        if variable not in role_defaults:
            assert table[name].default is not MISSING, "%s: the job needs a default when the role has none" % name


def test_text_is_read_as_the_table_says_and_empty_text_is_unset():
    options = job_options(dict(REQUIRED, catch_up_timeout="60", slice_records="10", internal_topic_separator="false",
                               exclude="", target_alias=""), {})
    assert (options.catch_up_timeout, options.slice_records, options.internal_topic_separator) == (60.0, 10, False)
    assert (options.exclude, options.target_alias, options.source.bootstrap_servers) == (None, None, "a:9092,b:9092")
    assert (options.read_timeout, options.client) == (30, "auto")  # the job's defaults


@pytest.mark.parametrize("given, message", [
    (dict(REQUIRED, catch_up_timout=60), "unknown option.s. catch_up_timout"),
    ({"source": CONNECTION, "target": CONNECTION}, "missing option.s. topics, source_alias"),
    (dict(REQUIRED, slice_records="many"), "slice_records must be an integer, got 'many'"),
    (dict(REQUIRED, internal_topic_separator="no"), "internal_topic_separator must be true or false"),
    (dict(REQUIRED, client="librdkafka"), "client must be one of auto, confluent-kafka, kafka-python"),
    (dict(REQUIRED, catch_up_interval=0), "catch_up_interval > 0"),
    (dict(REQUIRED, source=dict(CONNECTION, sasl_plain_pasword="x")), "source.unknown option.s. sasl_plain_pasword"),
    (dict(REQUIRED, target=dict(CONNECTION, receive_max_bytes=1)), "target.receive_max_bytes: an option of the job"),
])
def test_what_the_job_cannot_read_is_refused_naming_it(given, message):
    with pytest.raises(ValueError, match=message):
        job_options(given, {})


def test_a_connection_takes_the_kafka_modules_options_and_its_passwords_from_the_environment_when_it_has_none():
    given = dict(REQUIRED, receive_max_bytes=1048576,
                 target=dict(CONNECTION, api_version="2.4.1", request_timeout_ms=30000, sasl_plain_username="mirror"))
    options = job_options(given, {"MIRROR_VALIDATION_TARGET_SASL_PASSWORD": "from-env"})
    assert (options.target.sasl_plain_username, options.target.sasl_plain_password) == ("mirror", "from-env")
    assert options.source.receive_max_bytes == options.target.receive_max_bytes == 1048576
