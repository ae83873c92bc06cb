"""``gpuviz check NEW --against BASE --cluster``: each run's comparison inputs from its ranks'
files, a rank a task (issue 51).

Read whole, each run's ranks are assembled on the client (the workers only decode), so the
client's memory grows with both folders. Here, for each run that is a rank folder, the client
never holds a rank's trace:

1. its advice rank by rank (:func:`~gpuviz.commands.advise_ranks.advise_by_rank_on_cluster`:
   passes 0, 1 and 2 on the workers);
2. one more pass: each worker reads its rank back (from the rank's entry in the shared
   import cache) and sends its :class:`~gpuviz.analysis.compare_parts.ComparePart` (memory
   peaks, hardware steps, kernel and op totals, op-table and module-table rows, per-step
   counts); the client merges them
   (:func:`~gpuviz.analysis.compare_parts.merge_compare_parts`) into what
   :func:`~gpuviz.analysis.run_compare.run_inputs` makes of the folder read whole.

The comparison is then the folders' read whole, byte for byte. Each run goes its own way:
where any step declines (the advice's passes decline, among them a folder within the advise
replay's limits; a rank file failed; the parts cannot be summed exactly, see
:mod:`~gpuviz.analysis.compare_parts`), that run is read whole on the cluster as before
(None), and a rank file that fails there is bad input (exit 2, the file named once), as
without ``--cluster``: ``check`` compares whole runs, never part of one, and skips no rank. ``GPUVIZ_CHECK_BY_RANK=0`` reads every run
whole.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuviz.analysis.compare_parts import ComparePart
    from gpuviz.analysis.run_compare import RunInputs
    from gpuviz.commands.cluster_ranks import CacheAt

ENV = "GPUVIZ_CHECK_BY_RANK"
"""``0`` reads every run whole on the cluster (benchmarks and tests compare the two ways)."""


def run_inputs_by_rank(path: Path) -> RunInputs | None:
    """The comparison inputs of the rank folder ``path`` from its ranks' files on the active
    cluster; None where the run is read whole (see the module docstring)."""
    from gpuviz.trace import cluster

    on = cluster.active()
    if on is None or not path.is_dir() or os.environ.get(ENV) == "0":
        return None
    from gpuviz.commands.advise_ranks import advise_by_rank_on_cluster

    # check has no --capture-trace or --compile-info: advise's gates on them stay open
    how = argparse.Namespace(against=None, capture_trace=None, compile_info=None)
    advised = advise_by_rank_on_cluster(path, how, whole=True)
    if advised is None or advised[1] is not None:
        return None  # declined, or a rank failed: check compares whole runs only
    from gpuviz.analysis.compare_parts import merge_compare_parts
    from gpuviz.analysis.run_compare import RunInputs
    from gpuviz.commands.cluster_ranks import cache_at, map_on_cluster
    from gpuviz.trace.files import trace_files
    from gpuviz.trace.one_job import NotOneJobError

    files = [str(f) for f in trace_files(path)]
    parts, failed = map_on_cluster(on, path, files, cluster_compare_part, cache_at(), skips=False)
    if failed:
        return None
    try:
        merged = merge_compare_parts(parts)
    except NotOneJobError:
        return None  # read whole, the folder is refused with the importer's words
    if isinstance(merged, str):
        return None
    advice = advised[0]
    return RunInputs(
        advice,
        merged.peak_bytes,
        merged.totals,
        merged.hardware,
        merged.calls_recorded,
        merged.counts,
    )


def cluster_compare_part(path: str, cache: CacheAt) -> ComparePart:
    """On a cluster's worker: the :class:`~gpuviz.analysis.compare_parts.ComparePart` of one
    rank file, its trace read as :func:`~gpuviz.commands.cluster_ranks.rank_trace` reads it."""
    from gpuviz.analysis.compare_parts import compare_part
    from gpuviz.commands.cluster_ranks import rank_trace
    from gpuviz.trace.gcpause import release_freed_memory

    trace = rank_trace(path, cache)
    got = compare_part(trace)
    del trace
    release_freed_memory()
    return got


__all__ = ["ENV", "cluster_compare_part", "run_inputs_by_rank"]
