# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job package as one zip archive, the form spark-submit --py-files ships to executors.

Byte for byte the same for the same sources (sorted names, fixed times, stored), so a copy of it to a host
can be skipped when nothing changed. Run as a script: archive.py PACKAGE_DIR ARCHIVE_PATH.
"""
from __future__ import annotations

import os
import sys
import zipfile

PACKAGE = "mirror_validation"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry


def write_archive(package_dir, path):
    """Write every .py file of `package_dir` to the zip `path` as package `mirror_validation`.

    Written beside `path` and renamed onto it, so that a reader never sees a half-written archive.
    """
    partial = "%s.%d.part" % (path, os.getpid())
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(os.listdir(package_dir)):
            if name.endswith(".py"):
                entry = zipfile.ZipInfo("%s/%s" % (PACKAGE, name), date_time=_EPOCH)
                entry.external_attr = 0o644 << 16
                with open(os.path.join(package_dir, name), "rb") as source:
                    archive.writestr(entry, source.read())
    os.replace(partial, path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: archive.py PACKAGE_DIR ARCHIVE_PATH")
    write_archive(sys.argv[1], sys.argv[2])
