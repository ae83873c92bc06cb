"""The files a TRACE path stands for (a file, or a folder of per-rank files).

Its own module, on the standard library alone: ``gpuviz summary`` finds a trace's cache entry
and kept output (:mod:`gpuviz.trace.cache_memo`) without importing numpy or the importer.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from gpuviz.trace.errors import TraceFormatError

_TRACE_SUFFIXES = (".json", ".json.gz")


def trace_files(path: str | os.PathLike[str]) -> list[Path]:
    """The trace files a TRACE path stands for: the file, or a folder's files in name order.

    Parameters
    ----------
    path : str or PathLike
        A ``.json``/``.json.gz`` file (any name is accepted for a file), or a folder.

    Returns
    -------
    list of Path
        The files, naturally sorted (``rank-2`` before ``rank-10``).

    Raises
    ------
    TraceFormatError
        The path does not exist, or the folder holds no trace files.
    """
    p = Path(path)
    if p.is_dir():
        files = [c for c in p.iterdir() if c.is_file() and c.name.lower().endswith(_TRACE_SUFFIXES)]
        if not files:
            raise TraceFormatError(
                str(p), "", "the folder holds no trace files (.json or .json.gz)"
            )
        return sorted(files, key=_natural_key)
    if not p.exists():
        raise TraceFormatError(str(p), "", "no such file or folder")
    return [p]


def _natural_key(p: Path) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]
