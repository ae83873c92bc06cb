"""Exceptions that the CLI maps to exit codes (see DESIGN.md's CLI contract).

Kept free of imports so that ``gpuviz.cli`` can catch them without loading anything heavy.
"""


class BadInputError(Exception):
    """Bad usage, a bad parameter or a bad input file: exit code 2, one line on stderr.

    The message names the file or parameter and what is wrong.
    """


class WorkFailedError(Exception):
    """The work itself failed (a workload raised, a rank died): exit code 1."""
