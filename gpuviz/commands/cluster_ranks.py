"""A rank folder's files reduced one per task on a Dask cluster, for the commands that merge
per-rank reductions (``summary``: :mod:`gpuviz.commands.summary_ranks`; ``breakdown``:
:mod:`gpuviz.commands.breakdown_ranks`).

Both sides of the work: :func:`map_on_cluster` (the client: progress, the closing line on
stderr, each failed rank named and skipped) and :func:`rank_trace` (a worker: one rank's
trace, from its entry in the shared import cache or imported into it). ``docs/cluster.md`` is
the user guide.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuviz.trace.cluster import Cluster
    from gpuviz.trace.model import Trace

CacheAt = tuple[str, int] | None
"""Where the workers keep their ranks' cache entries: the client's cache folder and its cap
(on shared storage), or None (``--no-cache``: each rank imported alone)."""


def cache_at() -> CacheAt:
    """This process's import cache, as the workers are told of it."""
    from gpuviz.trace.cache import TraceCache, cache_enabled

    cache = TraceCache.default() if cache_enabled() else None
    return None if cache is None else (str(cache.root), cache.max_bytes)


def map_on_cluster(
    on: Cluster,
    path: Path,
    files: list[str],
    func: Callable[..., Any],
    *args: Any,
    scatter: bool = False,
    skips: bool = True,
) -> tuple[list[Any], list[str]]:
    """``func(file, *args)`` for each of the folder ``path``'s ``files`` on the cluster ``on``
    (``scatter``: ``args`` sent to each worker once, :func:`gpuviz.trace.cluster.map_files`).

    Progress shows on a terminal (ranks done per worker), stderr then says how the ranks went
    (``gpuviz: cluster ADDRESS: 4/4 ranks done; by worker: …``) and names each rank that
    failed (``gpuviz: warning: rank skipped: …``), unless ``skips`` is false: the caller
    skips no rank (``check`` compares whole runs) and its failure names the file.

    Returns
    -------
    (list, list of str)
        The results of the files that were read, in file order, and the one line of each
        file that failed (a bad file, a worker that died past Dask's retries).

    Raises
    ------
    BadInputError
        No file could be read.
    """
    from gpuviz.commands.reading import with_progress
    from gpuviz.display import echo, terminal_safe
    from gpuviz.trace import cluster

    failed: list[str] = []
    state: list[cluster.Progress] = []

    def read(progress: Any) -> list[Any]:
        def report(p: cluster.Progress) -> None:
            state[:] = [p]
            if progress is not None:
                progress(p.done / p.total)

        return cluster.map_files(
            on, func, files, *args, progress=report, on_error=failed.append, scatter=scatter
        )

    def detail() -> str:
        return state[0].line() if state else ""

    got = [p for p in with_progress(path, read, detail) if p is not None]
    if state:
        echo(f"gpuviz: cluster {terminal_safe(on.address)}: {state[0].line()}", file=sys.stderr)
    for line in failed if skips else []:
        echo(
            f"gpuviz: warning: rank skipped: {terminal_safe(line, one_line=True)}", file=sys.stderr
        )
    if not got:
        from gpuviz.errors import BadInputError

        raise BadInputError(f"{path}: no rank file could be read ({len(failed)} failed)")
    return got, failed


def incomplete(failed: list[str], of: int) -> dict[str, Any] | None:
    """The JSON ``incomplete`` object of an answer without the ranks ``failed`` (None: whole)."""
    return {"ranks_failed": len(failed), "of": of, "failed": failed} if failed else None


def incomplete_line(incomplete: dict[str, Any]) -> str:
    """The text reports' line under ``trace:`` of an answer without some ranks."""
    return (
        f"incomplete: {incomplete['ranks_failed']} of {incomplete['of']} rank files "
        "failed and are left out (named on stderr); the figures are the other ranks'"
    )


def rank_trace(path: str, cache: CacheAt) -> Trace:
    """On a cluster's worker: the prepared trace of one rank file, read from its entry in the
    import cache at ``cache`` or imported into it; imported alone where ``cache`` is None."""
    from functools import partial

    from gpuviz.trace import args_text
    from gpuviz.trace.cache import TraceCache, load_cached
    from gpuviz.trace.kineto import import_trace

    # A worker is one process of the cluster's: it imports its rank alone, without children
    # of its own (Dask's workers are daemons), its args text compressed as a folder's is.
    os.environ["GPUVIZ_IMPORT_WORKERS"] = "0"
    os.environ.setdefault(args_text.ENV, "1")
    importer = partial(import_trace, max_memory=0)
    if cache is None:
        return importer(path).prepare()
    store = TraceCache(Path(cache[0]), cache[1])
    return load_cached(path, [path], importer, cache=store).prepare()


__all__ = [
    "CacheAt",
    "cache_at",
    "incomplete",
    "incomplete_line",
    "map_on_cluster",
    "rank_trace",
]
