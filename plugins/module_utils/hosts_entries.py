# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hosts-file entries for cross-network mirroring: pick a cluster's worker and ZooKeeper entries, render them as one
managed block per source cluster, and find names that lines outside the block already map to another address.

Pure functions, used by the kafkaops.mirror.hosts_sync_plan filter (the hosts_sync role).
"""
from __future__ import annotations

import ipaddress
import re

MARKER_PREFIX = "kafkaops.mirror hosts_sync"
DEFAULT_PATTERNS = (r"^wn\d+-", r"^zk\d+-")


class HostsEntriesError(ValueError):
    pass


def marker(alias):
    if not re.match(r"^[A-Za-z0-9_.-]+$", alias or ""):
        raise HostsEntriesError(f"source alias {alias!r} must be letters, digits, '.', '_' or '-' (it names the managed block)")
    return f"# {{mark}} {MARKER_PREFIX} {alias}"


def _is_managed_marker(line, mark):
    return line.strip().startswith(f"# {mark} {MARKER_PREFIX} ")


def parse_hosts(text, skip_managed=True, skip_marker=None):
    """[(line_number, ip, [names])] of a hosts file; comments dropped; lines of managed blocks skipped when asked.

    skip_managed skips every hosts_sync block (entries copied from elsewhere are not this node's own);
    skip_marker skips only the block with that marker template.
    """
    entries = []
    inside = False
    begin_end = None
    if skip_marker:
        begin_end = (skip_marker.replace("{mark}", "BEGIN"), skip_marker.replace("{mark}", "END"))
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if (skip_managed and _is_managed_marker(line, "BEGIN")) or (begin_end and line == begin_end[0]):
            inside = True
            continue
        if (skip_managed and _is_managed_marker(line, "END")) or (begin_end and line == begin_end[1]):
            inside = False
            continue
        if inside:
            continue
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2:
            continue
        try:
            ipaddress.ip_address(fields[0])
        except ValueError:
            continue
        entries.append((number, fields[0], fields[1:]))
    return entries


def _wanted(names, patterns):
    return any(re.search(p, name.split(".", 1)[0]) for p in patterns for name in names)


def entries_from_hosts_file(text, patterns=DEFAULT_PATTERNS):
    """Entries of a source node's hosts file whose names match the patterns (matched against each name's first label)."""
    return [{"ip": ip, "names": names} for _n, ip, names in parse_hosts(text) if _wanted(names, patterns)]


def entries_from_ambari(hosts, patterns=DEFAULT_PATTERNS):
    """Entries from ambari_hosts_info's hosts: FQDN and short name for each matching host."""
    entries = []
    for host in hosts:
        fqdn = host["host_name"]
        short = fqdn.split(".", 1)[0]
        if not host.get("ip"):
            raise HostsEntriesError(f"Ambari reports no IP address for host {fqdn}")
        names = [fqdn] if short == fqdn else [fqdn, short]
        if _wanted(names, patterns):
            entries.append({"ip": host["ip"], "names": names})
    return entries


def merge(entry_lists):
    """One entry per address, names in first-seen order; a name seen with two addresses is an error."""
    by_ip, ip_of = {}, {}
    for entries in entry_lists:
        for entry in entries:
            for name in entry["names"]:
                seen = ip_of.setdefault(name.lower(), entry["ip"])
                if seen != entry["ip"]:
                    raise HostsEntriesError(
                        f"the source disagrees about {name}: {seen} and {entry['ip']}; fix the source nodes' hosts files (or use the ambari source)"
                    )
            names = by_ip.setdefault(entry["ip"], [])
            names.extend(n for n in entry["names"] if n not in names)
    return [{"ip": ip, "names": names} for ip, names in sorted(by_ip.items(), key=lambda item: item[1][0])]


def render(entries):
    return "".join("\t".join([e["ip"]] + e["names"]) + "\n" for e in entries)


def conflicts(current_text, entries, block_marker):
    """Messages for every name of `entries` that a line outside our block maps to a different address."""
    wanted = {name.lower(): e["ip"] for e in entries for name in e["names"]}
    problems = []
    for number, ip, names in parse_hosts(current_text, skip_managed=False, skip_marker=block_marker):
        for name in names:
            expected = wanted.get(name.lower())
            if expected and expected != ip:
                problems.append(f"line {number} maps {name} to {ip}, but the source cluster says {expected}")
    return problems


def plan(current_text, alias, source_files=None, ambari_hosts=None, patterns=DEFAULT_PATTERNS):
    """What the hosts_sync role writes: {marker, entries, block, conflicts}."""
    block_marker = marker(alias)
    lists = [entries_from_hosts_file(text, patterns) for text in source_files or []]
    if ambari_hosts:
        lists.append(entries_from_ambari(ambari_hosts, patterns))
    entries = merge(lists)
    return {"marker": block_marker, "entries": entries, "block": render(entries), "conflicts": conflicts(current_text or "", entries, block_marker)}
