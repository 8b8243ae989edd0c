# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small inventory of source and target nodes whose hosts files are plain files under a test directory."""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

SUFFIX = "src.internal.cloudapp.net"


def source_hosts_text(workers=3, zookeepers=3, ip_prefix="127.20.70"):
    lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback", "",
             f"{ip_prefix}.2\thn0-primar.{SUFFIX}\thn0-primar headnodehost"]
    lines += [f"{ip_prefix}.{10 + k}\twn{k}-primar.{SUFFIX}\twn{k}-primar" for k in range(workers)]
    lines += [f"{ip_prefix}.{20 + k}\tzk{k}-primar.{SUFFIX}\tzk{k}-primar" for k in range(zookeepers)]
    return "\n".join(lines) + "\n"


# Unusual but valid formatting on purpose: it must survive byte for byte.
TARGET_TEXT = (
    "127.0.0.1\tlocalhost\n"
    "# the secondary cluster\n"
    "127.20.71.10   wn0-second.tgt.internal.cloudapp.net    wn0-second   # own worker\n"
    "\n"
    "127.20.71.20\tzk0-second.tgt.internal.cloudapp.net zk0-second\n"
    "   \n"
    "10.1.2.3 unrelated.example\n"
)


class Lab:
    def __init__(self, root: Path):
        self.root = root
        self.sources = {f"wn{k}-primar": root / f"src{k}" / "hosts" for k in range(2)}
        self.targets = {f"wn{k}-second": root / f"tgt{k}" / "hosts" for k in range(2)}
        for path in self.sources.values():
            path.parent.mkdir(parents=True)
            path.write_text(source_hosts_text())
        for path in self.targets.values():
            path.parent.mkdir(parents=True)
            path.write_bytes(TARGET_TEXT.encode())
        # A second source cluster, so that two managed blocks can coexist.
        self.third = root / "third" / "hosts"
        self.third.parent.mkdir(parents=True)
        self.third.write_text("127.20.72.10\twn0-thirdc.x.internal.cloudapp.net\twn0-thirdc\n")
        inventory = {
            "all": {
                "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                "children": {
                    "primary_kafka": {"hosts": {name: {"hosts_sync_file": str(path)} for name, path in self.sources.items()}},
                    "third_kafka": {"hosts": {"wn0-thirdc": {"hosts_sync_file": str(self.third)}}},
                    "secondary_kafka": {"hosts": {name: {"hosts_sync_file": str(path)} for name, path in self.targets.items()}},
                },
            }
        }
        self.inventory = root / "inventory.yml"
        self.inventory.write_text(yaml.safe_dump(inventory))

    def target_bytes(self) -> dict:
        return {name: path.read_bytes() for name, path in self.targets.items()}
