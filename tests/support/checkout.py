# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where this checkout is, and the collections root through which Ansible and the unit tests find it as kafkaops.mirror."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLLECTION_PARTS = ("ansible_collections", "kafkaops", "mirror")


def collections_path() -> Path:
    """The folder above ansible_collections/ that holds this checkout as kafkaops.mirror.

    `make venv` links the checkout as .venv/collections/ansible_collections/kafkaops/mirror in every layout, a CI
    checkout that already sits at .../ansible_collections/kafkaops/mirror included, so that one path always holds this
    checkout, never another installed copy of the collection. pytest.ini's `pythonpath` names the same folder.
    """
    return REPO / ".venv" / "collections"


def is_collection_tree(path: Path) -> bool:
    """True when `path` itself ends in ansible_collections/kafkaops/mirror, as ansible-test requires of the tree it checks."""
    return path.parts[-len(COLLECTION_PARTS):] == COLLECTION_PARTS
