"""Capture traces of CUDA/HIP graphs, kept with the run that replays the graphs.

vLLM and SGLang profile each graph's capture into ``capture_traces/`` beside the run's trace,
with ``execution_details.json`` naming the files (batch size and mode of each). The analyses
read a run's captures from ``Trace.derived[CAPTURES]``
(:mod:`gpuviz.analysis.graph_merge`): :func:`attach_captures` puts them there, and
:func:`load_with_captures` opens a run with them, found beside it or named by the caller
(``--capture-trace``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the capture files' stamps of a kept summary need no numpy nor msgspec
    from gpuviz.trace.model import Trace

CAPTURES = "graph_captures"
"""``Trace.derived`` key of the capture traces attached to a run."""

CAPTURE_ERRORS = "graph_capture_errors"
"""``Trace.derived`` key of why capture traces found beside the run could not be read."""

CAPTURE_FOLDER = "capture_traces"
DETAILS = "execution_details.json"


def capture_files(trace_path: str | os.PathLike[str]) -> list[Path]:
    """The capture traces beside a run.

    Parameters
    ----------
    trace_path : str or PathLike
        The run's trace file, or its folder.

    Returns
    -------
    list of Path
        The files ``capture_traces/execution_details.json`` names, else every
        ``*.json``/``*.json.gz`` file of ``capture_traces/``; empty without that folder.
    """
    p = Path(trace_path)
    folder = (p if p.is_dir() else p.parent) / CAPTURE_FOLDER
    return folder_captures(folder) if folder.is_dir() else []


def folder_captures(folder: Path) -> list[Path]:
    """The capture traces of a ``capture_traces/``-like folder: the files its
    ``execution_details.json`` names, else its ``*.json``/``*.json.gz`` files."""
    named: list[Path] = []
    details = folder / DETAILS
    if details.is_file():
        try:
            entries: Any = json.loads(details.read_text())
        except (OSError, ValueError):
            entries = []
        for e in entries if isinstance(entries, list) else [entries]:
            name = e.get("file") if isinstance(e, dict) else None
            # A bare file name inside the folder: a details file cannot point elsewhere.
            if isinstance(name, str) and (folder / Path(name).name).is_file():
                named.append(folder / Path(name).name)
    if named:
        return named
    return sorted(
        f
        for f in folder.iterdir()
        if f.is_file() and f.name != DETAILS and f.name.lower().endswith((".json", ".json.gz"))
    )


def attach_captures(trace: Trace, captures: list[Trace]) -> Trace:
    """Keep ``captures`` with ``trace`` for the analyses (replacing any attached before).

    Returns ``trace``.
    """
    trace.derived[CAPTURES] = list(captures)
    # Tables computed without them are stale now.
    trace.derived.pop("attribution", None)
    return trace


def load_with_captures(
    path: str | os.PathLike[str],
    capture: str | os.PathLike[str] | None = None,
    load: Callable[[str | os.PathLike[str]], Trace] | None = None,
) -> Trace:
    """Open a run and its graph captures.

    Parameters
    ----------
    path : str or PathLike
        The run's trace.
    capture : str or PathLike, optional
        A capture trace file, or a folder of them; None to use the ``capture_traces/`` folder
        beside ``path`` where there is one.
    load : callable, optional
        How to open one trace (default :func:`gpuviz.trace.kineto.load_trace`).

    Returns
    -------
    Trace
        The run, with its captures attached.

    Raises
    ------
    TraceFormatError
        As the loader raises it, for the run or a named capture (one found beside the run
        that cannot be read is left out, its error kept in ``trace.derived[CAPTURE_ERRORS]``).
    """
    if load is None:
        from gpuviz.trace.kineto import load_trace

        load = load_trace
    trace = load(path)
    if capture is not None:
        c = Path(capture)
        files = folder_captures(c) if c.is_dir() else [c]
        if files:
            attach_captures(trace, [load(f) for f in files])
        return trace
    # Found, not asked for: one that cannot be read is said, and the run opens without it.
    from gpuviz.trace.errors import TraceFormatError

    got, errors = [], []
    for f in capture_files(path):
        try:
            got.append(load(f))
        except TraceFormatError as exc:
            errors.append(str(exc))
    if got:
        attach_captures(trace, got)
    if errors:
        trace.derived[CAPTURE_ERRORS] = errors
    return trace
