"""Background work for the app: load a trace and compute its analyses off the GUI thread.

The job itself is plain Python (:func:`load_and_analyze`, :func:`analyze`): it never touches a
widget. :class:`QtTraceWorker` runs one job in a ``QThread`` and turns its progress and result
into signals, which Qt delivers on the GUI thread (queued connections).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QThread, Signal

from gpuviz.display import echo_traceback
from gpuviz.trace.errors import ImportCancelledError
from gpuviz.trace.model import Trace

ProgressFn = Callable[[float, str], None]
CancelledFn = Callable[[], bool]


@dataclass
class TraceAnalyses:
    """A trace and the figures its views show, each computed once, in the background.

    An analysis that failed leaves its field ``None`` and its message in ``errors``, so one bad
    analysis shows an error in its own view and the others still work.

    Attributes
    ----------
    trace : Trace
    summary, kernels, memory, splits, advice : object or None
        The results of ``summarize``, ``kernel_table``, ``memory_series``, ``find_splits`` and
        ``advise`` (the Insights view's step breakdown and findings).
    ranks : RankAnalysis or None
        ``rank_analysis`` (rank × step measures, aligned collectives, the straggler) of a
        trace of two or more ranks; None for one process.
    errors : dict of str to str
        Analysis name -> one-line message (``"snapshot"``: an allocator snapshot that could
        not be read).
    snapshots : list of MemoryTimeline
        Allocator snapshots shown with the trace (one per snapshot and device).
    snapshot_only : bool
        True when a snapshot (or a folder of rank snapshots) was opened alone (the trace is
        empty).
    snapshot_ranks : list of int
        With snapshots of several ranks: the rank of each of ``snapshots``.
    snapshot_table : RankTable or None
        With snapshots of several ranks: their figures (``gpuviz memory DIR``'s table).
    reduced : ReducedRanks or None
        A rank folder opened from its ranks' reductions (:func:`load_reduced`): the trace is
        empty, ``ranks`` is the Ranks view's analysis, and a rank opens on demand.
    """

    trace: Trace
    summary: Any = None
    kernels: Any = None
    memory: Any = None
    splits: Any = None
    advice: Any = None
    ranks: Any = None
    errors: dict[str, str] = field(default_factory=dict)
    snapshots: list[Any] = field(default_factory=list)
    snapshot_only: bool = False
    snapshot_ranks: list[int] = field(default_factory=list)
    snapshot_table: Any = None
    reduced: Any = None


class ImportCancelled(Exception):
    """Raised inside a job when the user pressed Cancel."""


def _analysis_functions() -> dict[str, Callable[[Trace], Any]]:
    # Imported when a job runs: the analyses are numpy-only, but the GUI modules should not pay
    # for them before a trace is opened.
    from gpuviz.analysis.advisor import advise
    from gpuviz.analysis.kernels import kernel_table
    from gpuviz.analysis.memory import memory_series
    from gpuviz.analysis.ranks import rank_analysis
    from gpuviz.analysis.splits import find_splits
    from gpuviz.analysis.summary import summarize

    def ranks(trace: Trace) -> Any:
        # One process has nothing to compare its rank with (and its steps cost time to find).
        return rank_analysis(trace) if len(trace.ranks) >= 2 else None

    return {
        "summary": summarize,
        "kernels": kernel_table,
        "memory": memory_series,
        "splits": find_splits,
        "advice": advise,
        "ranks": ranks,
    }


def analyze(
    trace: Trace, progress: ProgressFn | None = None, cancelled: CancelledFn | None = None
) -> TraceAnalyses:
    """Run every analysis a trace's views need.

    Parameters
    ----------
    trace : Trace
    progress : callable, optional
        ``progress(fraction, what)``.
    cancelled : callable, optional
        Returns True when the work should stop; checked between analyses.

    Returns
    -------
    TraceAnalyses
    """
    out = TraceAnalyses(trace)
    try:
        funcs = _analysis_functions()
    except ImportError as exc:  # an analysis module that is not there yet
        out.errors = {
            k: f"analysis unavailable: {exc}"
            for k in ("summary", "kernels", "memory", "splits", "advice", "ranks")
        }
        return out
    for i, (key, func) in enumerate(funcs.items()):
        if cancelled is not None and cancelled():
            raise ImportCancelled()
        if progress is not None:
            progress(i / len(funcs), f"computing {key}")
        # summarize() computes the memory series and the splits on its way: reuse them.
        if key in ("memory", "splits") and out.summary is not None:
            setattr(out, key, getattr(out.summary, key))
            continue
        try:
            context = getattr(out.advice, "context", None)
            if key == "ranks" and context is not None:
                # The advisor's straggler rule ran the same rank analysis: one result for
                # the Ranks view and the Insights view, computed once.
                out.ranks = context.ranks
            else:
                setattr(out, key, func(trace))
        except Exception as exc:
            out.errors[key] = f"{type(exc).__name__}: {exc}"
            echo_traceback()
    return out


def load_and_analyze(
    path: str,
    progress: ProgressFn | None = None,
    cancelled: CancelledFn | None = None,
    capture_trace: str | None = None,
    reduced: bool | None = None,
    compile_info: str | None = None,
) -> TraceAnalyses:
    """Read a trace file or folder, then compute its analyses.

    A big rank folder (or any, with ``reduced``; :func:`~gpuviz.analysis.rank_reduction_map.
    wants_reduction`) opens from its ranks' reductions instead (:func:`load_reduced`).

    The graph captures of its CUDA/HIP graph replays (``capture_trace``, a file or folder;
    else ``capture_traces/`` beside ``path``) are read too, so that the Operators, Modules and
    Source views put each replayed kernel where it was captured
    (:mod:`gpuviz.trace.graph_captures`).

    ``compile_info``: the run's compile-info folder (``gpuviz open --compile-info``), else
    ``NAME.compile/`` beside ``path`` where there is one: a compiled model's kernels go on its
    modules and lines, and Inductor's generated kernels get their FLOPs (docs/flops.md).

    Loading takes the first 90% of the progress bar; the analyses the rest.

    Raises
    ------
    gpuviz.trace.errors.TraceFormatError
        The file is not a trace.
    ImportCancelled
        ``cancelled()`` became true.
    """
    from gpuviz.trace import kineto
    from gpuviz.trace.allocator_snapshot import is_snapshot_path

    if is_snapshot_path(path):
        return load_snapshot_alone(path, progress, cancelled)
    if is_snapshot_folder(path):
        return load_rank_snapshots(path, progress, cancelled)
    from gpuviz.analysis.rank_reduction_map import wants_reduction

    if wants_reduction(path, reduced):
        return load_reduced(path, progress, cancelled)

    def load_progress(*args: Any) -> None:
        if progress is None or not args:
            return
        # The importer reports either a fraction, or (done, total).
        if len(args) >= 2 and isinstance(args[1], (int, float)) and args[1]:
            frac = float(args[0]) / float(args[1])
        else:
            frac = float(args[0])
        progress(0.9 * min(max(frac, 0.0), 1.0), "reading")

    try:
        from gpuviz.trace.graph_captures import load_with_captures

        def load(p: Any) -> Any:
            if p == path:
                return kineto.load_trace(p, progress=load_progress, cancelled=cancelled)
            return kineto.load_trace(p, cancelled=cancelled)

        trace = load_with_captures(path, capture_trace, load=load)
    except ImportCancelledError as exc:
        raise ImportCancelled() from exc

    def analysis_progress(frac: float, what: str) -> None:
        if progress is not None:
            progress(0.9 + 0.1 * frac, what)

    from gpuviz.analysis.compiled_regions import attach_compile_info, attach_sibling_compile_info

    # A compiled model's compile-info folder (given, else NAME.compile/ beside the trace): the
    # Modules, Source and Operators views place its kernels on the model's modules and lines
    # (docs/attribution.md), and its generated kernels' FLOPs count (docs/flops.md).
    if compile_info is not None:
        from gpuviz.analysis.inductor_provenance import read_compile_info

        attach_compile_info(trace, read_compile_info(compile_info))
    else:
        attach_sibling_compile_info(trace, path)
    out = analyze(trace, analysis_progress, cancelled)
    attach_snapshots(out, path)
    _prepare_timeline(trace)
    return out


def load_reduced(
    path: str, progress: ProgressFn | None = None, cancelled: CancelledFn | None = None
) -> TraceAnalyses:
    """Open a rank folder from its ranks' reductions, made in the local pool or on the
    cluster (:func:`~gpuviz.analysis.rank_reduction_map.reduce_folder`): the Ranks view
    without any rank's events; a rank is loaded (from its cache entry) when the user opens it.
    A rank that could not be read is left out, named in ``reduced.failed`` (the Ranks view's
    status line names it)."""
    from gpuviz.analysis.rank_reduction_map import reduce_folder

    try:
        reduced = reduce_folder(path, progress, cancelled)
    except ImportCancelledError as exc:
        raise ImportCancelled() from exc
    return TraceAnalyses(Trace.empty(path), ranks=reduced.analysis, reduced=reduced)


def _prepare_timeline(trace: Any) -> None:
    """What the Timeline's first build would do on the GUI thread, done here on the loading
    thread: import its modules (their classes only: no Qt object is made) and compute the
    tracks' depths. Together they were most of a 69 ms stall of the GUI thread as the Timeline
    of a 64-rank folder first opened on a 16-core H200 host (issue 25: at most 50 ms)."""
    from gpuviz.gui.timeline import qt_timeline  # noqa: F401
    from gpuviz.trace.lanes import track_depths

    track_depths(trace)


def snapshot_files(path: str) -> list[Path]:
    """The allocator snapshots recorded with a trace: ``NAME.memory.pickle`` beside a file,
    ``rank-N.memory.pickle`` (or ``.pickle.gz``) in a rank folder."""
    from gpuviz.analysis.allocator_ranks import rank_snapshot_files
    from gpuviz.trace.allocator_snapshot import snapshot_path_for

    p = Path(path)
    if p.is_dir():
        return [f for _, f in rank_snapshot_files(p)]
    snap = snapshot_path_for(p)
    return [snap] if snap.is_file() else []


def is_snapshot_folder(path: str) -> bool:
    """Whether ``path`` is a folder of rank snapshots with no trace file in it (a folder with
    traces opens as a trace, its snapshots attached)."""
    from gpuviz.analysis.allocator_ranks import has_rank_snapshots

    p = Path(path)
    if not has_rank_snapshots(p):
        return False
    return not any(q.name.lower().endswith((".json", ".json.gz")) for q in p.iterdir())


def attach_snapshots(out: TraceAnalyses, path: str) -> None:
    """Load the snapshots recorded with the trace at ``path`` into ``out`` (errors noted).

    A rank folder's snapshots are read side by side (:func:`~gpuviz.analysis.allocator_ranks.
    map_ranks`), and get the ranks' table.
    """
    from gpuviz.analysis.allocator_ranks import RANK_SNAPSHOT, RankTimelines, map_ranks

    files = snapshot_files(path)
    if not files:
        return

    def note(message: str) -> None:
        out.errors["snapshot"] = message

    folder = Path(path).is_dir()
    read = RankTimelines(out.trace.zero_ns, _trace_span_ns(out.trace), named=folder)
    per_file = map_ranks(read, files, on_error=note)
    if not folder:
        out.snapshots += per_file[0] or []
        return
    ranks = [int(m.group(1)) for f in files if (m := RANK_SNAPSHOT.fullmatch(f.name))]
    _add_rank_timelines(out, path, ranks, per_file)


def _add_rank_timelines(
    out: TraceAnalyses, path: str, ranks: list[int], per_file: list[Any]
) -> None:
    from gpuviz.analysis.allocator_ranks import on_common_origin, table_of_timelines

    for rank, tls in zip(ranks, per_file):
        out.snapshots += tls or []
        out.snapshot_ranks += [rank] * len(tls or [])
    out.snapshots = on_common_origin(out.snapshots)
    kept = [(r, t) for r, t in zip(ranks, per_file) if t]
    out.snapshot_table = table_of_timelines(path, [r for r, _ in kept], [t for _, t in kept])


def load_rank_snapshots(
    path: str, progress: ProgressFn | None = None, cancelled: CancelledFn | None = None
) -> TraceAnalyses:
    """Open a folder of rank snapshots without a trace: an empty trace, each rank's models
    and the ranks' table. A file that cannot be read fails the whole folder (one line naming
    it), as ``gpuviz memory DIR`` does."""
    from gpuviz.analysis.allocator_ranks import RankTimelines, map_ranks, rank_snapshot_files

    files = rank_snapshot_files(path)

    def read_progress(frac: float) -> None:
        if progress is not None:
            progress(0.95 * frac, f"reading {len(files)} rank snapshots (no code in them runs)")

    try:
        per_file = map_ranks(RankTimelines(), [f for _, f in files], read_progress, cancelled)
    except ImportCancelledError as exc:
        raise ImportCancelled() from exc
    out = TraceAnalyses(Trace.empty(path), snapshot_only=True)
    _add_rank_timelines(out, path, [r for r, _ in files], per_file)
    if not out.snapshots:
        out.errors["snapshot"] = f"{path}: no allocator activity in any rank's snapshot"
    return out


def _trace_span_ns(trace: Trace) -> int:
    s = trace.slices
    return int((s.start_ns + s.dur_ns).max()) if len(s) else 0


def load_snapshot_alone(
    path: str, progress: ProgressFn | None = None, cancelled: CancelledFn | None = None
) -> TraceAnalyses:
    """Open an allocator snapshot without a trace: an empty trace, and the snapshot's models."""
    from gpuviz.analysis.allocator_timeline import build_timelines
    from gpuviz.trace.allocator_snapshot import load_snapshot

    def read_progress(frac: float) -> None:
        if progress is not None:
            progress(0.85 * frac, "reading the snapshot (no code in it runs)")

    try:
        snap = load_snapshot(path, read_progress, cancelled)
    except ImportCancelledError as exc:
        raise ImportCancelled() from exc
    if progress is not None:
        progress(0.9, "computing the timeline")
    out = TraceAnalyses(Trace.empty(path), snapshot_only=True)
    out.snapshots = build_timelines(snap)
    if not out.snapshots:
        out.errors["snapshot"] = f"{path}: no allocator activity (no segments, no history)"
    return out


class QtTraceWorker(QThread):
    """Runs one job (``job(progress, cancelled) -> result``) in its own thread.

    Signals (all delivered on the GUI thread)
    -------
    progressed(float, str)
        Fraction done and what is being done; at most about 20 a second.
    succeeded(object)
        The job's result.
    failed(str)
        One line: what went wrong (a TraceFormatError's message names the file).
    cancelled()
        The job stopped because :meth:`cancel` was called.

    Exactly one of ``succeeded``, ``failed`` and ``cancelled`` is emitted, then ``finished``.

    Parameters
    ----------
    job : callable
        ``job(progress, cancelled)``; runs in the worker thread and must not touch widgets.
    label : str
        What the job is about (a file name), for the progress bar.
    """

    progressed = Signal(float, str)
    succeeded = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(
        self, job: Callable[[ProgressFn, CancelledFn], Any], label: str, parent: Any = None
    ) -> None:
        super().__init__(parent)
        self.job = job
        self.label = label
        self._cancel = False
        self._last_progress = 0.0

    def cancel(self) -> None:
        """Ask the job to stop at its next check (thread-safe: it only sets a flag)."""
        self._cancel = True

    def is_cancel_requested(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancel

    def _progress(self, fraction: float, what: str = "") -> None:
        # Called in the worker thread; throttled so a chatty importer cannot flood the GUI.
        now = time.monotonic()
        if now - self._last_progress >= 0.05 or fraction >= 1.0:
            self._last_progress = now
            self.progressed.emit(float(fraction), what)

    def run(self) -> None:
        try:
            result = self.job(self._progress, self.is_cancel_requested)
        except (ImportCancelled, ImportCancelledError):
            self.cancelled.emit()
            return
        except Exception as exc:
            if self._cancel:
                self.cancelled.emit()
                return
            self.failed.emit(_one_line(exc))
            return
        if self._cancel:
            self.cancelled.emit()
        else:
            self.succeeded.emit(result)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else type(exc).__name__
    from gpuviz.errors import BadInputError

    if isinstance(exc, BadInputError):  # TraceFormatError and its kinds name the file
        return msg
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or msg}"
    return f"{type(exc).__name__}: {msg}"


def trace_title(path: str) -> str:
    """A tab title for a trace file or folder: its name without ``.json.gz``."""
    p = Path(path)
    name = p.name or str(p)
    for suffix in (".memory.pickle", ".pickle.gz", ".pickle", ".json.gz", ".json", ".gz"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name
