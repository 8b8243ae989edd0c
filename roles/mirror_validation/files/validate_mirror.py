# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""spark-submit entry point of the mirror validation job; everything else lives in mirror_validation/.

The role ships the package as mirror_validation.zip next to this script (and to the executors with --py-files);
run from a source tree, the package directory next to this script is used.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ARCHIVE = os.path.join(HERE, "mirror_validation.zip")
sys.path.insert(0, ARCHIVE if os.path.exists(ARCHIVE) else HERE)

from mirror_validation.cli import main  # noqa: E402  pylint: disable=wrong-import-position

if __name__ == "__main__":
    sys.exit(main())
