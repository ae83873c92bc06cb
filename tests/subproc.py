"""The environment for a test's ``python -m gpuviz`` child: this checkout first on its path.

The checkout goes in front of ``PYTHONPATH`` and what was there stays: on the GPU machine the
dependencies that travel as wheels (msgspec, orjson) are on ``PYTHONPATH`` too.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def gpuviz_env(**extra: str) -> dict[str, str]:
    """``os.environ`` with the checkout first on ``PYTHONPATH``, plus ``extra``."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return env
