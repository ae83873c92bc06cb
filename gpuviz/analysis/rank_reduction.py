"""The Ranks view of a rank folder from per-rank reductions, without the ranks' events.

A folder of 1,000 ranks read whole holds every rank's events at once; the Ranks view needs,
per rank, only its step windows and their per-GPU split, its collective parts (one row per
NCCL kernel or gloo range) and, on a rank without GPU work, the time its CPU ops cover. So
each rank file is imported alone (in a child of the local pool, or on a cluster's worker,
next to the file), reduced by :func:`rank_reduction` to a :class:`RankReduction` (some KB),
and the client combines them with :func:`combine_reductions` into the same
:class:`~gpuviz.analysis.ranks.RankAnalysis` that :func:`~gpuviz.analysis.ranks.rank_analysis`
gives for the folder read whole: same matrix, same aligned collectives, same straggler.

Times: a rank imported alone counts from its own zero (its earliest event); the folder's zero
is the earliest of all ranks', so each rank's times are shifted by ``zero_ns - base``
(:attr:`ReducedRanks.offset_ns`). A collective part's ``slice_row`` stays a row of the rank's
own trace: the one a drill-down opens (``gpuviz.gui``: "Open rank N").

Qt-free and torch-free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.collectives import CollectiveParts, align_parts, collective_parts
from gpuviz.analysis.intervals import merge
from gpuviz.analysis.ranks import (
    RankAnalysis,
    cpu_op_rows,
    cpu_step_measures,
    find_straggler,
    step_matrix,
)
from gpuviz.analysis.steps import DeviceStepTimes, StepBreakdown, Steps, step_breakdown
from gpuviz.trace.model import Trace
from gpuviz.trace.one_job import FileFacts, declared_rank, file_facts

I64 = npt.NDArray[np.int64]

_DEVICE_FIELDS = tuple(f.name for f in fields(DeviceStepTimes))
_STEP_TIMES = ("start_ns", "end_ns", "cpu_start_ns", "cpu_end_ns")


@dataclass
class RankReduction:
    """What the Ranks view needs of one rank file (see the module docstring).

    Attributes
    ----------
    rank : int
        The rank (-1 for a file without distributed info).
    source : str
        The file.
    zero_ns : int
        Absolute time of the rank's zero: its times below count from it.
    event_count : int
        Events of the file (for the view's status line).
    breakdown : StepBreakdown
        Its steps and their per-GPU split (``step_breakdown`` of the rank alone).
    ops : (int64 array, int64 array)
        Merged intervals of its CPU ops, where a step of it has no GPU work; else empty.
    parts : CollectiveParts
        Its collective parts (``row``: a row of its own trace).
    job : FileFacts or None
        What the file says of its job (:mod:`gpuviz.trace.one_job`): a folder is one job
        only where its files agree.
    declared : int or None
        The rank the file declares (``distributedInfo.rank``).
    """

    rank: int
    source: str
    zero_ns: int
    event_count: int
    breakdown: StepBreakdown
    ops: tuple[I64, I64]
    parts: CollectiveParts
    job: FileFacts | None = None
    declared: int | None = None

    def with_rank(self, rank: int) -> RankReduction:
        """The same, as rank ``rank`` (a folder whose files do not each declare a distinct
        rank numbers them in file order, as :func:`gpuviz.trace.kineto_ranks.assign_ranks`)."""
        b, p = self.breakdown, self.parts

        def as_rank(a: I64) -> I64:
            return np.full(len(a), rank, dtype=np.int64)

        steps = dataclasses.replace(b.steps, rank=as_rank(b.steps.rank))
        devices = dataclasses.replace(b.devices, rank=as_rank(b.devices.rank))
        return dataclasses.replace(
            self,
            rank=rank,
            breakdown=dataclasses.replace(b, steps=steps, devices=devices),
            parts=dataclasses.replace(p, rank=as_rank(p.rank)),
        )


def rank_reduction(trace: Trace) -> RankReduction:
    """The :class:`RankReduction` of a trace of one rank file, imported alone."""
    if len(trace.ranks) != 1:
        raise ValueError(f"rank_reduction takes one file's trace, not {len(trace.ranks)}")
    info = trace.ranks[0]
    b = step_breakdown(trace)
    s = trace.slices
    ops = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    has_gpu = np.zeros(len(b.steps), dtype=bool)
    has_gpu[b.devices.step] = True
    if not has_gpu.all():
        # Only ranks with a CPU-only step need their ops, and only their union: the
        # compute of such a step is the time ops cover less the time spent waiting.
        rows = cpu_op_rows(trace)
        ops = merge(s.start_ns[rows], s.start_ns[rows] + s.dur_ns[rows])
    first = end = None
    if len(s):
        first = trace.zero_ns + int(s.start_ns.min())
        end = trace.zero_ns + trace.slices_end_ns
    return RankReduction(
        job=file_facts(info.source, info.metadata, first, end),
        declared=declared_rank(info.metadata),
        rank=-1 if info.rank is None else int(info.rank),
        source=str(info.source),
        zero_ns=int(trace.zero_ns),
        event_count=int(trace.event_count),
        breakdown=b,
        ops=ops,
        parts=collective_parts(trace),
    )


@dataclass
class ReducedRanks:
    """A rank folder's Ranks view, combined from its ranks' reductions.

    Attributes
    ----------
    analysis : RankAnalysis
        As ``rank_analysis`` of the folder read whole.
    sources : dict of int to str
        Each rank's file (to open it alone).
    offset_ns : dict of int to int
        Each rank's zero less the folder's: a folder time less it is a time of the rank's
        own trace.
    event_count : int
        Events of all the ranks.
    failed : list of str
        Files that could not be reduced (named, left out: the view is incomplete).
    """

    analysis: RankAnalysis
    sources: dict[int, str]
    offset_ns: dict[int, int]
    event_count: int = 0
    failed: list[str] = field(default_factory=list)


def combine_reductions(
    reductions: Sequence[RankReduction], failed: Sequence[str] = ()
) -> ReducedRanks:
    """The folder's :class:`ReducedRanks` from its ranks' reductions (any order).

    Raises
    ------
    ValueError
        Where two reductions claim the same rank, or there are none.
    """
    reds = sorted(reductions, key=lambda r: r.rank)
    if not reds:
        raise ValueError("no rank reductions to combine")
    ranks = np.asarray([r.rank for r in reds], dtype=np.int64)
    if len(np.unique(ranks)) != len(ranks):
        raise ValueError(f"two files claim one rank: ranks {ranks.tolist()}")
    base = min(r.zero_ns for r in reds)
    offsets = [r.zero_ns - base for r in reds]
    b = _breakdown([r.breakdown for r in reds], offsets)
    parts = _parts([r.parts for r in reds], offsets)
    table = align_parts(ranks, parts, b.steps)
    ops_of = {
        r.rank: (r.ops[0] + off, r.ops[1] + off) for r, off in zip(reds, offsets) if len(r.ops[0])
    }
    matrix = step_matrix(b, table, lambda rows: cpu_step_measures(b, table, rows, ops_of))
    analysis = RankAnalysis(matrix, table, find_straggler(matrix, table), b)
    return ReducedRanks(
        analysis=analysis,
        sources={r.rank: r.source for r in reds},
        offset_ns={r.rank: off for r, off in zip(reds, offsets)},
        event_count=sum(r.event_count for r in reds),
        failed=list(failed),
    )


def _breakdown(parts: list[StepBreakdown], offsets: list[int]) -> StepBreakdown:
    """The ranks' breakdowns as one (ranks ascending), times on the folder's clock."""
    first = np.cumsum([0] + [len(p.steps) for p in parts])[:-1]
    steps = Steps(
        rank=_cat([p.steps.rank for p in parts]),
        number=_cat([p.steps.number for p in parts]),
        source=[x for p in parts for x in p.steps.source],
        **{k: _cat([getattr(p.steps, k) + o for p, o in zip(parts, offsets)]) for k in _STEP_TIMES},
    )
    dev = {k: _cat([getattr(p.devices, k) for p in parts]) for k in _DEVICE_FIELDS}
    dev["step"] = _cat([p.devices.step + f for p, f in zip(parts, first)])
    return StepBreakdown(
        steps=steps,
        cpu_op_ns=_cat([p.cpu_op_ns for p in parts]),
        cpu_other_ns=_cat([p.cpu_other_ns for p in parts]),
        devices=DeviceStepTimes(**dev),
    )


def _parts(parts: list[CollectiveParts], offsets: list[int]) -> CollectiveParts:
    return CollectiveParts(
        rank=_cat([p.rank for p in parts]),
        group=[g for p in parts for g in p.group],
        name=[n for p in parts for n in p.name],
        seq=_cat([p.seq for p in parts]),
        start_ns=_cat([p.start_ns + o for p, o in zip(parts, offsets)]),
        end_ns=_cat([p.end_ns + o for p, o in zip(parts, offsets)]),
        row=_cat([p.row for p in parts]),
    )


def _cat(arrays: list[I64]) -> I64:
    out: I64 = np.concatenate([np.asarray(a, dtype=np.int64) for a in arrays])
    return out


__all__ = ["RankReduction", "ReducedRanks", "combine_reductions", "rank_reduction"]
