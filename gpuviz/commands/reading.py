"""Reading a trace for a command: with a progress bar on stderr when it is a terminal.

The app shows how far a long read has come; the CLI does the same, so that a large file (or a
small gzip file that inflates to gigabytes) is never a silent wait. When stderr is not a
terminal (scripts, pipes, tests) nothing is drawn. Past its first second the bar says about
how long is left (:class:`gpuviz.trace.progress_estimate.TimeLeft`). Ctrl-C stops the read at once: the
importer's threads and children stop with it, and ``gpuviz`` exits 130.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from gpuviz.analysis.inductor_provenance import CompileInfo
    from gpuviz.trace.model import Trace

T = TypeVar("T")
OnProgress = Callable[[float], None]


def read_trace(
    path: str | os.PathLike[str],
    *,
    say_dropped: bool = False,
    meanwhile: Sequence[Callable[[], object]] = (),
    captures: bool = False,
    capture_trace: str | os.PathLike[str] | None = None,
    compile_info: str | os.PathLike[str] | None = None,
) -> Trace:
    """:func:`gpuviz.trace.kineto.load_trace` of ``path``, showing its progress on a terminal.

    With ``say_dropped`` (for output with no place for it: JSON, ``check``'s brief report),
    what the import left out to fit the memory limit is said on stderr; a text report lists
    it among its import warnings instead. ``meanwhile``: as for ``load_trace``. With
    ``captures``, the graph captures (``capture_trace``, else ``capture_traces/`` beside
    ``path``) are read too and attached (:mod:`gpuviz.trace.graph_captures`); a
    ``capture_trace`` that does not exist is bad input. ``compile_info``: Inductor's
    compile-info folder of the run (``--compile-info``), else the one beside the trace
    (``run.compile/``) if any; every table of the trace then places compiled kernels on the
    modules and lines that wrote them (BadInputError if the given folder is not one).
    """
    from gpuviz.errors import BadInputError

    if capture_trace is not None and not os.path.exists(capture_trace):
        raise BadInputError(f"--capture-trace {capture_trace}: no such file or folder")
    info = None if compile_info is None else given_compile_info(compile_info)
    trace = _read(path, meanwhile)
    from gpuviz.analysis.compiled_regions import attach_compile_info, attach_sibling_compile_info
    from gpuviz.display import echo, terminal_safe

    if info is not None:
        attach_compile_info(trace, info)
    else:
        why = attach_sibling_compile_info(trace, path)
        if why is not None:  # a folder beside the trace that is not one: said, passed over
            echo(f"gpuviz: warning: {terminal_safe(why, one_line=True)}", file=sys.stderr)
    if captures:
        from gpuviz.trace.graph_captures import load_with_captures

        load_with_captures(path, capture_trace, load=lambda p: trace if p == path else _read(p))

    if say_dropped and trace.dropped:
        for w in trace.warnings.samples[:1]:
            echo(f"gpuviz: warning: {terminal_safe(w, one_line=True)}", file=sys.stderr)
    # Ranges left open at the trace's end are clipped to their step by every analysis: the
    # warning joins the import's (which text reports list), and goes to stderr where no
    # report lists them.
    from gpuviz.analysis.open_ranges import open_ranges

    clipped = open_ranges(trace).message
    if say_dropped and clipped is not None:
        echo(f"gpuviz: warning: {terminal_safe(clipped, one_line=True)}", file=sys.stderr)
    return trace


def given_compile_info(folder: str | os.PathLike[str]) -> CompileInfo:
    """``--compile-info DIR`` read; a folder that is not one is bad input."""
    from gpuviz.analysis.inductor_provenance import CompileInfoError, read_compile_info
    from gpuviz.errors import BadInputError

    try:
        return read_compile_info(folder)
    except (CompileInfoError, OSError) as exc:
        raise BadInputError(f"--compile-info {exc}") from None


def import_warnings(trace: Trace) -> list[str]:
    """What the import of ``trace`` warned of (files that claim one rank, skipped events).

    The one source of what every command that loads a trace says of its import: text reports
    list these under their ``trace:`` line (:func:`gpuviz.display.warning_lines`), JSON
    carries them as ``import_warnings`` (absent when there are none), and output with no
    place for them (``export``'s list of files) has them on stderr (:func:`say_warnings`).
    """
    return list(getattr(trace.warnings, "samples", None) or [])


def say_warnings(trace: Trace, command: str) -> None:
    """Print :func:`import_warnings` on stderr, ``gpuviz COMMAND: warning: …``."""
    from gpuviz.display import echo, warning_lines

    for line in warning_lines(import_warnings(trace)):
        echo(f"gpuviz {command}: {line.strip()}", file=sys.stderr)


def _read(path: str | os.PathLike[str], meanwhile: Sequence[Callable[[], object]] = ()) -> Trace:
    from gpuviz.trace.kineto import load_trace

    return with_progress(
        path, lambda progress: load_trace(path, progress=progress, meanwhile=meanwhile)
    )


def with_progress(
    path: str | os.PathLike[str],
    read: Callable[[OnProgress | None], T],
    detail: Callable[[], str] | None = None,
) -> T:
    """``read(progress)``, drawing a bar on stderr from the fractions it reports to
    ``progress`` (None when stderr is not a terminal: nothing is drawn); ``detail()``, when
    given, is shown after the time left at each report (``--cluster``: ranks done per
    worker)."""
    if not _stderr_is_terminal():
        return read(None)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    from gpuviz.trace.progress_estimate import TimeLeft, describe_time_left

    bar = Progress(
        TextColumn("reading {task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        # Our own estimate, not rich's TimeRemainingColumn: rich's rate over the last
        # samples jumps with the importer's bursty reports (see progress_estimate).
        TextColumn("{task.fields[left]}"),
        console=Console(stderr=True),
        transient=True,  # gone once read: the command's own output follows
    )
    from rich.markup import escape

    from gpuviz.display import terminal_safe

    # A file name is data: its control characters shown, its "[...]" not read as markup.
    name = os.path.basename(os.fspath(path).rstrip("/")) or os.fspath(path)
    estimate = TimeLeft()
    start = time.monotonic()

    def progress(frac: float) -> None:
        left = describe_time_left(estimate.update(frac, time.monotonic() - start))
        if detail is not None:
            left = f"{left}  {escape(terminal_safe(detail(), one_line=True))}".strip()
        bar.update(task, completed=frac, left=left)

    with bar:
        task = bar.add_task(escape(terminal_safe(name, one_line=True)), total=1.0, left="")
        return read(progress)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed or replaced stderr
        return False


__all__ = ["import_warnings", "read_trace", "say_warnings"]
