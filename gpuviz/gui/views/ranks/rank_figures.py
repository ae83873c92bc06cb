"""What the Ranks view draws, read from :func:`gpuviz.analysis.ranks.rank_analysis`. Qt-free.

The analysis (``gpuviz.analysis.ranks`` and ``gpuviz.analysis.collectives``) gives per-rank ×
step matrices, the collectives aligned across ranks and the straggler; this module turns them
into the view's arrays and words: a heatmap in ms with the missing cells as NaN
(:func:`heatmap_ms`), the worst collectives as arrival offsets per rank
(:func:`worst_collectives`), the straggler sentence (:func:`straggler_text`), and where a click
jumps to on the Timeline (:func:`cell_target`, :func:`collective_target`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.display import terminal_safe
from gpuviz.gui.timeline.timefmt import format_ns

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

MEASURE_LABELS = {
    "step": "step time",
    "compute": "compute",
    "comm": "communication",
    "idle": "idle",
    "wait": "wait in collectives",
    "work": "work (step less wait)",
}
"""The heatmap's measures (``gpuviz.analysis.ranks.MEASURES``), as the view names them."""

WORST_COLLECTIVES = 12
"""Collectives in the worst-collectives chart."""


def heatmap_ms(matrix: Any, measure: str) -> F64:
    """One measure of a :class:`~gpuviz.analysis.ranks.RankStepMatrix` in ms, NaN where a
    rank lacks the step; shape (ranks, steps)."""
    ns = matrix.measure(measure)
    out: F64 = np.where(matrix.present, ns / 1e6, np.nan)
    return out


@dataclass(frozen=True)
class Target:
    """Where a click in the Ranks view jumps to on the Timeline.

    Attributes
    ----------
    rank : int
        The rank whose lanes are shown (expanded).
    t0_ns, t1_ns : int
        The range selected, ns from the trace zero.
    slice_row : int
        A slice to select, or -1.
    """

    rank: int
    t0_ns: int
    t1_ns: int
    slice_row: int = -1


def cell_target(matrix: Any, rank_index: int, step_index: int) -> Target | None:
    """The step window of one heatmap cell (row ``rank_index``, column ``step_index``)."""
    if not (0 <= rank_index < len(matrix.ranks) and 0 <= step_index < len(matrix.steps)):
        return None
    if not matrix.present[rank_index, step_index]:
        return None
    t0 = int(matrix.start_ns[rank_index, step_index])
    return Target(
        int(matrix.ranks[rank_index]), t0, t0 + int(matrix.step_ns[rank_index, step_index])
    )


def collective_target(table: Any, row: int) -> Target:
    """A collective: from its first arrival to its last end, on the rank that came last, with
    that rank's part selected."""
    present = table.present[row]
    t0 = int(table.arrival_ns[row][present].min())
    t1 = int(table.end_ns[row][present].max())
    col = table.column(int(table.last_rank[row]))
    return Target(int(table.last_rank[row]), t0, t1, int(table.slice_row[row, col]))


@dataclass
class WorstCollectives:
    """The collectives with the most waiting, for the chart (one row each, worst first).

    Attributes
    ----------
    rows : int64 array (N,)
        Rows of the collective table.
    labels : list of str
        ``pg 0 · allreduce #3``.
    offset_ms : float64 array (N, R)
        Each rank's arrival less the last arrival, in ms (<= 0: how long it waited); NaN where
        the rank has no part.
    last_rank : int64 array (N,)
    delay_ms, total_wait_ms, max_wait_ms : float64 arrays (N,)
        How much later the last rank came than the one before it; the waits summed over
        ranks; the longest wait.
    ranks : int64 array (R,)
        The rank of each column.
    """

    rows: I64
    labels: list[str]
    offset_ms: F64
    last_rank: I64
    delay_ms: F64
    total_wait_ms: F64
    max_wait_ms: F64
    ranks: I64

    def __len__(self) -> int:
        return len(self.rows)


def collective_label(table: Any, row: int) -> str:
    """``pg 0 · allreduce #3``: the process group, the collective and its sequence number.

    The group and collective names come from the files' args: control characters in them are
    shown escaped (``\x1b``); the label is plain text, never markup.
    """
    group = terminal_safe(str(table.group[row]), one_line=True)
    name = terminal_safe(str(table.name[row]), one_line=True)
    return f"{group} · {name} #{int(table.seq[row])}"


def worst_collectives(table: Any, n: int = WORST_COLLECTIVES) -> WorstCollectives:
    """The ``n`` collectives whose ranks waited longest in all (``table.worst(n)``)."""
    rows = table.worst(n).astype(np.int64)
    present = table.present[rows]
    offset = np.where(
        present, (table.arrival_ns[rows] - table.last_arrival_ns[rows][:, None]) / 1e6, np.nan
    )
    waits = np.where(present, table.wait_ns[rows], 0)
    return WorstCollectives(
        rows=rows,
        labels=[collective_label(table, int(r)) for r in rows.tolist()],
        offset_ms=offset.astype(np.float64),
        last_rank=table.last_rank[rows].astype(np.int64),
        delay_ms=table.delay_ns[rows] / 1e6,
        total_wait_ms=table.total_wait_ns[rows] / 1e6,
        max_wait_ms=(waits.max(axis=1) if len(rows) else np.zeros(0)) / 1e6,
        ranks=np.asarray(table.ranks, dtype=np.int64),
    )


def straggler_text(straggler: Any, n_collectives: int) -> str:
    """The sentence that names the straggler (plain text), or says there is none."""
    if straggler is None:
        if n_collectives == 0:
            return "No collectives were found to compare the ranks at: no straggler named."
        return (
            f"No straggler: no rank is both last at most of the {n_collectives} collectives "
            "and slower than the median rank."
        )
    s = straggler
    what = "compute" if s.measure == "compute" else "work (step time less waiting)"
    return (
        f"Straggler: rank {s.rank}. Its {what} per step is {s.ratio:.2f}× the median rank's "
        f"({format_ns(s.rank_ns)} vs {format_ns(s.median_ns)}); it arrived last at {s.last} "
        f"of the {s.taking_part} collectives it took part in, where the others waited "
        f"{format_ns(s.others_wait_ns)} in all and the job lost {format_ns(s.delay_ns)} to it."
    )


def reduced_text(reduced: Any) -> str:
    """The line of a folder opened from its ranks' reductions (a
    :class:`~gpuviz.analysis.rank_reduction.ReducedRanks`): how many ranks, the files left out
    (named: their lines are data, shown escaped), and how to open a rank. Plain text."""
    failed = ""
    if reduced.failed:
        named = "; ".join(terminal_safe(f, one_line=True) for f in reduced.failed[:3])
        more = f" and {len(reduced.failed) - 3} more" if len(reduced.failed) > 3 else ""
        failed = f" (left out, could not be read: {named}{more})"
    return (
        f"From the reductions of {len(reduced.sources)} ranks{failed}, without their events: "
        "click a cell or a collective, or Open rank, to load that rank."
    )


__all__ = [
    "MEASURE_LABELS",
    "WORST_COLLECTIVES",
    "Target",
    "WorstCollectives",
    "cell_target",
    "collective_label",
    "collective_target",
    "heatmap_ms",
    "reduced_text",
    "straggler_text",
    "worst_collectives",
]
