# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Entry point of the mirror exporter on the MirrorMaker host (role mirrormaker2, mirrormaker2_exporter_*).

What it runs is plugins/module_utils/_mirror/exporter.py's main(), with the collection's _mm2, _kafka and _mirror packages
from module_utils.zip beside this file (under their ansible_collections.kafkaops.mirror names), by the mirror_host
virtualenv's Python, which has kafka-python; no Ansible on the host.

`--pack MODULE_UTILS_DIR ZIP` (run by the role on the controller) writes that archive: the three packages' .py files,
sorted, with fixed times, so the same sources give the same bytes and the copy to the host changes nothing.
"""
import os
import sys
import zipfile

PACKAGES = ("_mm2", "_kafka", "_mirror")
PREFIX = "ansible_collections/kafkaops/mirror/plugins/module_utils"
ARCHIVE = "module_utils.zip"
_EPOCH = (1980, 1, 1, 0, 0, 0)


def pack(module_utils_dir, path):
    """Write the archive to `path` (beside it first, then renamed: a reader never sees half of it)."""
    entries = {"%s/__init__.py" % "/".join(PREFIX.split("/")[:depth]): b"" for depth in range(1, PREFIX.count("/") + 2)}
    for package in PACKAGES:
        for name in os.listdir(os.path.join(module_utils_dir, package)):
            if name.endswith(".py"):
                with open(os.path.join(module_utils_dir, package, name), "rb") as source:
                    entries["%s/%s/%s" % (PREFIX, package, name)] = source.read()
    partial = "%s.%d.part" % (path, os.getpid())
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(entries):
            entry = zipfile.ZipInfo(name, date_time=_EPOCH)
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, entries[name])
    os.replace(partial, path)


def main(argv):
    if argv[:1] == ["--pack"]:
        if len(argv) != 3:
            sys.exit("usage: kafka_mirror_exporter.py --pack MODULE_UTILS_DIR ZIP")
        pack(argv[1], argv[2])
        return 0
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ARCHIVE))
    from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.exporter import main as export  # pylint: disable=import-outside-toplevel

    return export(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
