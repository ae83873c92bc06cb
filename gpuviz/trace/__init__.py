"""The columnar trace model, Kineto import, Chrome-trace export, rank merge and LOD math.

Pure numpy (plus msgspec/orjson): never imports torch or Qt. See DESIGN.md.
"""

from gpuviz.trace.errors import ImportWarnings, TraceFormatError
from gpuviz.trace.model import Kind, Trace, TrackKind

__all__ = ["ImportWarnings", "Kind", "Trace", "TraceFormatError", "TrackKind"]
