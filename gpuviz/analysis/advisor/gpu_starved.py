"""``gpu_starved``: long GPU idle gaps while the CPU runs no PyTorch op either.

Condition: idle gaps whose cause is ``starved`` (see :mod:`gpuviz.analysis.gaps`: for most of
the gap no thread of the rank was inside a PyTorch op) that last at least :data:`MIN_GAP_NS`
and at least :data:`MIN_STEP_SHARE` of the rank's mean step. The mean step, not the step the
gap falls in: when the CPU runs ahead of the GPU, a step's window can be much shorter than
the work it holds.

Saving: the length of those gaps. With the input ready ahead of time (loaded by workers and
prefetched) the GPU would not have waited; it can gain no more than that.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuviz.analysis.activity import rank_value
from gpuviz.analysis.advisor._gaprules import worst_device_per_rank
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import MAX_EVIDENCE, Evidence, Finding, fmt_ms, fmt_pct
from gpuviz.analysis.coverage import Coverage
from gpuviz.analysis.gaps import STARVED
from gpuviz.analysis.names import DATALOADER_PREFIX, DATAPARALLEL_FORWARD
from gpuviz.trace.model import Kind

KIND = "gpu_starved"
MIN_GAP_NS = 1_000_000
MIN_STEP_SHARE = 0.10

FIX = (
    "Keep the next batch ready before the GPU needs it: load and augment it in worker "
    "processes (`DataLoader(ds, num_workers=8, pin_memory=True, prefetch_factor=2, "
    "persistent_workers=True)`), move CPU preprocessing into the dataset or onto the GPU, and "
    "copy the next batch to the GPU on a side stream while the current one computes. For "
    "`nn.DataParallel`, whose per-step Python keeps the GPUs waiting, use "
    "DistributedDataParallel (one process per GPU)."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``gpu_starved`` finding of a trace (empty when the condition does not hold)."""
    g = ctx.gaps
    mean_step = {r: ctx.mean_step_ns(r) for r in ctx.rank_codes()}
    # Each gap's rank's floor, a rank at a time (a float per gap from Python held the GIL for
    # 50 ms on 32 ranks of 100k kernels: the app's GUI thread waited that long).
    floor = np.zeros(len(g))
    for code, mean in mean_step.items():
        floor[g.rank == code] = mean * MIN_STEP_SHARE
    picked = (
        (g.cause == STARVED) & (g.duration_ns >= MIN_GAP_NS) & (g.duration_ns >= floor)
        if len(g)
        else np.zeros(0, dtype=bool)
    )
    if not picked.any():
        return []
    per = worst_device_per_rank(ctx, picked, g.duration_ns.astype(np.float64))
    totals = {r: float(ctx.step_total_ns(r)) for r in per.saving_ns}
    rank, _ = ctx.worst_rank(KIND, per.saving_ns, totals)
    gaps = per.gaps[rank]
    saving = per.saving_ns[rank]
    loader_ns, loader_names = _ranges_in(ctx, rank, gaps, _is_dataloader)
    dp_ns, _ = _ranges_in(ctx, rank, gaps, _is_dataparallel)
    order = gaps[np.argsort(-g.duration_ns[gaps], kind="stable")][:MAX_EVIDENCE]
    evidence = [
        Evidence(
            rank=rank_value(int(g.rank[i])),
            device=int(g.device[i]),
            start_ns=int(g.start_ns[i]),
            end_ns=int(g.end_ns[i]),
            names=tuple(loader_names) if loader_names else None,
            count=1,
        )
        for i in order
    ]
    op_share = float(g.cpu_op_ns[gaps].sum()) / max(saving, 1.0)
    if dp_ns >= 0.5 * saving:
        loader = (
            f" {fmt_ms(dp_ns)} of it falls inside `DataParallel.forward`: its replicate, scatter "
            "and per-GPU threads run in Python on every step (DistributedDataParallel does not)."
        )
    elif loader_ns > 0:
        loader = f" The DataLoader's `__next__` ran during {fmt_ms(loader_ns)} of them."
    else:
        loader = " No DataLoader range covers them: Python work between steps, or a sleep."
    n_steps = max(ctx.step_count(rank), 1)
    detail = (
        f"GPU {per.device[rank]}{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(per.saving_ns)))} sat idle in "
        + (
            f"{len(gaps)} gaps of {fmt_ms(float(np.median(g.duration_ns[gaps])))} on median "
            if len(gaps) > 1
            else f"a gap of {fmt_ms(float(g.duration_ns[gaps].sum()))} "
        )
        + f"({fmt_ms(saving / n_steps)} a step; {fmt_ms(saving)} over {n_steps} "
        f"step{'s' if n_steps != 1 else ''} of {fmt_ms(totals[rank])}, "
        f"{fmt_pct(saving / totals[rank])}) while the CPU ran PyTorch ops during only {fmt_pct(op_share)} of that time."
        + loader
    )
    f = ctx.finding(
        KIND,
        saving,
        totals[rank],
        title="The GPU sits idle while the CPU runs no PyTorch op (input pipeline or Python)",
        detail=detail,
        fix=FIX,
        saving_how=(
            "The idle gaps of at least 1 ms and 10% of a mean step during which the CPU ran "
            "no PyTorch op, summed: with the input prefetched the GPU would have worked through them."
        ),
        evidence=evidence,
    )
    return [f] if f is not None else []


def _ranges_in(
    ctx: AdviceContext, rank: int, gaps: np.ndarray, test: Any
) -> tuple[float, list[str]]:
    """Time of the rank's CPU ranges whose name passes ``test`` inside the gaps, and names."""
    s, t = ctx.trace.slices, ctx.trace.tracks
    hit = ctx.mask(test)
    cpu = (s.kind == Kind.USER_ANNOTATION) | (s.kind == Kind.CPU_OP)
    rows = np.flatnonzero(cpu & hit[s.name] & (t.rank[s.track] == rank))
    if len(rows) == 0:
        return 0.0, []
    cov = Coverage(s.start_ns[rows], s.start_ns[rows] + s.dur_ns[rows])
    g = ctx.gaps
    inside = float(cov.covered(g.start_ns[gaps], g.end_ns[gaps]).sum())
    names = sorted({ctx.trace.name_of(int(r)) for r in rows[:50]})
    return inside, names[:3]


def _is_dataloader(name: str) -> bool:
    return name.startswith(DATALOADER_PREFIX)


def _is_dataparallel(name: str) -> bool:
    return name == DATAPARALLEL_FORWARD
