# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A directory built once in the user's cache and re-used: the lab's Kafka homes (sandbox/kafka_dist.py) and the parts of
the validation job's oldest runtime (tests/support/oldest_runtime.py).

Each carries, in a JSON file of its own, the recipe it was built from: a changed recipe builds it again. It is built in a
staging directory beside its place and renamed in, so it is either whole or absent (an interrupted build or two builds at
once never leave half of one), and one builder at a time works in a cache folder (the test workers' sandboxes start
together): a waiter finds it built.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path


def cache_dir(variable: str, name: str) -> Path:
    """$<variable>, else $XDG_CACHE_HOME/kafkaops-mirror/<name>, else ~/.cache/kafkaops-mirror/<name>."""
    explicit = os.environ.get(variable)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafkaops-mirror" / name


def is_built(path: Path, recipe_file: str, recipe: dict) -> bool:
    try:
        return json.loads((path / recipe_file).read_text()) == recipe
    except (OSError, ValueError):
        return False


def write_recipe(path: Path, recipe_file: str, recipe: dict) -> None:
    """Written last: it marks the directory whole."""
    (path / recipe_file).write_text(json.dumps(recipe, indent=2) + "\n")


@contextlib.contextmanager
def one_builder(folder: Path):
    """Held while building anything in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure(path: Path, recipe_file: str, recipe: dict, build, announce) -> Path:
    """`path`, built first by build(staging) when missing or built from another recipe; announce() says a build starts."""
    if is_built(path, recipe_file, recipe):
        return path
    with one_builder(path.parent):
        if is_built(path, recipe_file, recipe):
            return path
        announce()
        staging = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
        try:
            build(staging)
            write_recipe(staging, recipe_file, recipe)
            staging.chmod(0o755)  # mkdtemp makes it 0700; others read it (the MirrorMaker service user reads a Kafka home)
            if path.exists():
                shutil.rmtree(path)
            staging.rename(path)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return path
