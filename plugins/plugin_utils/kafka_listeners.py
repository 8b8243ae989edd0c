# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A broker's `listeners` value: parse it, check every name against the security protocol map, bind it to all interfaces.

Kafka's rules (KafkaConfig / EndPoint.createEndPoint): `NAME://host:port` entries separated by commas; the name is a
listener name, which is its own security protocol unless `listener.security.protocol.map` maps it (e.g.
INTERNAL:SASL_PLAINTEXT); an empty host or 0.0.0.0 binds every interface; IPv6 hosts are in brackets.
Nothing here drops, adds or renames a listener.
"""
from __future__ import annotations

import re

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import SECURITY_PROTOCOLS

ALL_INTERFACES = "0.0.0.0"
_ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)://(?P<host>\[[^\]]*\]|[^:\[\]/]*):(?P<port>\d+)$")


class ListenersError(ValueError):
    pass


def protocol_map(text):
    """{listener name: security protocol} from a listener.security.protocol.map value (empty or None: {})."""
    mapping = {}
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, protocol = entry.partition(":")
        if not sep or not name.strip() or protocol.strip().upper() not in SECURITY_PROTOCOLS:
            raise ListenersError(f"listener.security.protocol.map entry {entry!r} is not NAME:PROTOCOL with PROTOCOL one of {', '.join(SECURITY_PROTOCOLS)}")
        mapping[name.strip().upper()] = protocol.strip().upper()
    return mapping


def parse(listeners, security_protocol_map=None):
    """[(name, host, port, protocol)] of a listeners value; errors name the entry and what is wrong with it."""
    mapping = protocol_map(security_protocol_map)
    entries = [entry.strip() for entry in (listeners or "").split(",") if entry.strip()]
    if not entries:
        raise ListenersError("listeners is empty: a broker needs at least one NAME://host:port")
    parsed, names = [], set()
    for entry in entries:
        match = _ENTRY.match(entry)
        if not match:
            raise ListenersError(f"listener {entry!r} is not NAME://host:port (an IPv6 host goes in brackets)")
        name = match["name"].upper()
        protocol = mapping.get(name) or (name if name in SECURITY_PROTOCOLS else None)
        if protocol is None:
            raise ListenersError(
                f"listener name {name} in {entry!r} is not a security protocol and listener.security.protocol.map "
                f"({security_protocol_map or 'not set'}) does not map it; add {name}:<protocol> to the map"
            )
        if name in names:
            raise ListenersError(f"listener name {name} appears twice in {listeners!r}")
        names.add(name)
        parsed.append((match["name"], match["host"], int(match["port"]), protocol))
    return parsed


def bound_to_all_interfaces(listeners, security_protocol_map=None):
    """The same listeners, each with host 0.0.0.0 (IPv4 wildcard); names, protocols, ports and order unchanged."""
    return ",".join(f"{name}://{ALL_INTERFACES}:{port}" for name, _host, port, _protocol in parse(listeners, security_protocol_map))


def checked(listeners, security_protocol_map=None):
    """`listeners` unchanged once every entry parses and maps to a security protocol."""
    parse(listeners, security_protocol_map)
    return listeners
