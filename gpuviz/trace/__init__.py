"""The columnar trace model, Kineto import, Chrome-trace export, rank merge and LOD math.

Pure numpy (plus msgspec/orjson): never imports torch or Qt. See DESIGN.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gpuviz.trace.errors import ImportWarnings, TraceFormatError

if TYPE_CHECKING:
    from gpuviz.trace.model import Kind, Trace, TrackKind

__all__ = ["ImportWarnings", "Kind", "Trace", "TraceFormatError", "TrackKind"]

_FROM_MODEL = ("Kind", "Trace", "TrackKind")


def __getattr__(name: str) -> Any:
    """The model's names, and submodules, imported when first asked for: importing a
    submodule that needs no numpy (``cache_memo``, ``files``) imports no numpy (PEP 562)."""
    if name in _FROM_MODEL:
        return getattr(importlib.import_module("gpuviz.trace.model"), name)
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
