"""Shared arithmetic of the rules built on idle gaps (launch_bound, host_sync, gpu_starved)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.activity import rank_value
from gpuviz.analysis.advisor.context import AdviceContext
from gpuviz.analysis.advisor.findings import MAX_EVIDENCE, Evidence

I64 = npt.NDArray[np.int64]


@dataclass
class PerRank:
    """A rule's saving on its worst GPU of each rank, and the gaps behind it."""

    saving_ns: dict[int, float]
    device: dict[int, int]
    gaps: dict[int, I64]  # gap indices on that rank's worst device


def worst_device_per_rank(
    ctx: AdviceContext, picked: npt.NDArray[np.bool_], saving: npt.NDArray[np.float64]
) -> PerRank:
    """Per rank, the GPU with the largest summed ``saving`` over the ``picked`` gaps.

    GPUs of one rank run side by side, so a rank's saving is its worst GPU's, not their sum.
    """
    g = ctx.gaps
    out = PerRank({}, {}, {})
    idx = np.flatnonzero(picked)
    for rank in np.unique(g.rank[idx]).tolist():
        on_rank = idx[g.rank[idx] == rank]
        best_dev, best = -1, -1.0
        for device in np.unique(g.device[on_rank]).tolist():
            total = float(saving[on_rank[g.device[on_rank] == device]].sum())
            if total > best:
                best_dev, best = device, total
        out.saving_ns[rank] = best
        out.device[rank] = best_dev
        out.gaps[rank] = on_rank[g.device[on_rank] == best_dev]
    return out


def step_evidence(
    ctx: AdviceContext, gaps: I64, weight: npt.NDArray[np.float64], names: list[str] | None = None
) -> list[Evidence]:
    """One evidence per step (the worst steps first): the span of its picked gaps."""
    g = ctx.gaps
    if len(gaps) == 0:
        return []
    steps = g.step[gaps]
    order = []
    for step in np.unique(steps).tolist():
        mine = gaps[steps == step]
        order.append((float(weight[mine].sum()), step, mine))
    order.sort(key=lambda x: -x[0])
    out = []
    for _, _, mine in order[:MAX_EVIDENCE]:
        out.append(
            Evidence(
                rank=rank_value(int(g.rank[mine[0]])),
                device=int(g.device[mine[0]]),
                start_ns=int(g.start_ns[mine].min()),
                end_ns=int(g.end_ns[mine].max()),
                names=tuple(names) if names else None,
                count=len(mine),
            )
        )
    return out


def top_names(ctx: AdviceContext, rows: I64, n: int = 3) -> list[str]:
    """The ``n`` most frequent names among slice rows, most frequent first."""
    if len(rows) == 0:
        return []
    ids, counts = np.unique(ctx.trace.slices.name[rows], return_counts=True)
    order = np.argsort(-counts, kind="stable")[:n]
    return [ctx.trace.symbols[int(i)] for i in ids[order]]
