# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job package archive the role copies to the host: every module, importable, the same bytes for the same sources."""
import subprocess
import sys
import time
import zipfile

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
