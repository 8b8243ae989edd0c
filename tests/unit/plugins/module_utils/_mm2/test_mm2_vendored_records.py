# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation job's vendored_mm2_records.py and findings.py are the collection's MirrorMaker 2 record codec, undecodable-record rule and
finding text, generated, never hand-written twins."""
import ast
import importlib.util
import runpy
from collections import namedtuple

import pytest

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2 import records as mm2_records
from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2 import findings
from tests.support.checkout import REPO

GENERATOR = REPO / "scripts" / "vendor_mm2_naming.py"
JOB = REPO / "roles" / "mirror_validation" / "files" / "mirror_validation"


def _vendored():
    spec = importlib.util.spec_from_file_location("vendored_mm2_records", JOB / "vendored_mm2_records.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vendored_records_is_what_the_generator_writes_from_the_codec():
    generator = runpy.run_path(str(GENERATOR))
    assert (JOB / "vendored_mm2_records.py").read_text() == generator["generate"]("vendored_mm2_records.py"), \
        "roles/mirror_validation/files/mirror_validation/vendored_mm2_records.py drifted from plugins/module_utils: run `%s` and " \
        "commit the result" % generator["REGENERATE"]


def test_the_generator_checks_every_target_and_the_job_has_no_hand_written_codec():
    generator = runpy.run_path(str(GENERATOR))
    assert generator["main"](["--check"]) == 0, "a copy drifted (the captured stdout names it): run `%s` and commit the result" % generator["REGENERATE"]
    assert not (JOB / "mm2_formats.py").exists()


def test_no_job_file_shares_its_name_with_a_module_utils_file():
    """The generated codec is vendored_mm2_records.py, not a second records.py beside plugins/module_utils/_mm2's one, the
    package the job's copies come from (its naming.py and findings.py are the copies of _mm2's, named so on purpose)."""
    job = {path.name for path in JOB.glob("*.py")} - {"__init__.py", "naming.py", "findings.py"}
    assert job.isdisjoint(path.name for path in (REPO / "plugins" / "module_utils" / "_mm2").glob("*.py"))


def test_vendored_records_needs_only_the_standard_library():
    imported = set()
    for node in ast.walk(ast.parse((JOB / "vendored_mm2_records.py").read_text())):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"__future__", "collections", "struct"}


def test_vendored_undecodable_rule_is_the_collections():
    """_mm2/internal_records.decode_records: a tombstone is skipped silently, a garbage record is reported with its offset."""
    record = namedtuple("Record", "partition offset key value")
    sync = mm2_records.OffsetSync("orders", 0, 10, 10)
    read = [record(0, 7, sync.encode_key(), None), record(0, 8, sync.encode_key(), sync.encode_value()), record(1, 9, b"\x00", b"")]
    vendored = _vendored()
    decoded, problems = vendored.decode_records(read, vendored.OffsetSync, "syncs")
    assert decoded == [("orders", 0, 10, 10)]
    assert problems == ["syncs[1]@9: offset-sync key: truncated at byte 0 (needs 2 more, 1 left)"]


@pytest.mark.parametrize("codec, record", [
    ("OffsetSync", ("orders", 3, 1500, 1498)),
    ("Checkpoint", ("orders-app", "primary.orders", 3, 1500, 1498, "")),
    ("Heartbeat", ("primary", "secondary", 1700000000000)),
])
def test_vendored_codec_reads_and_writes_the_bytes_the_collections_does(codec, record):
    ours, theirs = getattr(_vendored(), codec)(*record), getattr(mm2_records, codec)(*record)
    assert (ours.encode_key(), ours.encode_value()) == (theirs.encode_key(), theirs.encode_value())
    assert getattr(_vendored(), codec).decode(theirs.encode_key(), theirs.encode_value()) == record


def test_vendored_findings_is_what_the_generator_writes_and_reads_as_the_collections():
    generator = runpy.run_path(str(GENERATOR))
    assert (JOB / "findings.py").read_text() == generator["generate"]("findings.py"), \
        "roles/mirror_validation/files/mirror_validation/findings.py drifted from plugins/module_utils/_mm2: run `%s` and commit the result" \
        % generator["REGENERATE"]
    spec = importlib.util.spec_from_file_location("vendored_findings", JOB / "findings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for item in ({"message": "a", "fix": "b"}, {"message": "a", "fix": None}, {"message": "a"}):
        assert module.finding_text(item) == findings.finding_text(item)
