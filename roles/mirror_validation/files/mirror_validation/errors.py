"""Why a validation could not be completed (exit code 2), as opposed to defects found (exit code 1)."""


class ValidationUnavailable(Exception):
    """The mirror could not be validated: a cluster is unreachable, a wait timed out, input is unusable."""
