"""Per rank × step measures of a multi-rank trace, and the straggler rank.

:func:`rank_analysis` gives what a rank view draws: a matrix per measure (rows are ranks,
columns are steps), the aligned collectives (:mod:`gpuviz.analysis.collectives`), and the
straggler, if there is one.

Measures, per rank and step (ns; -1 where a rank has no such step):

- ``step``: the step window's length (:mod:`gpuviz.analysis.steps`);
- ``compute``: time in compute kernels (no NCCL) on the rank's GPUs, summed over its GPUs;
  on a rank without GPU work, time inside PyTorch ops on its CPU threads, less the time it
  waited in collectives;
- ``comm``: time in NCCL kernels (hidden behind compute or not), or in gloo ranges on a CPU rank;
- ``idle``: GPU idle time, summed over the rank's GPUs; on a CPU rank, time outside any op;
- ``wait``: time the rank waited in collectives for the last rank to arrive, summed over the
  collectives whose arrival falls in the step;
- ``work``: ``step - wait``, the time the rank was not held up by the others.

Steps line up across ranks by their number (``ProfilerStep#N``); steps found another way line
up by their index on each rank.

The straggler is the rank whose late arrivals at the collectives held the others up longest,
when it is last in at least half of them and is also slower: its median compute per step is at
least :data:`STRAGGLER_RATIO` times the median rank's, and the others waited for it. A rank with the same compute but more work (it is held
up on the host: data loading, Python) is a straggler too when it is last far more often
(:data:`WORK_LAST_SHARE`, at least :data:`WORK_MIN_LAST` times), because host jitter alone
makes some rank last in every collective.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.activity import rank_value
from gpuviz.analysis.collectives import CollectiveTable, align_collectives
from gpuviz.analysis.coverage import Coverage
from gpuviz.analysis.intervals import intersect
from gpuviz.analysis.names import is_pytorch_op, name_mask
from gpuviz.analysis.steps import StepBreakdown, step_breakdown
from gpuviz.trace.model import NONE, Kind, Trace

I64 = npt.NDArray[np.int64]

MEASURES = ("step", "compute", "comm", "idle", "wait", "work")
"""The measures of :class:`RankStepMatrix`, by name."""

STRAGGLER_RATIO = 1.1
"""A straggler's compute (or work) per step is at least this times the median rank's."""

STRAGGLER_LAST_SHARE = 0.5
"""…and it arrives last in at least this share of the collectives it takes part in."""

WORK_LAST_SHARE = 0.75
WORK_MIN_LAST = 3
"""A rank that is slower in work but not in compute (host-side delays) must be last in at least
this share, and in at least this many collectives: host jitter makes a rank last by chance."""


@dataclass
class RankStepMatrix:
    """Measures per rank (rows) and step (columns), in ns; -1 where a rank lacks the step.

    Attributes
    ----------
    ranks : int64, shape (R,)
    steps : int64, shape (S,)
        Step numbers (``ProfilerStep#N``'s N, else the index on each rank).
    step_row : int64, shape (R, S)
        Row of each cell in the breakdown's :class:`~gpuviz.analysis.steps.Steps`, or -1.
    start_ns : int64, shape (R, S)
        Window start of each cell, for a jump to the Timeline.
    step_ns, compute_ns, comm_ns, idle_ns, wait_ns, work_ns : int64, shape (R, S)
        See the module docstring.
    """

    ranks: I64
    steps: I64
    step_row: I64
    start_ns: I64
    step_ns: I64
    compute_ns: I64
    comm_ns: I64
    idle_ns: I64
    wait_ns: I64
    work_ns: I64

    def measure(self, name: str) -> I64:
        """The matrix of one of :data:`MEASURES`."""
        if name not in MEASURES:
            raise ValueError(f"unknown measure {name!r}; expected one of {', '.join(MEASURES)}")
        out: I64 = getattr(self, f"{name}_ns")
        return out

    @property
    def present(self) -> npt.NDArray[np.bool_]:
        """Cells that hold a step."""
        return self.step_row >= 0


@dataclass(frozen=True)
class Straggler:
    """The rank the others wait for.

    Attributes
    ----------
    rank : int
    measure : str
        ``compute`` or ``work``: which measure makes it slower.
    rank_ns, median_ns : float
        Its median of that measure per step, and the median over ranks of the same.
    ratio : float
        ``rank_ns / median_ns``.
    last : int
        Collectives it arrived last in.
    taking_part : int
        Collectives it took part in (with at least one other rank).
    others_wait_ns : int
        The other ranks' waits in the collectives it arrived last in, summed.
    delay_ns : int
        How much later it arrived than the one before it, summed over those collectives: the
        time the whole job lost to it.
    collectives : int64 array
        Rows of the collective table where it arrived last, by delay, largest first.
    """

    rank: int
    measure: str
    rank_ns: float
    median_ns: float
    ratio: float
    last: int
    taking_part: int
    others_wait_ns: int
    delay_ns: int
    collectives: I64


@dataclass
class RankAnalysis:
    """Everything a rank view shows.

    Attributes
    ----------
    matrix : RankStepMatrix
    collectives : CollectiveTable
    straggler : Straggler or None
    breakdown : StepBreakdown
        The per-step breakdown the matrix was built from.
    """

    matrix: RankStepMatrix
    collectives: CollectiveTable
    straggler: Straggler | None
    breakdown: StepBreakdown


def rank_analysis(
    trace: Trace,
    breakdown: StepBreakdown | None = None,
    collectives: CollectiveTable | None = None,
) -> RankAnalysis:
    """Rank × step measures, aligned collectives and the straggler of ``trace``.

    Parameters
    ----------
    trace : Trace
        Usually a folder of per-rank files; a lone file gives a one-row matrix and no
        collectives.
    breakdown : StepBreakdown, optional
        ``step_breakdown(trace)`` when the caller has it.
    collectives : CollectiveTable, optional
        ``align_collectives(trace, breakdown.steps)`` when the caller has it.

    Returns
    -------
    RankAnalysis
    """
    b = step_breakdown(trace) if breakdown is None else breakdown
    table = align_collectives(trace, b.steps) if collectives is None else collectives
    matrix = _matrix(trace, b, table)
    return RankAnalysis(matrix, table, find_straggler(matrix, table), b)


def _matrix(trace: Trace, b: StepBreakdown, table: CollectiveTable) -> RankStepMatrix:
    return step_matrix(b, table, lambda rows: _cpu_measures(trace, b, table, rows))


def step_matrix(
    b: StepBreakdown, table: CollectiveTable, cpu_measures: Callable[[I64], tuple[I64, I64]]
) -> RankStepMatrix:
    """The :class:`RankStepMatrix` of a breakdown and its aligned collectives.

    ``cpu_measures(rows)`` gives the compute and comm of the step rows without GPU work (from
    the trace, or from per-rank reductions: :mod:`gpuviz.analysis.rank_reduction`).
    """
    st, dev = b.steps, b.devices
    ranks = np.unique(st.rank).astype(np.int64)
    numbers = np.unique(st.number).astype(np.int64)
    n_r, n_s = len(ranks), len(numbers)
    row = np.full((n_r, n_s), NONE, dtype=np.int64)
    ri = np.searchsorted(ranks, st.rank)
    si = np.searchsorted(numbers, st.number)
    row[ri, si] = np.arange(len(st))
    present = row >= 0
    safe = np.where(present, row, 0)

    def cells(per_step: I64) -> I64:
        return np.where(present, per_step[safe], NONE)

    def per_step_sum(values: I64) -> I64:
        out = np.zeros(len(st), dtype=np.int64)
        np.add.at(out, dev.step, values)
        return out

    wait = np.zeros(len(st), dtype=np.int64)
    if len(table):
        ok = table.present & (table.step >= 0)
        np.add.at(wait, table.step[ok], table.wait_ns[ok])
    has_gpu = np.zeros(len(st), dtype=bool)
    has_gpu[dev.step] = True
    compute = per_step_sum(dev.compute_ns)
    comm = per_step_sum(dev.comm_total_ns)
    idle = per_step_sum(dev.idle_ns)
    cpu_rows = np.flatnonzero(~has_gpu)
    if len(cpu_rows):
        c_compute, c_comm = cpu_measures(cpu_rows)
        compute[cpu_rows] = c_compute
        comm[cpu_rows] = c_comm
        idle[cpu_rows] = b.cpu_other_ns[cpu_rows]
    duration = st.duration_ns
    return RankStepMatrix(
        ranks=ranks,
        steps=numbers,
        step_row=row,
        start_ns=cells(st.start_ns),
        step_ns=cells(duration),
        compute_ns=cells(compute),
        comm_ns=cells(comm),
        idle_ns=cells(idle),
        wait_ns=cells(wait),
        work_ns=cells(duration - wait),
    )


def _cpu_measures(
    trace: Trace, b: StepBreakdown, table: CollectiveTable, rows: I64
) -> tuple[I64, I64]:
    """Compute and comm of steps on ranks without GPU work: from the CPU ops and gloo ranges."""
    s, t = trace.slices, trace.tracks
    slice_rank = t.rank[s.track]
    # Each rank's CPU ops, grouped by one sort: a scan of every slice per rank was per-pair
    # work over ranks (issue 51).
    ops = cpu_op_rows(trace)
    ops_of = {
        r: (s.start_ns[o], s.start_ns[o] + s.dur_ns[o])
        for r, o in _group_rows(slice_rank[ops], ops).items()
    }
    return cpu_step_measures(b, table, rows, ops_of)


def cpu_op_rows(trace: Trace) -> I64:
    """Rows of ``trace.slices`` that are PyTorch ops on a CPU thread."""
    s = trace.slices
    ok_op = name_mask(trace.symbols, is_pytorch_op)
    rows = np.flatnonzero(s.kind == Kind.CPU_OP)
    out: I64 = rows[ok_op[s.name[rows]]]
    return out


def cpu_step_measures(
    b: StepBreakdown, table: CollectiveTable, rows: I64, ops_of: dict[int, tuple[I64, I64]]
) -> tuple[I64, I64]:
    """Compute and comm of the step ``rows`` (ranks without GPU work), from each rank's CPU
    ops as (start, end) intervals (``ops_of``; merged or not: only the time they cover
    counts)."""
    st = b.steps
    compute = np.zeros(len(rows), dtype=np.int64)
    comm = np.zeros(len(rows), dtype=np.int64)
    steps_of = _group_rows(st.rank[rows], rows)
    none = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    col_of = {int(r): i for i, r in enumerate(table.ranks.tolist())}
    for rank, pick in steps_of.items():
        where = np.searchsorted(rows, pick)
        op_s, op_e = ops_of.get(rank, none)
        t0, t1 = st.cpu_start_ns[pick], st.cpu_end_ns[pick]
        in_ops = Coverage(op_s, op_e).covered(t0, t1)
        waits = (np.empty(0, np.int64), np.empty(0, np.int64))
        parts = (np.empty(0, np.int64), np.empty(0, np.int64))
        if len(table) and rank in col_of:
            col = col_of[rank]
            has = table.present[:, col]
            a = table.arrival_ns[has, col]
            waits = (a, a + table.wait_ns[has, col])
            parts = (a, table.end_ns[has, col])
        waiting_in_ops = Coverage(*intersect((op_s, op_e), waits)).covered(t0, t1)
        compute[where] = in_ops - waiting_in_ops
        comm[where] = Coverage(*parts).covered(st.start_ns[pick], st.end_ns[pick])
    return compute, comm


def _group_rows(keys: npt.ArrayLike, rows: I64) -> dict[int, I64]:
    """``rows`` by their ``keys`` (one per row), each group in ascending row order."""
    keys = np.asarray(keys, dtype=np.int64)
    if len(rows) == 0:
        return {}
    order = np.lexsort((rows, keys))
    k, r = keys[order], rows[order]
    cut = np.flatnonzero(np.diff(k)) + 1
    return {int(g[0]): rr for g, rr in zip(np.split(k, cut), np.split(r, cut))}


def find_straggler(
    matrix: RankStepMatrix, table: CollectiveTable, ratio: float = STRAGGLER_RATIO
) -> Straggler | None:
    """The straggler rank (see the module docstring), or None.

    Parameters
    ----------
    matrix : RankStepMatrix
    table : CollectiveTable
    ratio : float
        How much slower than the median rank a straggler is, at least.

    Returns
    -------
    Straggler or None
    """
    if len(table) == 0 or len(matrix.ranks) < 2:
        return None
    multi = table.present.sum(axis=1) >= 2
    counts = table.last_counts()
    if not counts:
        return None
    # The rank whose lateness held the others up longest, not the one last most often: in a
    # step with a slow backward (DDP's bucket all_reduce) and a quick loss all_reduce, the
    # straggler is last in the first by the whole delay and any rank wins the second by
    # microseconds, so counts tie and a tie would name the wrong rank (seen on an H100, gloo).
    last_multi = table.last_rank[multi]
    delay_multi = table.delay_ns[multi]
    # One pass over the collectives, not one per rank (issue 51).
    ranks_last, inverse = np.unique(last_multi, return_inverse=True)
    sums = np.zeros(len(ranks_last), dtype=np.int64)
    np.add.at(sums, inverse, delay_multi.astype(np.int64))
    by_rank = dict(zip(ranks_last.tolist(), sums.tolist()))
    held = {r: int(by_rank.get(r, 0)) for r in counts}
    rank = max(counts, key=lambda r: (held[r], counts[r], -r))
    col = table.column(rank)
    taking_part = int((multi & table.present[:, col]).sum())
    last_rows = np.flatnonzero(multi & (table.last_rank == rank))
    if taking_part == 0 or len(last_rows) / taking_part < STRAGGLER_LAST_SHARE:
        return None
    others = table.present[last_rows].copy()
    others[:, col] = False
    others_wait = int(np.where(others, table.wait_ns[last_rows], 0).sum())
    delay = int(table.delay_ns[last_rows].sum())
    if others_wait <= 0 or delay <= 0:
        return None
    m_row = int(np.flatnonzero(matrix.ranks == rank)[0]) if (matrix.ranks == rank).any() else -1
    if m_row < 0:
        return None
    # Steps that every rank has, so that ranks are compared on the same steps.
    full = matrix.present.all(axis=0)
    if not full.any():
        return None
    share = len(last_rows) / taking_part
    for measure in ("compute", "work"):
        if measure == "work" and (share < WORK_LAST_SHARE or len(last_rows) < WORK_MIN_LAST):
            break
        m = matrix.measure(measure)[:, full].astype(np.float64)
        per_rank = np.median(m, axis=1)
        median = float(np.median(per_rank))
        mine = float(per_rank[m_row])
        if median > 0 and mine >= ratio * median:
            order = last_rows[np.argsort(-table.delay_ns[last_rows], kind="stable")]
            return Straggler(
                rank=int(rank),
                measure=measure,
                rank_ns=mine,
                median_ns=median,
                ratio=mine / median,
                last=len(last_rows),
                taking_part=taking_part,
                others_wait_ns=others_wait,
                delay_ns=delay,
                collectives=order.astype(np.int64),
            )
    return None


def rank_label(rank: int) -> str:
    """``rank 3``, or ``the process`` for a lone file's -1."""
    value = rank_value(rank)
    return "the process" if value is None else f"rank {value}"
