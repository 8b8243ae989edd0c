"""Make `ansible_collections.kafkaops.mirror` importable for unit tests from a plain checkout."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "integration"))

from ansible_runner import collections_path  # noqa: E402

if collections_path() not in sys.path:
    sys.path.insert(0, collections_path())
