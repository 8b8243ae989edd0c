#!/usr/bin/env python3
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Entry point of the mirror exporter on the MirrorMaker host (role mirrormaker2, mirrormaker2_exporter_*).

The role copies the collection's _mm2, _kafka and _mirror module_utils into lib/ beside this file, under their
ansible_collections.kafkaops.mirror names, and runs this file with the mirror_host virtualenv's Python (kafka-python);
everything it does is plugins/module_utils/_mirror/exporter.py's main().
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))

from ansible_collections.kafkaops.mirror.plugins.module_utils._mirror.exporter import main  # noqa: E402  # pylint: disable=wrong-import-position

if __name__ == "__main__":
    sys.exit(main())
