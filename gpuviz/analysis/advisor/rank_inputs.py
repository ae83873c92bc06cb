"""What advising a rank folder rank by rank needs before any rule runs (issue 51).

Each rank's file, imported alone, gives its facts (:func:`rank_file`: its declared rank, its
reduction, its pinned bandwidth), from which the files get their folder rank codes
(:func:`rank_codes`, :func:`as_rank`); their reductions combine into the job's steps and rank analysis
(:func:`~gpuviz.analysis.rank_reduction.combine_reductions`), from which each rank's
:class:`~gpuviz.analysis.advisor.job.JobFigures` are made: every rank's step totals
(:func:`per_rank_steps`) and the aligned collectives on the rank's own clock
(:func:`on_rank_clock`), the best pinned copy bandwidth (:func:`best_pinned`). Qt-free and torch-free.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gpuviz.analysis.advisor.context import AdviceContext
from gpuviz.analysis.advisor.pageable_copy import pinned_bandwidth
from gpuviz.analysis.rank_reduction import RankReduction, rank_reduction
from gpuviz.analysis.ranks import RankAnalysis
from gpuviz.analysis.steps import StepBreakdown
from gpuviz.trace.errors import ImportWarnings
from gpuviz.trace.kineto_ranks import assign_ranks
from gpuviz.trace.model import Trace
from gpuviz.trace.one_job import FileFacts, file_facts


@dataclass
class RankFile:
    """What one rank's file, imported alone, gives the job before any rule runs.

    Attributes
    ----------
    source : str
        The file.
    declared : int or None
        The rank it declares (``distributedInfo.rank``).
    facts : FileFacts
        What it says of its job (:func:`~gpuviz.trace.one_job.check_one_job`).
    slices : int
        Its slices (the replay's limit counts the job's).
    warned : bool
        Whether its import warned.
    warnings : ImportWarnings
        Its import warnings as the import left them, before any analysis added its own (the
        folder's are rebuilt from them: :func:`folder_warnings`).
    clipped : str or None
        Its ranges left open at its end (:func:`~gpuviz.analysis.open_ranges.open_ranges`'s
        warning), None where there are none.
    dropped : tuple of str
        What its import left out to stay within its memory limit (``Trace.dropped``).
    reduction : RankReduction
        Its steps, their per-GPU split and its collective parts.
    pinned_gbps : dict of str to float
        Its best pinned copy bandwidth per direction (``pageable_copy``).
    """

    source: str
    declared: int | None
    facts: FileFacts
    slices: int
    warned: bool
    reduction: RankReduction
    pinned_gbps: dict[str, float]
    warnings: ImportWarnings = dataclasses.field(default_factory=ImportWarnings)
    clipped: str | None = None
    dropped: tuple[str, ...] = ()


def rank_file(trace: Trace) -> RankFile:
    """The :class:`RankFile` of one file's trace.

    Raises
    ------
    ValueError
        Where the trace holds more than one file.
    """
    if len(trace.ranks) != 1:
        raise ValueError(f"a rank trace holds one file, not {len(trace.ranks)}")
    from gpuviz.analysis.open_ranges import open_ranges

    own = trace.warnings if trace.warnings is not None else ImportWarnings()
    # a copy first: open_ranges (here, or in an analysis below) adds its line to the trace's
    warnings = ImportWarnings(limit=own.limit)
    warnings.extend(own)
    clipped = open_ranges(trace).message
    red = rank_reduction(trace)
    return RankFile(
        source=str(trace.ranks[0].source),
        declared=red.declared,
        facts=red.job or file_facts(trace.ranks[0].source, trace.ranks[0].metadata, None, None),
        slices=len(trace.slices),
        warned=bool(warnings.samples),
        reduction=red,
        pinned_gbps=pinned_bandwidth(AdviceContext(trace)),
        warnings=warnings,
        clipped=clipped,
        dropped=tuple(trace.dropped),
    )


def rank_codes(files: Sequence[RankFile]) -> tuple[list[int], str]:
    """Each file's rank as the folder read whole numbers it (files in file order), and the
    import's rank note ("" when the declared ranks were used)."""
    codes, note = assign_ranks([f.declared for f in files], [f.source for f in files], True)
    return [-1 if c is None else int(c) for c in codes], note


def folder_warnings(files: Sequence[RankFile], codes: Sequence[int], note: str) -> ImportWarnings:
    """The import warnings of the folder read whole, from its files' own (``codes``: their
    folder ranks, :func:`rank_codes`): the rank note first, then each file's in rank order
    (the order the import assembles the files in, not their name order), all under one cap
    (``ImportWarnings.limit``), as :func:`gpuviz.trace.kineto.load_trace` gives them."""
    out = ImportWarnings()  # the folder's own cap, as the import makes it
    if note:  # first, so that no list of skipped events pushes it out of the samples
        out.add(note, 0)
    for i in sorted(range(len(files)), key=lambda i: (codes[i], i)):
        out.extend(files[i].warnings)
    return out


def as_rank(trace: Trace, code: int) -> Trace:
    """``trace`` as rank ``code`` (:meth:`Trace.with_rank`), itself where it says so."""
    return trace if trace.ranks[0].rank == code else trace.with_rank(code)


def folder_of(paths: Sequence[str]) -> str:
    """The folder the files share (for messages)."""
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


__all__ = [
    "RankFile",
    "as_rank",
    "best_pinned",
    "folder_of",
    "folder_warnings",
    "on_rank_clock",
    "per_rank_steps",
    "rank_codes",
    "rank_file",
]
