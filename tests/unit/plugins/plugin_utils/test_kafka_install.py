# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kafka version of an installation from its libs/ jar names, and the filter the mirrormaker2 role calls."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.filter.kafka_version_from_jars import kafka_version_from_jars
from ansible_collections.kafkaops.mirror.plugins.plugin_utils.kafka_install import KafkaInstallError, version_from_jars

HOME = "/usr/hdp/current/kafka-broker"
VARIABLES = ("mirrormaker2_kafka_home", "mirrormaker2_kafka_version")


def detect(*names):
    return version_from_jars(["%s/libs/%s" % (HOME, name) for name in names], HOME, *VARIABLES)


def failure(*names):
    with pytest.raises(KafkaInstallError) as info:
        detect(*names)
    return str(info.value)


@pytest.mark.parametrize("names,version", [
    (["kafka-clients-3.9.0.jar", "kafka_2.13-3.9.0.jar", "connect-mirror-3.9.0.jar"], "3.9.0"),
    (["kafka-clients-2.4.1.jar", "kafka_2.12-2.4.1.jar", "kafka_2.12-2.4.1-test.jar", "kafka_2.12-2.4.1-sources.jar"], "2.4.1"),
    # Vendor builds append their own numbers after the Kafka version (HDP style, Cloudera style).
    (["kafka-clients-2.0.0.3.1.0.0-78.jar", "kafka_2.11-2.0.0.3.1.0.0-78.jar"], "2.0.0"),
    (["kafka-clients-2.5.0.7.1.7.0-551.jar"], "2.5.0"),
    # Only the server jar: its name carries the Scala version first.
    (["kafka_2.12-2.4.1.jar"], "2.4.1"),
    (["kafka-clients-3.9.jar"], "3.9"),
])
def test_version_read_from_jar_names(names, version):
    assert detect(*names) == version


def test_no_jar_names_the_libs_directory_and_both_variables():
    message = failure()
    assert HOME + "/libs" in message
    assert "mirrormaker2_kafka_home" in message and "mirrormaker2_kafka_version" in message


def test_jars_of_two_versions_are_refused_with_both_listed():
    message = failure("kafka-clients-2.4.1.jar", "kafka-clients-3.9.0.jar")
    assert "2.4.1: kafka-clients-2.4.1.jar" in message and "3.9.0: kafka-clients-3.9.0.jar" in message


def test_confluent_jars_are_refused_not_guessed():
    message = failure("kafka-clients-7.5.0-ccs.jar", "kafka_2.13-7.5.0-ccs.jar")
    assert "Confluent" in message and "set mirrormaker2_kafka_version" in message


def test_filter_turns_errors_into_filter_errors():
    assert kafka_version_from_jars([HOME + "/libs/kafka-clients-2.4.1.jar"], HOME, *VARIABLES) == "2.4.1"
    with pytest.raises(AnsibleFilterError, match="no kafka-clients"):
        kafka_version_from_jars([], HOME, *VARIABLES)
