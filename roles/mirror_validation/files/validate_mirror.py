"""spark-submit entry point of the mirror validation job; everything else lives in mirror_validation/."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mirror_validation.cli import main  # noqa: E402  pylint: disable=wrong-import-position

if __name__ == "__main__":
    sys.exit(main())
