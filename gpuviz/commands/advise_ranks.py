"""``gpuviz advise DIR --cluster``: a rank folder's advice from its ranks' files, a rank a task.

Read whole, a folder's ranks are assembled on the client (the workers only decode:
:mod:`gpuviz.trace.cluster_decode`), so the client's memory grows with the folder. Here the
client never holds a rank's trace: the passes of :mod:`gpuviz.analysis.advisor.by_rank` run a
rank a task on the cluster's workers, each reading its rank from the rank's entry in the shared
import cache (:func:`~gpuviz.commands.cluster_ranks.rank_trace`; imported there on pass 0, so
the later passes are cheap):

0. each file's facts and reduction (:func:`cluster_rank_file`); the client makes the job's
   figures (:func:`~gpuviz.analysis.advisor.by_rank.plan_job`), or declines;
1. every hooked rule's per-rank figures (:func:`cluster_phase1`), the job's figures sent with
   the task; the client merges them and picks each rule's worst rank
   (:func:`~gpuviz.analysis.advisor.by_rank.worst_ranks`), or declines;
2. the rules on their worst ranks' files only (:func:`cluster_phase2`), their evidence moved to
   the folder's clock; the client sorts the findings and orders ``host_sync`` and
   ``launch_bound`` (:func:`~gpuviz.analysis.advisor.by_rank.job_advice`).

The advice is that of the folder read whole, byte for byte, or the by-rank passes decline and
the folder is read whole on the cluster as before (None), with nothing more on stdout.
Declined at once for a lone file, a folder of fewer than two files, ``--against`` (its diff
needs both traces), graph captures (``--capture-trace``, ``capture_traces/``), compile info
(``--compile-info`` or the folder's sibling: attached over the whole trace), a folder the
import cache holds already (mapped back at once) and ``GPUVIZ_ADVISE_BY_RANK=0``; after pass 0
or 1 for the reasons of :mod:`~gpuviz.analysis.advisor.by_rank` (among them a folder within
the replay's limits: read whole, it is cheap), and where a rank answered pass 0 but not a later
pass. A folder surely within those limits by its file count and text (a bound on its slices
from the files' JSON: :mod:`gpuviz.trace.slice_bound`) is declined before pass 0, so that it
does not pay an import of every rank on the workers before it is read whole. A rank file
that fails on pass 0 is named on stderr and skipped; the advice of the others is marked
incomplete (JSON ``incomplete``), as ``summary --cluster`` marks it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Advice
    from gpuviz.analysis.advisor.by_rank import JobInputs, RankPass1
    from gpuviz.analysis.advisor.findings import Finding
    from gpuviz.analysis.advisor.rank_inputs import RankFile
    from gpuviz.commands.cluster_ranks import CacheAt
    from gpuviz.trace.model import Trace

ENV = "GPUVIZ_ADVISE_BY_RANK"
"""``0`` reads every folder whole on the cluster (benchmarks compare the two ways)."""

Merged = dict[str, tuple[dict[int, float], dict[int, float]]]


def advise_by_rank_on_cluster(
    path: Path,
    args: argparse.Namespace,
    *,
    whole: bool = False,
    also: Callable[[Trace], Any] | None = None,
    extras: list[Any] | None = None,
) -> tuple[Advice, dict[str, Any] | None] | None:
    """The advice of the rank folder ``path`` from its ranks' files on the active cluster, and
    the ``incomplete`` object (None: every rank answered); None where the folder is read whole
    (see the module docstring), and, with ``whole`` (``check``, which compares whole runs),
    where a rank file fails: then it is not named as skipped here, the folder read whole
    names it.

    ``also`` (a module-level function) is run on each rank's trace in pass 0 besides its
    facts, and its results go to ``extras`` in file order (``check``'s comparison parts: one
    read of each rank fewer than a pass of their own).

    Raises
    ------
    BadInputError
        No rank file could be read.
    """
    from gpuviz.trace import cluster

    on = cluster.active()
    if on is None or not path.is_dir() or os.environ.get(ENV) == "0":
        return None
    if args.against or getattr(args, "capture_trace", None) is not None:
        return None
    if getattr(args, "compile_info", None) is not None or _has_compile_info(path):
        return None
    from gpuviz.trace.files import trace_files
    from gpuviz.trace.graph_captures import capture_files

    files = [str(f) for f in trace_files(path)]
    if len(files) < 2 or capture_files(path):
        return None
    if _within_replay_limits(files):
        return None  # pass 0 would find the same and decline: read whole without it
    from gpuviz.commands.summary_ranks import _cached
    from gpuviz.trace.cache import cache_enabled

    if cache_enabled() and _cached(path, files):
        return None
    from gpuviz.analysis.advisor.by_rank import job_advice, plan_job, worst_ranks
    from gpuviz.commands.cluster_ranks import cache_at, incomplete, map_on_cluster

    cache = cache_at()
    got, failed = map_on_cluster(on, path, files, cluster_rank_file, cache, also, skips=not whole)
    if whole and failed:
        return None
    names = [name for name, _, _ in got]
    if extras is not None:
        extras[:] = [extra for _, _, extra in got]
    plan = plan_job([rf for _, rf, _ in got])
    if plan.declined:
        return None
    assert plan.inputs is not None
    code_of = dict(zip(names, plan.codes, strict=True))
    # The job's figures grow with the ranks: to each worker once, not with each rank's task.
    how1 = (code_of, plan.inputs)
    passes, lost = map_on_cluster(on, path, names, cluster_phase1, how1, cache, scatter=True)
    if lost:
        return None  # a rank pass 0 read is gone: read whole, as the local path reads it
    chosen = worst_ranks(plan, passes)
    if isinstance(chosen, str):
        return None
    merged, worst = chosen
    targets = [names[plan.codes.index(code)] for code in worst]  # rank order
    how = (code_of, plan.inputs, merged, worst)
    found, lost = (
        map_on_cluster(on, path, targets, cluster_phase2, how, cache) if targets else ([], [])
    )
    if lost or any(isinstance(f, str) for f in found):
        return None
    findings: list[Finding] = [f for one in found for f in one]
    return job_advice(plan, passes, findings), incomplete(failed, len(files))


def _within_replay_limits(files: list[str]) -> bool:
    """Whether the folder's files are surely within the advisor's replay limits (ranks and
    slices), decided from their count and text (:func:`~gpuviz.trace.slice_bound.slices_at_most`)
    before any rank is imported: pass 0 would decline such a folder (read whole, it is cheap)."""
    from gpuviz.analysis.advisor import replay
    from gpuviz.trace.slice_bound import slices_at_most

    return len(files) <= replay.MAX_RANKS and slices_at_most(files, replay.MAX_SLICES)


def _has_compile_info(path: Path) -> bool:
    """Whether the folder has a compile-info folder beside it (read whole, it is attached)."""
    from gpuviz.analysis.inductor_provenance import sibling_folder

    return sibling_folder(path) is not None


def _rank(path: str, code: int, cache: CacheAt) -> Trace:
    from gpuviz.analysis.advisor.rank_inputs import as_rank
    from gpuviz.commands.cluster_ranks import rank_trace

    return as_rank(rank_trace(path, cache), code)


def cluster_rank_file(
    path: str, cache: CacheAt, also: Callable[[Trace], Any] | None = None
) -> tuple[str, RankFile, Any]:
    """On a cluster's worker, pass 0: the file, its
    :class:`~gpuviz.analysis.advisor.rank_inputs.RankFile` and what ``also`` makes of its
    trace (None without), the trace read as :func:`~gpuviz.commands.cluster_ranks.rank_trace`
    reads it (into the shared cache)."""
    from gpuviz.analysis.advisor.rank_inputs import rank_file
    from gpuviz.commands.cluster_ranks import rank_trace
    from gpuviz.trace.gcpause import release_freed_memory

    trace = rank_trace(path, cache)
    # also first: rank_file's analyses must not shape what check's comparison reads
    extra = None if also is None else also(trace)
    got = rank_file(trace)
    del trace
    release_freed_memory()
    return path, got, extra


def cluster_phase1(path: str, how: tuple[dict[str, int], JobInputs], cache: CacheAt) -> RankPass1:
    """On a cluster's worker, phase 1 of one rank file: ``how`` is each file's folder rank
    and the job's figures."""
    from gpuviz.analysis.advisor.by_rank import rank_phase1
    from gpuviz.trace.gcpause import release_freed_memory

    code_of, inputs = how
    got = rank_phase1(_rank(path, code_of[path], cache), code_of[path], inputs)
    release_freed_memory()
    return got


def cluster_phase2(
    path: str,
    how: tuple[dict[str, int], JobInputs, Merged, dict[int, list[str]]],
    cache: CacheAt,
) -> list[Finding] | str:
    """On a cluster's worker, phase 2 of a worst rank's file: ``how`` is each file's folder
    rank, the job's figures, the rules' merged savings and the rules of each worst rank."""
    from gpuviz.analysis.advisor.by_rank import rank_phase2
    from gpuviz.trace.gcpause import release_freed_memory

    code_of, inputs, merged, worst = how
    code = code_of[path]
    got = rank_phase2(_rank(path, code, cache), code, inputs, merged, worst[code])
    release_freed_memory()
    return got


__all__ = [
    "ENV",
    "advise_by_rank_on_cluster",
    "cluster_phase1",
    "cluster_phase2",
    "cluster_rank_file",
]
