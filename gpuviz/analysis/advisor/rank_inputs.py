"""What advising a rank folder rank by rank needs before any rule runs (issue 51).

The ranks' files, each imported alone, get their folder rank codes (:func:`ranked_traces`);
their reductions combine into the job's steps and rank analysis
(:func:`~gpuviz.analysis.rank_reduction.combine_reductions`), from which each rank's
:class:`~gpuviz.analysis.advisor.job.JobFigures` are made: every rank's step totals
(:func:`per_rank_steps`) and the aligned collectives on the rank's own clock
(:func:`on_rank_clock`), the best pinned copy bandwidth (:func:`best_pinned`). Qt-free and torch-free.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import numpy as np

from gpuviz.analysis.ranks import RankAnalysis
from gpuviz.analysis.steps import StepBreakdown
from gpuviz.trace.kineto_ranks import assign_ranks
from gpuviz.trace.model import Trace
from gpuviz.trace.one_job import declared_rank


def ranked_traces(traces: Sequence[Trace]) -> tuple[list[Trace], str]:
    """The one-file traces of a folder (in file order) as the folder read whole ranks them,
    sorted by rank, and the import's rank note ("" when the declared ranks were used).

    A file that does not carry its folder rank (no distinct ``distributedInfo.rank`` in every
    file: the folder numbers them in file order) is given it (:meth:`Trace.with_rank`).

    Raises
    ------
    ValueError
        Where a trace holds more than one file, or there is none.
    """
    if not traces:
        raise ValueError("no rank traces to advise")
    for t in traces:
        if len(t.ranks) != 1:
            raise ValueError(f"a rank trace holds one file, not {len(t.ranks)}")
    declared = [declared_rank(t.ranks[0].metadata) for t in traces]
    codes, note = assign_ranks(declared, [t.ranks[0].source for t in traces], True)
    out = []
    for t, code in zip(traces, codes, strict=True):
        k = -1 if code is None else int(code)
        out.append(t if t.ranks[0].rank == k else t.with_rank(k))
    out.sort(key=lambda t: int(t.ranks[0].rank or 0))
    return out, note


def folder_of(traces: Sequence[Trace]) -> str:
    """The folder the traces' files share (for messages)."""
    paths = [str(t.ranks[0].source) for t in traces]
    try:
        return os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0])
    except ValueError:  # paths on different drives, or mixed absolute and relative
        return ""


def per_rank_steps(breakdown: StepBreakdown) -> dict[int, tuple[int, int]]:
    """Per rank of the job's steps: their total length (ns) and their count, as
    ``AdviceContext._per_rank_steps`` gives them for the folder read whole."""
    st = breakdown.steps
    out: dict[int, tuple[int, int]] = {}
    for r, dur in zip(st.rank.tolist(), st.duration_ns.tolist(), strict=True):
        total, count = out.get(int(r), (0, 0))
        out[int(r)] = (total + int(dur), count + 1)
    return dict(sorted(out.items()))


def on_rank_clock(ra: RankAnalysis, offset_ns: int) -> RankAnalysis:
    """``ra`` with its collectives' arrival and end times on a rank's own clock (the folder's
    time less ``offset_ns``, :attr:`ReducedRanks.offset_ns`), as the rules read them against
    that rank's events. Durations (waits, delays) and the absent cells (-1) stay."""
    table = ra.collectives
    present = table.present

    def shift(a: np.ndarray) -> np.ndarray:
        return np.where(present, a - offset_ns, a)

    moved = dataclasses.replace(
        table,
        arrival_ns=shift(table.arrival_ns),
        end_ns=shift(table.end_ns),
        last_arrival_ns=table.last_arrival_ns - offset_ns,
    )
    return dataclasses.replace(ra, collectives=moved)


def best_pinned(per_rank: Sequence[dict[str, float]]) -> dict[str, float]:
    """The best pinned bandwidth per direction over the ranks' own (``pageable_copy``'s
    yardstick: the folder read whole takes the best over all ranks' copies)."""
    out: dict[str, float] = {}
    for bw in per_rank:
        for d, gbps in bw.items():
            out[d] = max(out.get(d, 0.0), gbps)
    return out


__all__ = ["best_pinned", "folder_of", "on_rank_clock", "per_rank_steps", "ranked_traces"]
