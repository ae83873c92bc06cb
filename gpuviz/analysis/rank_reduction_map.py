"""A rank folder's per-rank reductions, made in the local pool or on a Dask cluster.

:func:`reduce_folder` is how the app opens a big rank folder (:func:`wants_reduction`): each
rank file is imported alone into its own entry of the import cache and reduced there
(:func:`reduce_file`, :mod:`gpuviz.analysis.rank_reduction`), in the children of
:func:`gpuviz.trace.rank_pool.map_ranks`, or, where ``GPUVIZ_CLUSTER`` names a cluster, on its
workers next to the files (:func:`gpuviz.trace.cluster.map_files`). Only the reductions (some
KB a rank) come back; no rank's events are held here. A rank opened afterwards ("Open rank N":
``load_trace`` of its file) maps its cache entry back instead of importing it again.

A file that cannot be read is named and left out (the others' figures stand, the view says it
is incomplete); cancel stops every child or task at once. Qt-free, torch-free.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from gpuviz.analysis.rank_reduction import (
    RankReduction,
    ReducedRanks,
    combine_reductions,
    rank_reduction,
)

ENV = "GPUVIZ_RANKS_REDUCED"
"""``1``: open every rank folder from its reductions; ``0``: never; unset: from
:data:`REDUCE_AT` ranks up."""
REDUCE_AT = 64
"""A folder of at least this many rank files opens from its reductions: read whole, 64 ranks
of 10k kernels already hold some GB of events, most of which the first view (Ranks) never
reads."""

ProgressFn = Callable[[float, str], None]


def wants_reduction(path: str | os.PathLike[str], asked: bool | None = None) -> bool:
    """Whether the app opens ``path`` from per-rank reductions (see :data:`ENV`).

    Parameters
    ----------
    path : path
        A file or folder.
    asked : bool, optional
        The user's choice (``gpuviz open --ranks-reduced``); None: :data:`ENV`, else the size.
    """
    from gpuviz.trace.files import trace_files

    p = Path(path)
    if not p.is_dir():
        return False
    if asked is None:
        value = os.environ.get(ENV, "").strip().lower()
        asked = {"1": True, "true": True, "0": False, "false": False}.get(value)
    try:
        n = len(trace_files(p))
    except (OSError, ValueError):
        return False
    if n < 2:
        return False
    return asked if asked is not None else n >= REDUCE_AT


def reduce_file(path: str, cache: tuple[str, int] | None) -> RankReduction:
    """In a child or on a worker: the reduction of one rank file, read from its entry in the
    import cache at ``cache`` (folder, cap) or imported into it; imported alone for None."""
    from gpuviz.trace import args_text
    from gpuviz.trace.cache import TraceCache, load_cached
    from gpuviz.trace.files import trace_files
    from gpuviz.trace.gcpause import release_freed_memory
    from gpuviz.trace.kineto import import_trace

    # One rank is imported in this process, without children of its own (a pool's children
    # and Dask's workers are daemons), its args text compressed as a folder's is.
    os.environ["GPUVIZ_IMPORT_WORKERS"] = "0"
    os.environ.setdefault(args_text.ENV, "1")
    importer = partial(import_trace, max_memory=0)
    if cache is None:
        trace = importer(path)
    else:
        # Keyed as load_trace(path) keys it: the drill-down finds this entry.
        store = TraceCache(Path(cache[0]), cache[1])
        trace = load_cached(path, trace_files(path), importer, cache=store)
    out = rank_reduction(trace.prepare())
    del trace
    release_freed_memory()
    return out


def reduce_folder(
    path: str | os.PathLike[str],
    progress: ProgressFn | None = None,
    cancelled: Callable[[], bool] | None = None,
    workers: int | None = None,
) -> ReducedRanks:
    """The Ranks view of the rank folder ``path`` from its ranks' reductions.

    Parameters
    ----------
    path : path
        A folder of per-rank trace files.
    progress : callable, optional
        ``progress(fraction, what)``: "ranks done k of N" (per worker on a cluster).
    cancelled : callable, optional
        Polled while waiting: cancels every rank at once
        (:class:`~gpuviz.trace.errors.ImportCancelledError`).
    workers : int, optional
        Local children (0: here, one after the other); default as the import would use.

    Returns
    -------
    ReducedRanks
        Files that failed are named in ``failed`` and left out.

    Raises
    ------
    BadInputError
        No rank file could be read.
    """
    from gpuviz.errors import BadInputError
    from gpuviz.trace import cluster
    from gpuviz.trace.cache import TraceCache, cache_enabled
    from gpuviz.trace.files import trace_files

    files = [str(f) for f in trace_files(Path(path))]
    store = TraceCache.default() if cache_enabled() else None
    where = None if store is None else (str(store.root), store.max_bytes)
    failed: list[str] = []
    on = cluster.active()
    address = None if on is not None else cluster.address_of(None)
    if on is not None or address:

        def report(p: Any) -> None:
            if progress is not None:
                progress(p.done / p.total, p.line())

        with cluster.using(address) as started:
            got = cluster.map_files(
                on or started,  # type: ignore[arg-type]  # one of them is a cluster
                reduce_file,
                files,
                where,
                progress=report,
                cancelled=cancelled,
                on_error=failed.append,
            )
    else:
        from gpuviz.trace.rank_pool import map_ranks

        def fraction(f: float) -> None:
            if progress is not None:
                done = round(f * len(files))
                progress(f, f"ranks reduced: {done} of {len(files)}")

        n = _workers(files) if workers is None else workers
        got = map_ranks(
            partial(reduce_file, cache=where),
            files,
            n,
            fraction,
            cancelled,
            on_error=failed.append,
            initializer=_child_init,
        )
    reds = [r for r in got if r is not None]
    if not reds:
        raise BadInputError(f"{path}: no rank file could be read ({len(failed)} failed)")
    return combine_reductions(one_job(path, reds), failed)


def one_job(path: str | os.PathLike[str], reds: list[RankReduction]) -> list[RankReduction]:
    """The reductions of a folder's files (in file order), ranked as the folder read whole
    ranks them (:func:`~gpuviz.trace.kineto_ranks.assign_ranks`: the declared ranks where each
    file declares a distinct one, else file order).

    Raises
    ------
    NotOneJobError
        The files are not one job (:func:`~gpuviz.trace.one_job.check_one_job`): the app
        opens each file instead, as it does for such a folder read whole.
    """
    from gpuviz.trace.kineto_ranks import assign_ranks
    from gpuviz.trace.one_job import check_one_job

    check_one_job(Path(path), [r.job for r in reds if r.job is not None])
    ranks, _ = assign_ranks([r.declared for r in reds], [r.source for r in reds], True)
    return [
        r if r.rank == k else r.with_rank(-1 if k is None else int(k)) for r, k in zip(reds, ranks)
    ]


def _workers(files: list[str]) -> int:
    from gpuviz.trace.kineto_worker import estimated_bytes, worker_count

    # The import's own count, plus one: this process only waits.
    n = min(len(files), worker_count(sum(map(estimated_bytes, files))) + 1)
    return 0 if n <= 1 else n


def _child_init() -> None:
    # Cancel and Ctrl-C are the parent's to handle: it stops the children itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


__all__ = ["ENV", "REDUCE_AT", "one_job", "reduce_file", "reduce_folder", "wants_reduction"]
