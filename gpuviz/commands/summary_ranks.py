"""``gpuviz summary`` of a rank folder, a rank at a time, where the whole trace is not kept.

Read whole, a folder's ranks are all in memory at once: 64 ranks of 100k kernels (10 GB of
JSON) held a 2.3 GB trace and peaked at 3.1 GB of PSS on a 16-core H200, all to print figures
that are each a rank's own or sums over ranks (:mod:`gpuviz.analysis.rank_parts`). So where
nothing else wants the whole trace, each file is imported and summarized alone, in a child
process (forked where the import's children are: :func:`~gpuviz.trace.kineto_worker.start_method`),
which sends back its figures only; the figures are merged here, exactly as the folder's.

Used when the import cache is off (``--no-cache``), or where the whole trace would not fit the
memory limit (it would leave parts out, and such a trace is not cached either) and the cache
does not hold it already: with the cache on, the whole trace is imported once and stored, so
that the next ``summary`` or ``open`` maps it back at once. Declined (the caller reads the folder whole) for a lone file,
for a folder where one file alone would not fit the limit, and where the ranks' GPUs have
different peaks (:func:`~gpuviz.analysis.rank_parts.merge_parts`), and where
``GPUVIZ_SUMMARY_BY_RANK=0``.

As many children as the import would use and the limit allows (each holds one rank's trace,
about one byte per byte of its JSON at its peak: :func:`~gpuviz.trace.memory_budget.estimate_bytes`);
one, or none on a busy or small import, where the files are read here one after the other.
The children are :func:`gpuviz.trace.rank_pool.map_ranks`'s, as the rank snapshots': errors
name the file, as the folder's import does (the first bad file in file order); a child that
the system kills (out of memory) fails the command, naming the file; Ctrl-C stops the
children at once (they ignore it: it is this process's to handle).
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuviz.analysis.hardware import Hardware
    from gpuviz.analysis.peaks import PeakOverride
    from gpuviz.analysis.rank_parts import RankPart
    from gpuviz.analysis.summary import Summary
    from gpuviz.trace.cluster import Cluster

ENV = "GPUVIZ_SUMMARY_BY_RANK"
"""``0`` reads every folder whole (benchmarks compare the two ways)."""
MIN_FILES = 2
"""A folder of fewer files is read whole (a lone file is its own rank anyway)."""


Merged = tuple["Summary", "Hardware", list[str], dict[str, Any] | None]
"""A folder's summary, MFU figures, stderr lines and ``serving`` object (None: no serving
step), as :func:`summarize_ranks` gives them."""


def summarize_ranks(path: Path, args: argparse.Namespace) -> Merged | None:
    """The summary, MFU figures, stderr lines and ``serving`` object of the rank folder
    ``path``, its files read one at a time; None where it is read whole instead (see the
    module docstring)."""
    from gpuviz.trace import memory_budget
    from gpuviz.trace.cache import cache_enabled
    from gpuviz.trace.files import trace_files

    if not path.is_dir() or os.environ.get(ENV) == "0":
        return None
    files = [str(f) for f in trace_files(path)]
    if len(files) < MIN_FILES:
        return None
    from gpuviz.trace import cluster

    on = cluster.active()
    if on is not None:
        # The folder's entry in the cache is mapped back in a fraction of a second: the
        # cluster has nothing to do for it.
        if cache_enabled() and _cached(path, files):
            return None
        return _on_cluster(on, path, files, args)
    limit = memory_budget.memory_limit()
    if cache_enabled() and (_whole_fits(files, limit) or _cached(path, files)):
        return None
    workers = _workers(files, limit)
    if workers is None:
        return None
    from gpuviz.commands.peak_options import peak_override_of
    from gpuviz.commands.reading import with_progress

    override = peak_override_of(args)
    parts = with_progress(path, lambda progress: _parts(files, override, workers, progress))
    from gpuviz.analysis.rank_parts import merge_parts

    merged = merge_parts(parts)
    if merged is None:
        return None
    return _finish(merged, parts)


def _finish(merged: tuple[Summary, Hardware], parts: list[RankPart]) -> Merged:
    from gpuviz.analysis.rank_parts import merge_serving
    from gpuviz.commands.peak_options import unknown_device_line

    summary, hw = merged
    line = unknown_device_line(hw)
    warned = [f"gpuviz: warning: {w}" for w in hw.warnings]  # calls skipped, as summary's
    return summary, hw, warned + ([] if line is None else [line]), merge_serving(parts, hw)


def _on_cluster(
    on: Cluster, path: Path, files: list[str], args: argparse.Namespace
) -> Merged | None:
    """The summary of the rank folder ``path`` from its ranks' parts, each made by a worker of
    the cluster ``on`` (:func:`cluster_part`), merged here as the local pool's are.

    A rank that fails (a bad file, or a worker that died past Dask's retries) is named on
    stderr and left out; the others' figures stand, and the summary is marked incomplete
    (:attr:`Summary.incomplete`; JSON ``incomplete``). None where the parts cannot be merged
    (the ranks' GPUs have different peaks): the caller reads the folder whole (on the cluster
    too: :mod:`gpuviz.trace.cluster_decode`).
    """
    from gpuviz.commands.cluster_ranks import cache_at, incomplete, map_on_cluster
    from gpuviz.commands.peak_options import peak_override_of

    override = peak_override_of(args)
    parts, failed = map_on_cluster(on, path, files, cluster_part, override, cache_at())
    from gpuviz.analysis.rank_parts import merge_parts

    merged = merge_parts(parts)
    if merged is None:
        return None
    summary, hw, err, serving = _finish(merged, parts)
    summary.incomplete = incomplete(failed, len(files))
    return summary, hw, err, serving


def cluster_part(
    path: str, override: PeakOverride | None, cache: tuple[str, int] | None
) -> RankPart:
    """On a cluster's worker: the :class:`RankPart` of one rank file, read from its entry in
    the import cache at ``cache`` (the folder and its cap: the client's, on shared storage)
    or imported into it; imported alone where ``cache`` is None."""
    from gpuviz.analysis.rank_parts import rank_part
    from gpuviz.commands.cluster_ranks import rank_trace
    from gpuviz.trace.gcpause import release_freed_memory

    trace = rank_trace(path, cache)
    part = rank_part(trace, override)
    del trace
    release_freed_memory()
    return part


def _cached(path: Path, files: list[str]) -> bool:
    """Whether the import cache holds the folder (read whole from it, it is mapped, not
    imported: a fraction of a second, whatever its size)."""
    from gpuviz.trace.cache import TraceCache

    cache = TraceCache.default()
    if cache is None:
        return False
    try:
        return cache.holds(cache.key(path, files))
    except OSError:
        return False


def _whole_fits(files: list[str], limit: int) -> bool:
    """Whether the folder read whole would keep everything within ``limit``."""
    from gpuviz.trace.kineto import import_plan

    return not import_plan(files, limit).drop


def _workers(files: list[str], limit: int) -> int | None:
    """Children to read ``files`` with (0: here, one after the other), or None where the
    largest file alone would not fit ``limit``."""
    from gpuviz.trace import memory_budget
    from gpuviz.trace.kineto_worker import estimated_bytes, worker_count

    # The import's own count, plus one: the importer decodes beside its children, this
    # process only waits.
    n = min(len(files), worker_count(sum(map(estimated_bytes, files))) + 1)
    if limit:
        one = max(memory_budget.estimate_bytes(memory_budget.json_bytes(f), False) for f in files)
        room = (limit - memory_budget.BASE_BYTES) // max(one - memory_budget.BASE_BYTES, 1)
        if room < 1:
            return None
        n = min(n, int(room))
    return 0 if n <= 1 else n


def _parts(
    files: list[str],
    override: PeakOverride | None,
    workers: int,
    progress: Any,
) -> list[RankPart]:
    """Each file's :class:`RankPart`, in file order (:func:`gpuviz.trace.rank_pool.map_ranks`:
    the first bad file raises, naming it; so does a child the system kills)."""
    import functools

    from gpuviz.trace.rank_pool import map_ranks

    read = functools.partial(_part_in_child, override=override)
    parts = map_ranks(read, files, workers, progress, initializer=_child_init)
    return [p for p in parts if p is not None]


def _child_init() -> None:
    from gpuviz.trace import args_text

    # Ctrl-C is the parent's to handle: it stops the children itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # One rank's file is imported in the child itself, with no children of its own, and its
    # args text compressed as a folder's is (a 166 MB rank on the 2-core VM: the child's peak
    # 94 MB against 144, of which 23 are the interpreter's).
    os.environ["GPUVIZ_IMPORT_WORKERS"] = "0"
    os.environ.setdefault(args_text.ENV, "1")


def _part_in_child(path: str, override: PeakOverride | None) -> RankPart:
    return part_of(path, override)  # looked up when called: tests replace it


def part_of(path: str, override: PeakOverride | None) -> RankPart:
    """The :class:`RankPart` of one rank file, imported alone (no memory limit: the caller
    counted it), its trace let go and the heap's freed pages given back."""
    from gpuviz.analysis.rank_parts import rank_part
    from gpuviz.trace.gcpause import release_freed_memory
    from gpuviz.trace.kineto import import_trace

    part = rank_part(import_trace(path, max_memory=0).prepare(), override)
    release_freed_memory()
    return part
