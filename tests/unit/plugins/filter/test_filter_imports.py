# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No filter plugin imports a Kafka client library.

Ansible loads a filter plugin afresh in every forked task worker that templates it, so what a filter imports is paid
on every such task: kafka-python cost about 0.2 CPU-s each time (py-spy of an idempotent mirror.yml run: 23 % of the
controller's CPU). The modules import it on the managed host, where it is needed.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.checkout import REPO, collections_path

FILTERS = sorted(path.stem for path in (REPO / "plugins" / "filter").glob("*.py"))
CLIENT_LIBRARIES = ("kafka", "confluent_kafka")


@pytest.mark.parametrize("name", FILTERS)
def test_filter_imports_no_kafka_client(name):
    probe = (
        "import sys\n"
        f"import ansible_collections.kafkaops.mirror.plugins.filter.{name}\n"
        f"print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {CLIENT_LIBRARIES!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=Path("/"), env={"PYTHONPATH": str(collections_path())},
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"filter {name} imports {done.stdout.strip()}"
