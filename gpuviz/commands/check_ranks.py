"""``gpuviz check NEW --against BASE --cluster``: each run's comparison inputs from its ranks'
files, a rank a task (issue 51).

Read whole, each run's ranks are assembled on the client (the workers only decode), so the
client's memory grows with both folders. Here, for each run that is a rank folder, the client
never holds a rank's trace:

1. its advice rank by rank (:func:`~gpuviz.commands.advise_ranks.advise_by_rank_on_cluster`:
   passes 0, 1 and 2 on the workers);
2. in pass 0 of that advice, on the same read of each rank, each worker also sends the
   rank's :class:`~gpuviz.analysis.compare_parts.ComparePart` (memory peaks, hardware steps,
   kernel and op totals, op-table and module-table rows, per-step counts); the client merges
   them
   (:func:`~gpuviz.analysis.compare_parts.merge_compare_parts`) into what
   :func:`~gpuviz.analysis.run_compare.run_inputs` makes of the folder read whole.

The comparison is then the folders' read whole, byte for byte. Each run goes its own way:
where any step declines (the advice's passes decline, among them a folder within the advise
replay's limits; a rank file failed; the parts cannot be summed exactly, see
:mod:`~gpuviz.analysis.compare_parts`), that run is read whole on the cluster as before
(None), and a rank file that fails there is bad input (exit 2, the file named once), as
without ``--cluster``: ``check`` compares whole runs, never part of one, and skips no rank.
``GPUVIZ_CHECK_BY_RANK=0`` reads every run whole.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuviz.analysis.compare_parts import ComparePart
    from gpuviz.analysis.run_compare import RunInputs

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
    from gpuviz.analysis.compare_parts import compare_part, merge_compare_parts

    parts: list[ComparePart] = []  # made in advise's pass 0, on the same read of each rank
    advised = advise_by_rank_on_cluster(path, how, whole=True, also=compare_part, extras=parts)
    if advised is None or advised[1] is not None:
        return None  # declined, or a rank failed: check compares whole runs only
    from gpuviz.analysis.run_compare import RunInputs
    from gpuviz.trace.one_job import NotOneJobError

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


__all__ = ["ENV", "run_inputs_by_rank"]
