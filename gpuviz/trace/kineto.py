"""Import Kineto traces (``torch.profiler`` JSON) into the columnar :class:`Trace` model.

:func:`load_trace` reads one ``.json``/``.json.gz`` file, or a folder of per-rank files, and
returns one :class:`Trace`. Files are read in chunks (:mod:`gpuviz.trace.jsonscan`); each chunk
of events is decoded into numpy column parts (:mod:`gpuviz.trace.kineto_decode`); this module
then aligns the ranks on absolute time and joins the parts into the model's tables, one column
at a time so that the peak memory stays near that of the finished columns.

Format eras handled (see DESIGN.md): 2021 categories (``Kernel``, ``Memcpy`` …), string tids
(``"stream 7"``), absolute µs or µs relative to ``baseTimeNanoseconds``, bare JSON lists,
``[memory]`` events with or without totals, peer-to-peer copies (``args.inDevice``), ROCm.

The ranks' rule (:func:`assign_ranks`) is in :mod:`gpuviz.trace.kineto_ranks`, re-exported
here; the join of each table's parts (args, tracks, narrowed dtypes) in
:mod:`gpuviz.trace.kineto_join`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuviz.trace import memory_budget
from gpuviz.trace.args_text import compression_for
from gpuviz.trace.arrays import mapped_empty
from gpuviz.trace.errors import ImportCancelledError, ImportWarnings
from gpuviz.trace.files import trace_files
from gpuviz.trace.gcpause import gc_paused, release_freed_memory
from gpuviz.trace.kineto_events import STRING_CODE_BASE, Interner, is_string_code
from gpuviz.trace.kineto_join import _join_args, _narrowed_dtype, _track_rows
from gpuviz.trace.kineto_ranks import _base_ns, assign_ranks
from gpuviz.trace.model import (
    NARROWED_COLUMNS,
    NONE,
    Flows,
    Instants,
    Kind,
    MemoryEvents,
    RankInfo,
    Slices,
    SymbolTable,
    Trace,
    TrackKind,
    Tracks,
)
from gpuviz.trace.one_job import check_one_job, declared_rank, file_facts
from gpuviz.trace.slice_sort import SliceSorter

if TYPE_CHECKING:  # the reading machinery is imported by an import, not by a cache hit
    from gpuviz.trace.kineto_decode import Array, FileColumns

__all__ = [
    "STRING_CODE_BASE",
    "ImportCancelledError",
    "assign_ranks",
    "import_trace",
    "is_string_code",
    "load_trace",
    "trace_files",
]

# String pids/tids are stored as ``STRING_CODE_BASE - symbol id`` (see Tracks.pid/tid).


def load_trace(
    path: str | os.PathLike[str],
    *,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    cache: bool = True,
    meanwhile: Sequence[Callable[[], object]] = (),
) -> Trace:
    """Open a Kineto trace file or folder: from the import cache when it holds it, else import.

    This is the one function that commands and the app load traces with. The first open
    imports the file (:func:`import_trace`) and stores the Trace in the user's cache
    (:mod:`gpuviz.trace.cache`); later opens of the unchanged file map it back in a fraction of
    the time. A changed file, another gpuviz format or a damaged entry is imported again.

    Parameters
    ----------
    path : str or PathLike
        A ``.json`` or ``.json.gz`` file, or a folder of them, one per rank.
    progress, cancelled : callable, optional
        As for :func:`import_trace`; a cache hit reports 1.0 once.
    cache : bool
        False to import without the cache (so does ``GPUVIZ_NO_CACHE=1``, which the CLI's
        ``--no-cache`` sets).
    meanwhile : sequence of callable, optional
        As for :func:`import_trace`.

    Returns
    -------
    Trace
        As :func:`import_trace` returns it; from the cache its columns are read-only.

    Raises
    ------
    TraceFormatError, ImportCancelledError
        As for :func:`import_trace`.
    """
    if not cache:
        return import_trace(
            path, progress=progress, cancelled=cancelled, meanwhile=meanwhile
        ).prepare()
    from gpuviz.trace.cache import load_cached  # the cache sits above the importer

    return load_cached(
        path,
        trace_files(path),
        partial(import_trace, meanwhile=meanwhile),
        progress=progress,
        cancelled=cancelled,
    ).prepare()


def import_trace(
    path: str | os.PathLike[str],
    *,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    max_memory: int | None = None,
    meanwhile: Sequence[Callable[[], object]] = (),
) -> Trace:
    """Read a Kineto trace file, or a folder of per-rank trace files, into one Trace.

    The import itself, without the cache (:func:`load_trace` is what callers use).

    Parameters
    ----------
    path : str or PathLike
        A ``.json`` or ``.json.gz`` file (gzip is told by its content), or a folder of them,
        one per rank.
    progress : callable, optional
        Called now and then with the fraction done, from 0.0 to 1.0 (from the calling thread).
    cancelled : callable, optional
        Polled between chunks; when it returns True the import stops with
        :class:`ImportCancelledError`.
    max_memory : int, optional
        Bytes the import may take (0: no limit); default
        :func:`~gpuviz.trace.memory_budget.memory_limit` (``GPUVIZ_MAX_MEMORY``, else half
        the RAM). Where the whole trace would not fit, the import leaves out the args text
        of CPU ops, then python_function slices, and says so in ``warnings`` and
        ``Trace.dropped``.
    meanwhile : sequence of callable, optional
        The caller's own preparation for what follows the import (a command imports the
        modules of its analysis), in small pieces: each run once, in this thread, while the
        import's children decode, where the importer would wait for them. Not run where
        there are no children (a small trace): the caller does without.

    Returns
    -------
    Trace
        All ranks, aligned on absolute time; times are ns relative to the earliest event.

    Raises
    ------
    TraceFormatError
        The path does not exist; a folder holds no trace files; a file is not JSON, not a
        trace, truncated, empty, a memory-timeline export, or holds a GPU activity slice
        without a valid ``ts``/``dur``. The message names the file and the byte or event.
    ImportCancelledError
        ``cancelled()`` returned True.

    Notes
    -----
    Ranks come from ``distributedInfo.rank`` (in a folder, when every file has a distinct
    one), else from the files' name order; a lone file without it has rank None. Each file's
    times are made absolute (``ts`` is µs relative to ``baseTimeNanoseconds`` where the file
    has it, else absolute µs), and the trace's zero is the earliest event of any rank.
    """
    from gpuviz.trace.correlation import warn_shared_ids
    from gpuviz.trace.device_props import warn_repeated_ids
    from gpuviz.trace.kineto_parallel import read_files  # here: a cache hit needs none of it

    root = Path(path)
    files = trace_files(root)
    sizes = [max(f.stat().st_size, 1) for f in files]
    total = float(sum(sizes))
    symbols = SymbolTable()
    interner = Interner(symbols)
    on_read: list[Callable[[int], None] | None] = [None] * len(files)
    plan = import_plan(files, max_memory)
    if progress is not None:
        before = 0
        for i, size in enumerate(sizes):

            def report(n: int, before: int = before) -> None:
                progress(min((before + n) / total, 1.0) * 0.9)

            on_read[i] = report
            before += size
    # The import makes millions of short-lived objects and no reference cycles: the cyclic
    # collector only costs time here (measured: a third of the import's wall time).
    with gc_paused():
        parts = read_files(
            [str(f) for f in files], interner, on_read, cancelled, release_freed_memory,
            plan.drop, meanwhile,
        )  # fmt: skip
        if root.is_dir() and len(parts) > 1:
            _check_one_job(root, parts)
        ranks, rank_note = _assign_ranks(parts, root.is_dir())
        trace = _assemble(parts, ranks, symbols, rank_note)
        warn_shared_ids(trace)  # launches with one correlation id: counted, matched by time
        warn_repeated_ids(trace)  # a device listed twice in deviceProperties
        if plan.drop:
            python, flows = (
                sum(p.dropped_python for p in parts),
                sum(p.dropped_flows for p in parts),
            )
            _say_dropped(trace, plan, python, flows)
        del parts
    # What the import freed (the parts, the assembly's temporaries: 15 MB at 100k kernels)
    # goes back before the caller's next work, whose own temporaries (a summary's: 18 MB)
    # would otherwise stack on top and make a new peak.
    release_freed_memory()
    if progress is not None:
        progress(1.0)
    return trace


def import_plan(
    files: Sequence[str | os.PathLike[str]], max_memory: int | None
) -> memory_budget.ImportPlan:
    """What an import of ``files`` keeps within ``max_memory`` (None: the default limit; 0:
    none), as :func:`import_trace` plans it (how the children are counted and whether the
    args text is compressed decide the estimate, as in ``read_files``)."""
    from gpuviz.trace.kineto_worker import estimated_bytes, worker_count

    sizes = [estimated_bytes(str(f)) for f in files]
    compressed = compression_for(len(files), worker_count(sum(sizes)))
    return memory_budget.plan_import([str(f) for f in files], compressed, max_memory)


def _say_dropped(
    trace: Trace, plan: memory_budget.ImportPlan, python_slices: int, launch_flows: int
) -> None:
    """Name what the import left out: first among the warnings, and in ``trace.dropped``."""
    s = trace.slices
    cpu = (s.kind == Kind.CPU_OP) | (s.kind == Kind.PYTHON_FUNCTION)
    message = memory_budget.dropped_warning(plan, int(cpu.sum()), python_slices, launch_flows)
    w = trace.warnings
    w.samples.insert(0, message)
    del w.samples[w.limit :]
    trace.dropped = plan.drop


# --------------------------------------------------------------------------- ranks


def _check_one_job(root: Path, parts: list[FileColumns]) -> None:
    """Refuse a folder whose files are not one job (:mod:`gpuviz.trace.one_job`), from what
    was read: each file's top-level fields and time range (a pass over its time columns)."""
    facts = []
    for p in parts:
        base = _base_ns(p.metadata)
        first = end = None
        for table, col, dur in ((p.slices, "start_ns", "dur_ns"), (p.instants, "ts_ns", None),
                                (p.flows, "ts_ns", None), (p.memory, "ts_ns", None)):  # fmt: skip
            for i, a in enumerate(table[col]):
                if not a.size:
                    continue
                lo = int(a.min())
                hi = int((a + table[dur][i]).max()) if dur else int(a.max())
                first = lo if first is None else min(first, lo)
                end = hi if end is None else max(end, hi)
        first_abs = None if first is None else first + base
        end_abs = None if end is None else end + base
        facts.append(file_facts(p.path, p.metadata, first_abs, end_abs))
    check_one_job(root, facts)


