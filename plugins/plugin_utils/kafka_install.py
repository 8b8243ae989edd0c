# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kafka version of an installation, read from the names of the jars in its libs/ directory.

Kafka's scripts put every jar of `<kafka home>/libs` on the class path, so those jars are the version
that runs. Apache releases name them `kafka-clients-3.9.0.jar` and `kafka_2.13-3.9.0.jar`; vendor
builds append their own numbers after the Kafka version (HDP/HDInsight `kafka-clients-2.4.1.5.0.3.9-1.jar`
style, Cloudera `kafka-clients-2.5.0.7.1.7.0-551.jar`). Confluent Platform's `-ccs`/`-ce` jars carry the
Confluent version instead (`kafka-clients-7.5.0-ccs.jar` is Kafka 3.5), so they are refused, not guessed.
"""
from __future__ import annotations

import posixpath
import re

# Releases are x.y.z; a bare x.y (never seen in a release) is read as x.y.0 rather than refused.
CLIENTS_JAR = re.compile(r"^kafka-clients-(\d+\.\d+(?:\.\d+)?)(?:[.-][^/]*)?\.jar$")
SERVER_JAR = re.compile(r"^kafka_\d+\.\d+-(\d+\.\d+(?:\.\d+)?)(?:[.-][^/]*)?\.jar$")
CONFLUENT_JAR = re.compile(r"-(?:ccs|ce)(?:[.-][^/]*)?\.jar$")


class KafkaInstallError(ValueError):
    """The jar names do not tell one Kafka version."""


def version_from_jars(paths, kafka_home, home_variable, version_variable):
    """The `x.y.z` Kafka version of the jars at `paths` (kafka-clients first, else the kafka_<scala> server jar).

    The error messages name `home_variable` (where `kafka_home` came from) and `version_variable` (which skips detection).
    """
    names = sorted(posixpath.basename(str(path)) for path in paths or [])
    libs = posixpath.join(str(kafka_home), "libs")
    confluent = [name for name in names if CONFLUENT_JAR.search(name)]
    if confluent:
        raise KafkaInstallError(
            "%s holds Confluent Platform jars (%s), whose numbers are Confluent versions, not Apache Kafka ones: "
            "set %s to the Apache Kafka version of that Confluent release (e.g. 3.5 for Confluent 7.5)" % (libs, ", ".join(confluent), version_variable))
    for pattern in (CLIENTS_JAR, SERVER_JAR):
        found = {}
        for name in names:
            match = pattern.match(name)
            if match:
                found.setdefault(match.group(1), []).append(name)
        if len(found) > 1:
            raise KafkaInstallError(
                "%s holds jars of several Kafka versions (%s): the class path would mix them; remove the stale ones, "
                "or set %s" % (libs, "; ".join("%s: %s" % (version, ", ".join(jars)) for version, jars in sorted(found.items())), version_variable))
        if found:
            return next(iter(found))
    raise KafkaInstallError(
        "no kafka-clients-<version>.jar or kafka_<scala>-<version>.jar in %s, so the Kafka version that runs MirrorMaker cannot be "
        "detected: point %s at the Kafka installation (the directory holding bin/ and libs/), or set %s (e.g. \"2.4.1\")"
        % (libs, home_variable, version_variable))
