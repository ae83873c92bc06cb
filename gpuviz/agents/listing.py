"""What under the served folders gpuviz can open (the ``files`` tool).

Traces (``.json``, ``.json.gz`` files whose start names ``traceEvents``), allocator snapshots
(``.pickle``, ``.pickle.gz``, ``.pkl``) and rank folders, with their size. A folder is listed as a rank folder (one job, one
trace per rank) when it holds two or more traces that each record ``distributedInfo`` near
their start, as ``torch.distributed`` runs write it; a folder of unrelated traces is not one
(its files are listed one by one). Links are not followed into folders, and a file that links
out of the roots is left out, as the other tools would refuse it. Hidden folders and those
that hold no data (``__pycache__``, ``node_modules``) are not looked into, and the walk stops
after :data:`MAX_FOLDERS` folders (saying so).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

from gpuviz.agents.confine import Roots

MAX_FOLDERS = 5000
"""Folders one listing looks into."""
MAX_DEPTH = 8
"""How deep under a root it looks."""
HEAD_BYTES = 256 << 10
"""How much of a ``.json`` file is read to tell a trace (``traceEvents``) and its
``distributedInfo``."""
SKIP = frozenset({"__pycache__", "node_modules", "site-packages"})
TRACE_SUFFIXES = (".json", ".json.gz")
SNAPSHOT_SUFFIXES = (".pickle", ".pickle.gz", ".pkl", ".pkl.gz")


def _head(path: Path) -> bytes:
    try:
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return f.read(HEAD_BYTES)
        with open(path, "rb") as f:
            return f.read(HEAD_BYTES)
    except (OSError, EOFError, gzip.BadGzipFile):
        return b""


def openable(roots: Roots, under: Path | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Every trace, snapshot and rank folder under the roots (or under ``under``, a resolved
    folder inside them), by root and path; and the folders left out, with why.

    Returns
    -------
    entries : list of dict
        ``{path, root, kind, size_bytes, files}`` (:class:`~gpuviz.agents.schemas.Openable`).
    skipped : list of str
    """
    entries: list[dict[str, Any]] = []
    skipped: list[str] = []
    seen = 0
    for root in roots.paths:
        if under is not None and not (under == root or under.is_relative_to(root)):
            continue
        start = under if under is not None else root
        for folder, dirs, names in os.walk(start, followlinks=False):
            seen += 1
            here = Path(folder)
            rel = here.relative_to(root)
            if seen > MAX_FOLDERS:
                skipped.append(
                    f"{rel}: not looked into (the listing stops at {MAX_FOLDERS} folders)"
                )
                dirs[:] = []
                break
            depth = len(rel.parts)
            keep = []
            for d in sorted(dirs):
                if d.startswith(".") or d in SKIP:
                    continue
                if depth + 1 > MAX_DEPTH:
                    skipped.append(f"{rel / d}: deeper than {MAX_DEPTH} folders")
                    continue
                keep.append(d)
            dirs[:] = keep
            traces = []
            for n in sorted(names):
                p = here / n
                low = n.lower()
                kind = (
                    "trace"
                    if low.endswith(TRACE_SUFFIXES)
                    else "snapshot"
                    if low.endswith(SNAPSHOT_SUFFIXES)
                    else None
                )
                if kind is None:
                    continue
                try:
                    real = p.resolve()
                    if not roots.contains(real) or not real.is_file():
                        continue
                    size = real.stat().st_size
                except OSError:
                    continue
                if kind == "trace":
                    head = _head(real)
                    if b'"traceEvents"' not in head:
                        continue  # JSON of something else (a key_averages table, a config)
                    traces.append((size, b'"distributedInfo"' in head))
                entries.append(
                    {
                        "path": str(rel / n),
                        "root": str(root),
                        "kind": kind,
                        "size_bytes": size,
                        "files": 1,
                    }
                )
            if len(traces) >= 2 and all(dist for _, dist in traces):
                entries.append(
                    {
                        "path": str(rel) if rel.parts else ".",
                        "root": str(root),
                        "kind": "rank folder",
                        "size_bytes": sum(s for s, _ in traces),
                        "files": len(traces),
                    }
                )
    entries.sort(key=lambda e: (e["root"], e["path"], e["kind"]))
    return entries, skipped
