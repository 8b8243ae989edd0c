# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation job's naming.py is the collection's MirrorMaker 2 vocabulary, generated, never a hand-written twin."""
import ast
import importlib.util
import runpy

from tests.support.checkout import REPO

GENERATOR = REPO / "scripts" / "vendor_mm2_naming.py"
VENDORED = REPO / "roles" / "mirror_validation" / "files" / "mirror_validation" / "naming.py"


def test_vendored_naming_is_what_the_generator_writes_from_the_vocabulary():
    generator = runpy.run_path(str(GENERATOR))
    assert VENDORED.read_text() == generator["generate"](), \
        "%s drifted from plugins/module_utils/_mm2: run `%s` and commit the result" % (VENDORED.relative_to(REPO), generator["REGENERATE"])


def test_the_command_the_drift_messages_name_is_the_makefile_target_that_runs_the_generator():
    """REGENERATE ("make vendored") is what the copies' headers and the drift messages tell a reader to run."""
    regenerate = runpy.run_path(str(GENERATOR))["REGENERATE"]
    assert regenerate == "make vendored"
    target = regenerate.split()[1]
    makefile = (REPO / "Makefile").read_text().splitlines()
    recipe = makefile[makefile.index("%s:" % target) + 1]
    assert recipe.startswith("\t") and recipe.split() == ["$(PYTHON)", "scripts/vendor_mm2_naming.py"]
    phony = next(line for line in makefile if line.startswith(".PHONY:"))
    assert target in phony.split()
    assert all(target not in line.split(":")[1].split() for line in makefile if line.startswith("test:"))


def test_vendored_naming_needs_only_the_standard_library():
    imported = set()
    for node in ast.walk(ast.parse(VENDORED.read_text())):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"__future__", "re"}


def test_vendored_naming_gives_the_names_real_mm2_uses():
    """MirrorConnectorConfig.offsetSyncsTopic with location target (3.0+) and IdentityReplicationPolicy's heartbeat rule."""
    spec = importlib.util.spec_from_file_location("vendored_naming", VENDORED)
    naming = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(naming)
    assert naming.FlowNames("primary", "secondary", "default", ".", "target").offset_syncs_topic == "mm2-offset-syncs.primary.internal"
    assert naming.FlowNames("primary", None, "identity").remote_topic("app-heartbeats") == "primary.app-heartbeats"
    assert naming.FlowNames("primary", None, "default", "_").checkpoints_topic == "primary_checkpoints_internal"
