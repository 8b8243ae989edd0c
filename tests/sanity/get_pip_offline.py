# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline stand-in for the get-pip script `ansible-test sanity --venv` downloads (docs/reference/toolchain.md #1).

ansible-test runs it as `python get_pip_<version>.py <pip install options> pip==<version> ...` inside a
fresh venv; this bootstraps pip from the interpreter's bundled wheel instead of the internet, then
installs what was asked from the package index. tests/run_suite.py puts it into ~/.ansible/test/cache/.
"""
import subprocess
import sys

subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])
options = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
if options and options[0] != "install":
    options.insert(0, "install")
if len(options) > 1:
    subprocess.check_call([sys.executable, "-m", "pip", *options])