def _assign_ranks(parts: list[FileColumns], is_folder: bool) -> tuple[list[int | None], str]:
    """Each part's rank, and why the declared ranks were not used ("" when they were)."""
    declared = [declared_rank(p.metadata) for p in parts]
    return assign_ranks(declared, [p.path for p in parts], is_folder)


# --------------------------------------------------------------------------- assembly


def _assemble(
    parts: list[FileColumns], ranks: list[int | None], symbols: SymbolTable, rank_note: str = ""
) -> Trace:
    order = sorted(range(len(parts)), key=lambda i: (ranks[i] is None, ranks[i] or 0, i))
    parts = [parts[i] for i in order]
    ranks = [ranks[i] for i in order]
    bases = [_base_ns(p.metadata) for p in parts]
    starts = []
    for p, base in zip(parts, bases):
        for table, col in ((p.slices, "start_ns"), (p.instants, "ts_ns"), (p.flows, "ts_ns"),
                           (p.memory, "ts_ns")):  # fmt: skip
            mins = [int(a.min()) for a in table[col] if a.size]
            if mins:
                starts.append(min(mins) + base)
    if starts:
        zero = min(starts)
    else:  # only metadata: its own times, if any
        meta_ts = [
            base + round(d["ts"] * 1000)
            for p, base in zip(parts, bases)
            for d in p.metadata_events
            if isinstance(d.get("ts"), int | float)
        ]
        zero = min(meta_ts) if meta_ts else 0

    # Per file: track rows, the lane -> track map, and the shifts its columns need.
    track_parts = []
    lane_tracks = []
    track_shift = []
    n_tracks = 0
    for p, r in zip(parts, ranks):
        lanes = p.tracks.lane_tracks()  # makes the CPU tracks of lanes with no slices
        rows = _track_rows(p, NONE if r is None else r, symbols)
        track_parts.append(rows)
        lane_tracks.append(lanes)
        track_shift.append(n_tracks)
        n_tracks += len(rows["kind"])
    tracks = Tracks(**{k: np.concatenate([t[k] for t in track_parts]) for k in track_parts[0]})

    # Track order: rank, then GPU lanes by device and stream, then CPU lanes by pid and tid.
    # String pids/tids sort by their text, so that the order never depends on interning.
    def id_key(code: int) -> tuple[int, int | str]:
        return (1, symbols[STRING_CODE_BASE - code]) if is_string_code(code) else (0, code)

    keys = [
        (r + 1, k >= TrackKind.CPU_THREAD, d, st, id_key(pi), id_key(ti), k)
        for r, k, d, st, pi, ti in zip(
            tracks.rank.tolist(), tracks.kind.tolist(), tracks.device.tolist(),
            tracks.stream.tolist(), tracks.pid.tolist(), tracks.tid.tolist(),
        )
    ]  # fmt: skip
    t_order = np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
    tracks = tracks.take(t_order)
    remap = np.empty(len(t_order), dtype=np.int32)
    remap[t_order] = np.arange(len(t_order), dtype=np.int32)

    args, args_shift = _join_args(parts)
    shifts = [b - zero for b in bases]

    def column(
        table: str,
        col: str,
        dtype: Any,
        fix: Callable[[int, Array], Array] | None = None,
        into: Array | None = None,
    ) -> Array:
        # Join one column of every file's parts into its place, a file at a time: the file's
        # parts joined and fixed by numpy at once (not part by part from Python: the same
        # time, within the VM's noise), then freed. One np.concatenate of a whole folder's
        # thousands of parts held the GIL
        # for up to 90 ms (the app's GUI thread stalled that long on 32 ranks of 100k
        # kernels), and held every fixed part and the joined column at once. A file's share
        # holds it for about a millisecond a 3 MB column. ``into``: bytes to join it in (a
        # column that is only read once, to be sorted into a column of its own).
        per_file = [getattr(p, table).pop(col) for p in parts]
        n = sum(len(a) for arrs in per_file for a in arrs)
        if into is None:
            joined = mapped_empty(n, dtype)
        else:
            joined = into[: n * np.dtype(dtype).itemsize].view(dtype)
        at = 0
        for i, arrs in enumerate(per_file):
            if not arrs:
                continue
            a = np.concatenate(arrs) if len(arrs) > 1 else arrs[0]
            arrs.clear()
            if fix is not None:
                a = fix(i, a)
            joined[at : at + len(a)] = a
            at += len(a)
            del a
        if joined.nbytes >= TRIM_MIN_BYTES:
            release_freed_memory()  # the parts' pages, before the next column takes new ones
        return joined

    def time_fix(i: int, a: Array) -> Array:
        return a + shifts[i] if shifts[i] else a

    def track_fix(i: int, a: Array) -> Array:
        return remap[a + track_shift[i]]

    def lane_fix(i: int, a: Array) -> Array:
        return remap[lane_tracks[i][a] + track_shift[i]]

    def args_fix(i: int, a: Array) -> Array:
        return np.where(a >= 0, a + args_shift[i], a) if args_shift[i] else a

    # Slices: sort by (track, start), longer first at equal starts so parents precede children;
    # file by file on threads where the files' tracks do not interleave (a rank folder).
    counts = [sum(map(len, p.slices["start_ns"])) for p in parts]
    start = column("slices", "start_ns", np.int64, time_fix)
    dur = column("slices", "dur_ns", np.int64)
    track = column("slices", "track", np.int32, track_fix)
    from concurrent.futures import ThreadPoolExecutor

    from gpuviz.trace.kineto_worker import usable_cores  # read_files has imported it

    cores = usable_cores()
    # A single file on many cores: sorted and stacked run of tracks by run of tracks, on
    # threads, before the other columns join (SliceSorter's by_track). That holds the three
    # columns unsorted and sorted at once (at most ASSEMBLY_THREADS_MAX_ROWS slices).
    sorter = SliceSorter(
        track, start, dur, counts, cores, by_track=threads_for_rows(len(start), cores)
    )
    if sorter.stacked is not None:
        track, start, dur, depth = sorter.stacked
        sorter.stacked = None
    else:
        # One column at a time, so that each unsorted one is freed before the next is taken
        # (all three at once held 20 bytes a slice more: 400 MB of 64 ranks, at the peak).
        start = sorter.take(start)
        dur = sorter.take(dur)
        track = sorter.take(track)
    cols: dict[str, Array] = {"start_ns": start, "dur_ns": dur, "track": track}
    later = [
        (col, _narrowed_dtype(parts, "slices", col) if col in NARROWED_COLUMNS["slices"] else dt,
         fix)
        for col, dt, fix in (("name", np.int32, None), ("cat", np.int32, None),
                             ("kind", np.uint8, None), ("correlation", np.int64, None),
                             ("external_id", np.int64, None), ("bytes", np.int64, None),
                             ("args", np.int32, args_fix))
    ]  # fmt: skip
    flow_id_dtype = _narrowed_dtype(parts, "flows", "flow_id")
    helpers = assembly_threads(sorter, len(start), cores)
    with ThreadPoolExecutor(max(helpers, 1), thread_name_prefix="gpuviz-assemble") as pool:
        if helpers > 1:
            # A single file on an idle many-core host (its stacking rows are made, by_track):
            # every other column's join and reordering at once on threads, since numpy's
            # joins and takes release the GIL.
            later_cols: dict[str, Any] = {
                col: pool.submit(
                    lambda c, d, f: sorter.take(column("slices", c, d, f)), col, dt, fix
                )
                for col, dt, fix in later
            }
        else:
            # One buffer's pages serve each later column's unsorted join in turn: new pages
            # cost a fault each (or their making present), seven columns' worth of them a
            # fifth of a 100k-kernel import's assembly on the 2-core VM. Made once the
            # unsorted keys are freed, so that it never stands beside them (a 64-rank
            # folder's are 300 MB each).
            spare = mapped_empty(sum(counts) * 8, np.uint8)
            # The stacking rows on a thread of their own while the other columns join: their
            # sorts and searches release the GIL (28 of a 100k-kernel file's 110 ms of
            # assembly on the 2-core VM, mostly hidden so). Not where the sorter has threads
            # of its own (a million slices or more, file by file): its temporaries (40 bytes
            # a slice) would stand beside the joins', 1.5 GB of a 64-rank folder.
            depths = pool.submit(sorter.depths, track, start, dur) if sorter.threads == 1 else None
            for col, dt, fix in later:
                cols[col] = sorter.take(column("slices", col, dt, fix, into=spare))
            del spare
            depth = depths.result() if depths is not None else sorter.depths(track, start, dur)
            sorter.release()  # its order (8 bytes a slice), before the other tables join

        def get(
            table: str, col: str, dtype: Any, fix: Callable[[int, Array], Array] | None = None
        ) -> Any:
            """One column of the other tables: on the threads, or joined here and now."""
            if helpers > 1:
                return pool.submit(column, table, col, dtype, fix)
            return _Done(column(table, col, dtype, fix))

        instant_cols = {
            "ts_ns": get("instants", "ts_ns", np.int64, time_fix),
            "track": get("instants", "lane", np.int32, lane_fix),
            "name": get("instants", "name", np.int32), "cat": get("instants", "cat", np.int32),
            "phase": get("instants", "phase", np.uint8),
            "args": get("instants", "args", np.int32, args_fix),
        }  # fmt: skip
        flow_cols = {
            "flow_id": get("flows", "flow_id", flow_id_dtype),
            "phase": get("flows", "phase", np.uint8),
            "ts_ns": get("flows", "ts_ns", np.int64, time_fix),
            "track": get("flows", "lane", np.int32, lane_fix),
            "name": get("flows", "name", np.int32), "cat": get("flows", "cat", np.int32),
            "enclosing": get("flows", "enclosing", np.uint8),
        }  # fmt: skip
        mem_counts = [sum(map(len, p.memory["ts_ns"])) for p in parts]
        mem_rank = mapped_empty(sum(mem_counts), np.int32)
        for r, a, b in zip(ranks, np.cumsum([0, *mem_counts]), np.cumsum(mem_counts)):
            mem_rank[a:b] = NONE if r is None else r
        memory_cols = {
            "ts_ns": get("memory", "ts_ns", np.int64, time_fix),
            "device_type": get("memory", "device_type", np.int8),
            "device_id": get("memory", "device_id", np.int32),
            "addr": get("memory", "addr", np.int64), "bytes": get("memory", "bytes", np.int64),
            "total_allocated": get("memory", "total_allocated", np.int64),
            "total_reserved": get("memory", "total_reserved", np.int64),
            "track": get("memory", "lane", np.int32, lane_fix),
        }  # fmt: skip
        if helpers > 1:
            cols.update((col, f.result()) for col, f in later_cols.items())
            sorter.release()
        slices = Slices(depth=depth, **cols)
        instants = Instants(**{k: f.result() for k, f in instant_cols.items()})
        flows = Flows(**{k: f.result() for k, f in flow_cols.items()})
        memory = MemoryEvents(rank=mem_rank, **{k: f.result() for k, f in memory_cols.items()})

    warnings = ImportWarnings()
    if rank_note:  # first, so that no list of skipped events pushes it out of the samples
        warnings.add(rank_note, 0)
    infos = []
    meta_events = []
    for p, r, base in zip(parts, ranks, bases):
        warnings.extend(p.warnings)
        infos.append(RankInfo(rank=r, source=p.path, metadata=p.metadata, offset_ns=base,
                              event_count=p.event_count))  # fmt: skip
        for d in p.metadata_events:
            d["rank"] = r
            meta_events.append(d)
    return Trace(
        symbols=symbols, slices=slices, tracks=tracks, flows=flows, memory=memory,
        instants=instants, args=args, ranks=infos, zero_ns=int(zero),
        event_count=sum(p.event_count for p in parts), warnings=warnings,
        metadata_events=meta_events,
    )  # fmt: skip


