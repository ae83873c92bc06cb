"""``python -m gpuviz``: the same as the ``gpuviz`` console script."""

from gpuviz.cli import entry

entry()
