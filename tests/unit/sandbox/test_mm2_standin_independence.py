# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox shares only MirrorMaker 2's record codec with the collection: any other import of the collection's code
would let a rule both get wrong pass unseen (the lab would grade itself)."""
import ast

from tests.support.checkout import REPO

SANDBOX = REPO / "sandbox"
CODEC = ("ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.records", {"Checkpoint", "Heartbeat", "OffsetSync"})


def collection_imports():
    found = []
    for path in sorted(SANDBOX.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ansible_collections"):
                found.append((path.relative_to(SANDBOX).as_posix(), node.module, {alias.name for alias in node.names}))
            elif isinstance(node, ast.Import):
                found.extend((path.relative_to(SANDBOX).as_posix(), alias.name, set()) for alias in node.names
                             if alias.name.startswith("ansible_collections"))
    return found


def test_the_sandbox_imports_only_the_record_codec_from_the_collection():
    imports = collection_imports()
    assert imports == [("mm2/records.py", CODEC[0], CODEC[1])], imports
