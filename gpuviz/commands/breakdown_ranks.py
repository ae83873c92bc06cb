"""``gpuviz breakdown DIR --cluster``: a rank folder's table from its ranks' rows.

Read whole, a folder's ranks are assembled on the client (the workers only decode:
:mod:`gpuviz.trace.cluster_decode`), so the client's memory grows with the folder. The op,
op-shape, kernel, module and source-line tables are sums over calls, each call one rank's
(an op shape's FLOPs and bytes too, its roofline columns made from the sums:
:mod:`gpuviz.analysis.breakdown_shapes`; a module's FLOPs too, its MFU made from the sums:
:mod:`gpuviz.analysis.breakdown_modules`), and a step is one rank's
(:mod:`gpuviz.analysis.breakdown_parts`): so each worker makes its rank's table (from
the rank's entry in the shared import cache, or importing it there) and returns its rows,
and the client sums them by key (steps: puts them in rank order), sorts them and prints them
through the report code of :mod:`gpuviz.commands.breakdown`: the same output as the folder
read whole, byte for byte.

Declined (None: the caller reads the folder whole, on the cluster's workers as before) for a
lone file, a folder of fewer than two files, graph
captures (``--capture-trace`` or ``capture_traces/`` in the folder: a replayed kernel is
placed by its capture, matched over the whole trace), a folder the import cache holds
already (mapped back at once), where the ranks' rows cannot be summed exactly (the
workers' parts say why), and where ``GPUVIZ_BREAKDOWN_BY_RANK=0``. A rank file that fails is
named on stderr and skipped; the answer is marked incomplete (JSON ``incomplete``), as
``summary --cluster`` marks it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuviz.analysis.breakdown_parts import BreakdownPart, MergedBreakdown
    from gpuviz.analysis.peaks import PeakOverride
    from gpuviz.commands.cluster_ranks import CacheAt

ENV = "GPUVIZ_BREAKDOWN_BY_RANK"
"""``0`` reads every folder whole on the cluster (benchmarks compare the two ways)."""


def breakdown_by_rank(
    path: Path, args: argparse.Namespace
) -> tuple[MergedBreakdown, dict[str, Any] | None] | None:
    """The breakdown ``args.by`` of the rank folder ``path`` from its ranks' rows, and the
    ``incomplete`` object (None: every rank answered); None where the folder is read whole
    (see the module docstring).

    Raises
    ------
    BadInputError
        ``--compile-info`` is not a compile-info folder, no rank file could be read, the files
        are not one job, or no rank has Python stacks for ``--by line``.
    """
    from gpuviz.analysis.breakdown_parts import MERGEABLE, merge_breakdown
    from gpuviz.trace import cluster

    on = cluster.active()
    if on is None or args.by not in MERGEABLE or not path.is_dir() or os.environ.get(ENV) == "0":
        return None
    from gpuviz.trace.files import trace_files
    from gpuviz.trace.graph_captures import capture_files

    files = [str(f) for f in trace_files(path)]
    if len(files) < 2 or args.capture_trace is not None or capture_files(path):
        return None
    from gpuviz.commands.summary_ranks import _cached
    from gpuviz.trace.cache import cache_enabled

    if cache_enabled() and _cached(path, files):
        return None
    from gpuviz.commands.cluster_ranks import cache_at, incomplete, map_on_cluster
    from gpuviz.commands.peak_options import peak_override_of

    info = _compile_info_folder(path, args.compile_info)
    how = (args.by, args.mine, peak_override_of(args), info)
    parts, failed = map_on_cluster(on, path, files, cluster_breakdown_part, how, cache_at())
    merged = merge_breakdown(parts)
    if isinstance(merged, str):
        return None  # not a sum on these ranks (merged says why): read whole
    return merged, incomplete(failed, len(files))


def _compile_info_folder(path: Path, given: str | None) -> str | None:
    """The compile-info folder the workers attach to their ranks: ``--compile-info`` (bad
    input where it is not one), else the one beside the folder where it reads (where it does
    not, said on stderr as the folder read whole says it, and none)."""
    from gpuviz.commands.reading import given_compile_info

    if given is not None:
        given_compile_info(given)  # raises BadInputError, naming it
        return str(given)
    from gpuviz.analysis.inductor_provenance import (
        CompileInfoError,
        read_compile_info,
        sibling_folder,
    )

    folder = sibling_folder(path)
    if folder is None:
        return None
    try:
        read_compile_info(folder)
    except (CompileInfoError, OSError) as exc:
        from gpuviz.display import echo, terminal_safe

        echo(f"gpuviz: warning: {terminal_safe(str(exc), one_line=True)}", file=sys.stderr)
        return None
    return str(folder)


def cluster_breakdown_part(
    path: str, how: tuple[str, bool, PeakOverride | None, str | None], cache: CacheAt
) -> BreakdownPart:
    """On a cluster's worker: the :class:`~gpuviz.analysis.breakdown_parts.BreakdownPart` of
    one rank file, ``how`` being the table's ``by``, ``mine``, the caller's peaks and the
    run's compile-info folder (attached first, if any); its trace read as
    :func:`gpuviz.commands.cluster_ranks.rank_trace` reads it."""
    from gpuviz.analysis.breakdown_parts import breakdown_part
    from gpuviz.commands.cluster_ranks import rank_trace
    from gpuviz.trace.gcpause import release_freed_memory

    by, mine, override, compile_info = how
    trace = rank_trace(path, cache)
    if compile_info is not None:
        from gpuviz.analysis.compiled_regions import attach_compile_info
        from gpuviz.analysis.inductor_provenance import read_compile_info

        attach_compile_info(trace, read_compile_info(compile_info))
    part = breakdown_part(trace, by, mine, override)
    del trace
    release_freed_memory()
    return part


__all__ = ["ENV", "breakdown_by_rank", "cluster_breakdown_part"]
