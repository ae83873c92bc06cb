"""``python -m gpuviz``: the same as the ``gpuviz`` console script."""

import sys

from gpuviz.cli import main

sys.exit(main())
