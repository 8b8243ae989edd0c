# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The body of a fixture that owns a sandbox: `with running_sandbox(directory, what, **up_options) as state: yield ...`."""
from __future__ import annotations

import contextlib

import pytest

from sandbox import api


@contextlib.contextmanager
def running_sandbox(directory, what: str, down_timeout: float | None = None, **up_options):
    """The state of the sandbox sandbox.api.up(directory, **up_options) starts, brought down when the block ends, failing
    tests included. One that does not start fails the tests that need it with `what` and the reason (not an error
    traceback from inside the fixture); down_timeout is api.down's, for labs whose JVMs take longer to stop."""
    try:
        state = api.up(directory, **up_options)
    except api.SandboxError as exc:
        pytest.fail(f"{what} did not start: {exc}")
    try:
        yield state
    finally:
        if down_timeout is None:
            api.down(directory)
        else:
            api.down(directory, timeout=down_timeout)
