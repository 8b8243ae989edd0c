# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Code that runs on a node compiles with the oldest Python the collection claims for targets (meta/runtime.yml's
`target_python` line: 3.8, ansible-core 2.19's minimum and what HDInsight 5.x's Ubuntu 18.04 can install).

On a node run: the modules and module_utils (Ansible ships them to the node's interpreter) and the Python files under
roles/*/files (the validation job, run by the MirrorMaker host's virtualenv and the Spark executors). ast.parse with
feature_version refuses the grammar newer Pythons added (match, parenthesized context managers, except*, ...); a few
library calls that parse everywhere but exist only on newer Pythons are looked for by name.

plugins/plugin_utils runs on the controller only, but is held to the same floor: it holds what module_utils held before
the package move (issue 30), and code moves from it down into module_utils when a module comes to need it.
"""
from __future__ import annotations

import ast
import re
import subprocess

import pytest

from tests.support.checkout import REPO

NODE_CODE = sorted(
    [*(REPO / "plugins" / "modules").glob("*.py"), *(REPO / "plugins" / "module_utils").rglob("*.py"),
     *(REPO / "plugins" / "plugin_utils").rglob("*.py"), *(REPO / "roles").glob("*/files/**/*.py")])
# Attribute calls that 3.8 lacks, with the release that added them.
NEWER_ATTRIBUTES = {"removeprefix": "3.9", "removesuffix": "3.9", "is_relative_to": "3.9", "bit_count": "3.10", "with_stem": "3.9"}
NEWER_FUNCTIONS = {("functools", "cache"): "3.9", ("math", "lcm"): "3.9", ("itertools", "pairwise"): "3.10",
                   ("asyncio", "to_thread"): "3.9", ("typing", "TypeAlias"): "3.10"}


def target_python() -> tuple:
    claim = re.search(r"^# target_python: (\d+)\.(\d+)", (REPO / "meta" / "runtime.yml").read_text(), re.M)
    assert claim, "meta/runtime.yml states no '# target_python: X.Y' line"
    return int(claim.group(1)), int(claim.group(2))


def test_the_claim_is_ansible_cores_minimum_or_newer():
    from ansible.module_utils import basic

    assert target_python() >= basic._PY_MIN, f"ansible-core runs modules on {basic._PY_MIN}+ only"


def test_node_code_is_found():
    names = {path.name for path in NODE_CODE}
    assert {"kafka_topic.py", "preflight.py", "spark_io.py"} <= names and len(NODE_CODE) > 60


def newer_library_calls(tree: ast.AST, version: tuple) -> list:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            since = NEWER_ATTRIBUTES.get(node.attr)
            base = node.value.id if isinstance(node.value, ast.Name) else None
            since = NEWER_FUNCTIONS.get((base, node.attr), since)
            if since and tuple(int(part) for part in since.split(".")) > version:
                found.append(f"line {node.lineno}: .{node.attr} (Python {since}+)")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                since = NEWER_FUNCTIONS.get((node.module, alias.name))
                if since and tuple(int(part) for part in since.split(".")) > version:
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name} (Python {since}+)")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "zip" and any(k.arg == "strict" for k in node.keywords):
            found.append(f"line {node.lineno}: zip(strict=...) (Python 3.10+)")
    return found


@pytest.mark.parametrize("path", NODE_CODE, ids=lambda path: str(path.relative_to(REPO)))
def test_node_code_compiles_with_the_oldest_target_python(path):
    version = target_python()
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source, filename=str(path), feature_version=version)
    except SyntaxError as exc:
        pytest.fail(f"{path.relative_to(REPO)}:{exc.lineno}: not Python {version[0]}.{version[1]} syntax ({exc.msg}); it runs on nodes")
    calls = newer_library_calls(tree, version)
    assert not calls, f"{path.relative_to(REPO)} calls what Python {version[0]}.{version[1]} lacks: {calls}"


@pytest.mark.parametrize("source, problem", [
    ("match x:\n    case 1:\n        pass\n", "syntax"),
    ("with (open('a') as a, open('b') as b):\n    pass\n", "syntax"),
    ("'abc'.removeprefix('a')\n", "removeprefix"),
    ("from functools import cache\n", "functools import cache"),
    ("list(zip([1], [2], strict=True))\n", "zip(strict"),
])
def test_the_check_fails_on_newer_code(source, problem):
    """The check can fail: each snippet is refused for 3.8."""
    try:
        tree = ast.parse(source, feature_version=(3, 8))
    except SyntaxError:
        assert problem == "syntax"
        return
    assert problem != "syntax", "feature_version did not refuse it"
    assert any(problem in call for call in newer_library_calls(tree, (3, 8)))


def test_node_code_compiles_under_a_real_python_3_8():
    """feature_version is best-effort (the ast documentation says so): where this machine has a real CPython 3.8 (pyenv's,
    in this project's image), every node-side file is also compiled by it."""
    from tests.support.oldest_runtime import _python_3_8

    python, _source = _python_3_8()
    if python is None:
        pytest.skip("no CPython 3.8 on this machine (tests/support/oldest_runtime.py looks in pyenv and on PATH)")
    script = ("import sys\n"
              "bad = []\n"
              "for path in sys.argv[1:]:\n"
              "    try:\n"
              "        compile(open(path, encoding='utf-8').read(), path, 'exec', dont_inherit=True)\n"
              "    except SyntaxError as exc:\n"
              "        bad.append('%s:%s: %s' % (path, exc.lineno, exc.msg))\n"
              "print('\\n'.join(bad))\n")
    proc = subprocess.run([python, "-c", script, *map(str, NODE_CODE)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "", f"not Python 3.8 syntax, by {python}:\n{proc.stdout}"
