# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One direction of dependency between the private packages of plugins/ (docs/development.md, "Layout of plugins/"):

    module_utils/_mm2  <-  module_utils/_kafka  <-  module_utils/_ambari  <-  module_utils/_mirror  <-  plugin_utils

A file may import its own package and the packages to its left, never one to its right, and no chain of imports between
files may come back to where it started. _mm2 imports the standard library only (the validation job vendors it). Modules
never import plugin_utils: Ansible ships only module_utils to a node. Every file under module_utils belongs to a package.
The checks parse the files with `ast` (nothing is imported) and name the file and line of each import they reject.
"""
from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

from tests.support.checkout import REPO

COLLECTION = "ansible_collections.kafkaops.mirror.plugins."
LAYERS = ("module_utils._mm2", "module_utils._kafka", "module_utils._ambari", "module_utils._mirror", "plugin_utils")
STANDARD_LIBRARY_ONLY = "module_utils._mm2"


def module_name(plugins: Path, path: Path) -> str:
    """plugins/module_utils/_kafka/client.py -> module_utils._kafka.client (a package's __init__.py -> the package)."""
    parts = list(path.relative_to(plugins).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(name: str):
    """The layer (an item of LAYERS) that holds module `name` (relative to plugins/), or None."""
    for layer in LAYERS:
        if name == layer or name.startswith(layer + "."):
            return layer
    return None


def imports(path: Path):
    """(line, imported module, top-level name) for every import of the file, including those inside try/if/def blocks;
    `from package import name` names package.name, which may be a module or a definition of the package."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, alias.name.partition(".")[0]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.append((node.lineno, "." * node.level + (node.module or ""), ""))
                continue
            found.append((node.lineno, node.module, node.module.partition(".")[0]))
            found.extend((node.lineno, "%s.%s" % (node.module, alias.name), node.module.partition(".")[0]) for alias in node.names)
    return found


def sources(plugins: Path):
    """{module name: path} of every Python file under module_utils and plugin_utils."""
    paths = [*sorted((plugins / "module_utils").rglob("*.py")), *sorted((plugins / "plugin_utils").rglob("*.py"))]
    return {module_name(plugins, path): path for path in paths}


def layering_problems(plugins: Path):
    """'path:line: problem' for every file under module_utils and plugin_utils that breaks the direction (see above)."""
    problems, known = [], sources(plugins)
    for name, path in known.items():
        where = path.relative_to(plugins.parent).as_posix()
        layer = layer_of(name)
        if layer is None:
            problems.append("%s:1: belongs to none of the packages %s" % (where, ", ".join(LAYERS)))
            continue
        reported = set()  # one problem per import statement: `from a import b` is seen as a and as a.b
        for line, imported, top in imports(path):
            if line in reported:
                continue
            before = len(problems)
            if imported.startswith("."):
                problems.append("%s:%d: relative import %s (Ansible packs only absolute ansible_collections imports)" % (where, line, imported))
            elif imported.startswith(COLLECTION):
                target = imported[len(COLLECTION):]
                target_layer = layer_of(target)
                if target_layer is None:
                    if target not in ("module_utils", "plugin_utils"):
                        problems.append("%s:%d: imports %s, which is in none of the packages %s" % (where, line, imported, ", ".join(LAYERS)))
                elif LAYERS.index(target_layer) > LAYERS.index(layer):
                    problems.append("%s:%d: %s imports %s against the direction (%s)" % (where, line, layer, target_layer, " <- ".join(LAYERS)))
            elif layer == STANDARD_LIBRARY_ONLY and top != "__future__" and top not in sys.stdlib_module_names:
                problems.append("%s:%d: %s imports %s, which is not in the standard library" % (where, line, layer, imported))
            if len(problems) > before:
                reported.add(line)
    return problems


def import_cycles(plugins: Path):
    """'path:line: cycle a -> b -> a' for every chain of imports between the files that comes back to where it started."""
    known = sources(plugins)
    edges = {}
    for name, path in known.items():
        for line, imported, _top in imports(path):
            target = imported[len(COLLECTION):] if imported.startswith(COLLECTION) else None
            if target in known and target != name:
                edges.setdefault(name, {}).setdefault(target, line)
    cycles, state = [], {}

    def visit(name, stack):
        state[name] = "open"
        stack.append(name)
        for target in sorted(edges.get(name, {})):
            if state.get(target) == "open":
                cycle = stack[stack.index(target):] + [target]
                cycles.append("%s:%d: cycle %s" % (known[name].relative_to(plugins.parent).as_posix(), edges[name][target], " -> ".join(cycle)))
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[name] = "done"

    for name in sorted(known):
        if name not in state:
            visit(name, [])
    return cycles


def module_problems(plugins: Path):
    """'path:line: problem' for every module that imports plugin_utils (not shipped to the node the module runs on)."""
    problems = []
    for path in sorted((plugins / "modules").glob("*.py")):
        reported = set()
        for line, imported, _top in imports(path):
            if imported.startswith(COLLECTION + "plugin_utils") and line not in reported:
                reported.add(line)
                where = path.relative_to(plugins.parent).as_posix()
                problems.append("%s:%d: module imports %s: modules may import module_utils only" % (where, line, imported))
    return problems


PLUGINS = REPO / "plugins"


def test_every_import_follows_the_direction_and_mm2_needs_only_the_standard_library():
    problems = layering_problems(PLUGINS)
    assert not problems, "\n".join(problems)


def test_no_import_cycle_between_files():
    cycles = import_cycles(PLUGINS)
    assert not cycles, "\n".join(cycles)


def test_no_module_imports_plugin_utils():
    problems = module_problems(PLUGINS)
    assert not problems, "\n".join(problems)


def test_each_package_says_what_it_is_and_what_it_may_import():
    for layer in LAYERS:
        init = PLUGINS.joinpath(*layer.split(".")) / "__init__.py"
        docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert "May import" in docstring, "%s: its docstring says what the package may import" % init.relative_to(REPO)


# The checks themselves, on a made-up plugins/ tree: each can fail.

def _tree(tmp_path, files):
    plugins = tmp_path / "plugins"
    for name, text in files.items():
        path = plugins / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return plugins


def test_the_checks_reject_an_import_against_the_direction_a_foreign_import_in_mm2_and_a_cycle(tmp_path):
    plugins = _tree(tmp_path, {
        "module_utils/_mm2/naming.py": "import re\ntry:\n    from kafka import TopicPartition\nexcept ImportError:\n    pass\n",
        "module_utils/_mm2/versions.py": "from %smodule_utils._mm2.naming import X\n" % COLLECTION,
        "module_utils/_kafka/client.py": "from %smodule_utils._mirror.status import Y\n" % COLLECTION,
        "module_utils/_mirror/status.py": "from %smodule_utils._kafka import client\n" % COLLECTION,
        "module_utils/flat.py": "",
        "plugin_utils/render.py": "from %smodule_utils._mirror.status import Y\n" % COLLECTION,
        "modules/kafka_x.py": "from %splugin_utils.render import Z\n" % COLLECTION,
    })
    assert layering_problems(plugins) == [
        "plugins/module_utils/_kafka/client.py:1: module_utils._kafka imports module_utils._mirror against the direction "
        "(module_utils._mm2 <- module_utils._kafka <- module_utils._ambari <- module_utils._mirror <- plugin_utils)",
        "plugins/module_utils/_mm2/naming.py:3: module_utils._mm2 imports kafka, which is not in the standard library",
        "plugins/module_utils/flat.py:1: belongs to none of the packages " + ", ".join(LAYERS),
    ]
    assert import_cycles(plugins) == [
        "plugins/module_utils/_mirror/status.py:1: cycle module_utils._kafka.client -> module_utils._mirror.status -> module_utils._kafka.client"
    ]
    assert module_problems(plugins) == [
        "plugins/modules/kafka_x.py:1: module imports %splugin_utils.render: modules may import module_utils only" % COLLECTION,
    ]
