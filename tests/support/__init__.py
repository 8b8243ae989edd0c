# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The helpers of the unit tests, the integration tests and bench/: `from tests.support.<module> import ...`.

Importable once the checkout's root is on sys.path: pytest.ini's `pythonpath` puts it there for pytest, `python -m`
from the checkout's root does it for tests/run_suite.py and bench/ (docs/development.md, "Test helpers").
"""