ASSEMBLY_THREADS = 6
"""Threads that join and reorder a single large file's columns at once (see
:func:`assembly_threads`)."""
ASSEMBLY_THREADS_MIN_ROWS = 1 << 16
"""Below this many slices the assembly takes a few ms, less than starting the threads saves."""
ASSEMBLY_THREADS_MAX_ROWS = 4 << 20
"""Above this many slices the columns are joined one at a time: each join in flight holds its
unsorted and its sorted column (16 bytes a slice each), which a few million slices make
hundreds of MB."""


def assembly_threads(sorter: SliceSorter, rows: int, cores: int) -> int:
    """Threads for the columns' joins and reordering: 0 (one at a time, beside one thread for
    the stacking rows) unless a single file's slices are sorted on the calling thread
    (``sorter.threads == 1``), there are from :data:`ASSEMBLY_THREADS_MIN_ROWS` to
    :data:`ASSEMBLY_THREADS_MAX_ROWS` of them, and at least 4 cores may be used.

    On a 16-core H200 (2026-11-29), with the 14 import children idle by then, a 100k-kernel
    file's assembly (325k slices, in one process, 4 runs each) took 81-109 ms one column at
    a time and 65-73 ms on these threads (the joins and takes hold the GIL between numpy's
    calls, which bounds what threads gain).
    """
    return threads_for_rows(rows, cores) if sorter.threads == 1 else 0


def threads_for_rows(rows: int, cores: int) -> int:
    """:func:`assembly_threads` for ``rows`` slices, were they sorted on the calling thread."""
    if cores < 4 or not ASSEMBLY_THREADS_MIN_ROWS <= rows <= ASSEMBLY_THREADS_MAX_ROWS:
        return 0
    return min(ASSEMBLY_THREADS, cores - 1)


class _Done:
    """A value already computed, with a future's ``result()``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


TRIM_MIN_BYTES = 8 << 20
"""A joined column at least this large gives the freed heap back (about a ms a call) before
the next is joined: a 64-rank folder's columns are hundreds of MB each, and its parts' freed
pages would stack on the peak. A single file's columns of a few MB are not worth it: the pages
given back were faulted in again by the next column's temporaries."""
