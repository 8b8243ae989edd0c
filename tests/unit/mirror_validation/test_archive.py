# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job package archive the role copies to the host: every module, importable, the same bytes for the same sources."""
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from types import SimpleNamespace

import pytest

from mirror_validation.archive import write_archive

from tests.support.job_env import JOB_FILES

PACKAGE_DIR = JOB_FILES / "mirror_validation"


def test_same_sources_same_bytes_and_a_changed_source_changes_them(tmp_path):
    first, second, changed = tmp_path / "first.zip", tmp_path / "second.zip", tmp_path / "changed.zip"
    write_archive(str(PACKAGE_DIR), str(first))
    time.sleep(1.1)  # zip times have a two-second grain: a time taken from the clock would show here
    write_archive(str(PACKAGE_DIR), str(second))
    assert first.read_bytes() == second.read_bytes()
    copy = tmp_path / "package"
    copy.mkdir()
    for source in PACKAGE_DIR.glob("*.py"):
        (copy / source.name).write_bytes(source.read_bytes())
    (copy / "report.py").write_text((copy / "report.py").read_text() + "\n# edited\n")
    write_archive(str(copy), str(changed))
    assert changed.read_bytes() != first.read_bytes()


def test_the_archive_holds_every_module_and_the_entry_script_imports_from_it(tmp_path):
    path = tmp_path / "mirror_validation.zip"
    subprocess.run([sys.executable, str(PACKAGE_DIR / "archive.py"), str(PACKAGE_DIR), str(path)], check=True)
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == sorted("mirror_validation/%s" % source.name for source in PACKAGE_DIR.glob("*.py"))
    # The entry script next to the archive and no package directory: the job's modules can only come from the zip.
    (tmp_path / "validate_mirror.py").write_bytes((JOB_FILES / "validate_mirror.py").read_bytes())
    shown = subprocess.run([sys.executable, str(tmp_path / "validate_mirror.py"), "--help"], capture_output=True, text=True, check=True,
                           cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"})
    assert shown.stdout.startswith("usage: validate_mirror.py")


def test_a_run_from_the_package_directory_removes_the_zip_it_shipped(monkeypatch, tmp_path):
    """Run from the package's directory (not spark-submit's --py-files zip), the job zips itself for Spark's Python workers;
    the zip lives while the job runs and is gone afterwards, also when the job fails (it stayed in the temporary directory
    after every run before)."""
    from mirror_validation import cli  # pylint: disable=import-outside-toplevel

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shipped = []

    class Context:
        def addPyFile(self, path):  # pylint: disable=invalid-name
            shipped.append(path)

    def run(_context, _job_options, _prepared=None):
        assert os.path.isfile(shipped[0]) and zipfile.is_zipfile(shipped[0])
        raise RuntimeError("the job failed")

    monkeypatch.setattr(cli, "spark_context", Context)
    monkeypatch.setattr(cli.job, "prepare", lambda _job_options: None)
    monkeypatch.setattr(cli.job, "run", run)
    monkeypatch.setattr(cli.options, "job_options", lambda _given: SimpleNamespace(topic_drift_file=None, report=None, html=None))
    with pytest.raises(RuntimeError, match="the job failed"):
        cli.main([])
    assert len(shipped) == 1 and not os.listdir(tmp_path)
