# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a validation could not be completed (exit code 2), as opposed to defects found (exit code 1)."""


class ValidationUnavailable(Exception):
    """The mirror could not be validated: a cluster is unreachable, a wait timed out, input is unusable."""
