# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hosts-file entries for cross-network mirroring: pick a cluster's worker and ZooKeeper entries, render them as one
managed block per source cluster, and find names that lines outside the block already map to another address.

Short names (no domain) are copied only when they mean one host on the node: two HDInsight clusters whose names share
their first six characters give their nodes the same short names (wn0-kafkap), so those are left out and reported; FQDNs
are always copied.

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


def is_short(name):
    """A name without a domain: HDInsight's short names (the cluster name's first six characters after the role prefix)."""
    return "." not in name


def merge(entry_lists, left_out=None):
    """One entry per address, names in first-seen order.

    An FQDN seen with two addresses is an error. A short name seen with two addresses is left out (a dict {name, ips,
    reason} appended to `left_out` when given), as the FQDNs still say which host is which.
    """
    ip_of, short_ips = {}, {}
    for entries in entry_lists:
        for entry in entries:
            for name in entry["names"]:
                if is_short(name):
                    short_ips.setdefault(name.lower(), []).append(entry["ip"])
                    continue
                seen = ip_of.setdefault(name.lower(), entry["ip"])
                if seen != entry["ip"]:
                    raise HostsEntriesError(
                        f"the source disagrees about {name}: {seen} and {entry['ip']}; fix the source nodes' hosts files (or use the ambari source)"
                    )
    ambiguous = {name: list(dict.fromkeys(ips)) for name, ips in short_ips.items() if len(set(ips)) > 1}
    for name, ips in sorted(ambiguous.items()):
        if left_out is not None:
            left_out.append({"name": name, "ips": ips, "reason": "the source maps it to %s" % " and ".join(ips)})
    by_ip = {}
    for entries in entry_lists:
        for entry in entries:
            names = by_ip.setdefault(entry["ip"], [])
            names.extend(n for n in entry["names"] if n not in names and n.lower() not in ambiguous)
    return [{"ip": ip, "names": names} for ip, names in sorted(((ip, names) for ip, names in by_ip.items() if names), key=lambda item: item[1][0])]


def ambiguous_short_names(current_text, entries, block_marker, local_names=()):
    """The short names of `entries` that mean another host on this node: {name, ips, reason} per name.

    A short name is ambiguous when a line of this node's hosts file outside our block maps it, or a name whose first label is
    it, to another address (the node's own cluster: two HDInsight clusters whose names share their first six characters
    give their nodes the same short names), or when it is the first label of one of `local_names` (the inventory names of
    this node's cluster), which the node may resolve through DNS without a hosts line.
    """
    local = {}
    for number, ip, names in parse_hosts(current_text, skip_managed=False, skip_marker=block_marker):
        for name in names:
            local.setdefault(name.split(".", 1)[0].lower(), []).append((number, ip, name))
    inventory = {}
    for name in local_names or ():
        inventory.setdefault(str(name).split(".", 1)[0].lower(), str(name))
    found = []
    for entry in entries:
        for name in entry["names"]:
            if not is_short(name):
                continue
            key = name.lower()
            other = [(number, ip, local_name) for number, ip, local_name in local.get(key, []) if ip != entry["ip"]]
            if other:
                number, ip, local_name = other[0]
                reason = ("line %d of this node's hosts file maps %s to %s; the source's %s is %s, so the short name would mean two "
                          "hosts (cluster names that share their first six characters)" % (number, local_name, ip, name, entry["ip"]))
            elif key in inventory and inventory[key].lower() not in {n.lower() for n in entry["names"]}:
                reason = ("it is also the short name of %s, a host of this node's cluster in the inventory (cluster names that share "
                          "their first six characters)" % inventory[key])
            else:
                continue
            found.append({"name": name, "ips": [entry["ip"]], "reason": reason})
    return found


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


def plan(current_text, alias, source_files=None, ambari_hosts=None, patterns=DEFAULT_PATTERNS, local_names=()):
    """What the hosts_sync role writes: {marker, entries, block, conflicts, left_out}.

    FQDNs are always copied (a line outside the block that maps one elsewhere is a conflict); a short name is copied only
    when it means one host, else it is left out ({name, ips, reason} in left_out) and the node keeps its own meaning.
    """
    block_marker = marker(alias)
    lists = [entries_from_hosts_file(text, patterns) for text in source_files or []]
    if ambari_hosts:
        lists.append(entries_from_ambari(ambari_hosts, patterns))
    left_out = []
    entries = merge(lists, left_out)
    clashing = ambiguous_short_names(current_text or "", entries, block_marker, local_names)
    if clashing:
        dropped = {item["name"].lower() for item in clashing}
        entries = [{"ip": e["ip"], "names": [n for n in e["names"] if n.lower() not in dropped]} for e in entries]
        entries = [e for e in entries if e["names"]]
        left_out += clashing
    return {"marker": block_marker, "entries": entries, "block": render(entries),
            "conflicts": conflicts(current_text or "", entries, block_marker), "left_out": left_out}
