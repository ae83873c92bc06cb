"""``launch_bound``: the GPU idles between many short kernels while the CPU dispatches them.

Condition: on some GPU, the idle gaps whose cause is ``launch`` (the work after the gap began
right after its launch returned; see :mod:`gpuviz.analysis.gaps`) and that last at most
:data:`MAX_GAP_NS` number at least :data:`MIN_PER_STEP` per step, and the kernels after them
are short (median at most :data:`SHORT_KERNEL_NS`).

Saving: the time of those gaps. If the same kernels ran back to back (a CUDA graph replays
them with about a µs between them) the GPU would not wait for them.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.advisor._gaprules import step_evidence, top_names, worst_device_per_rank
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_ms, fmt_pct
from gpuviz.analysis.gaps import LAUNCH

KIND = "launch_bound"
MAX_GAP_NS = 1_000_000
MIN_PER_STEP = 10
SHORT_KERNEL_NS = 50_000

FIX = (
    "Launch fewer, larger kernels: a larger batch; capture the step in a CUDA graph "
    '(`torch.compile(model, mode="reduce-overhead")` or `torch.cuda.graphs`); fuse small ops '
    "with `torch.compile`; use fused or foreach optimizers "
    "(`torch.optim.AdamW(params, fused=True)`)."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``launch_bound`` finding of a trace (empty when the condition does not hold)."""
    g = ctx.gaps
    s = ctx.trace.slices
    picked = (g.cause == LAUNCH) & (g.duration_ns <= MAX_GAP_NS)
    per = worst_device_per_rank(ctx, picked, g.duration_ns.astype(np.float64))
    hit: dict[int, float] = {}
    for rank, gaps in per.gaps.items():
        steps = max(ctx.step_count(rank), 1)
        kernel_ns = np.median(s.dur_ns[g.next_row[gaps]]) if len(gaps) else np.inf
        if len(gaps) >= MIN_PER_STEP * steps and kernel_ns <= SHORT_KERNEL_NS:
            hit[rank] = per.saving_ns[rank]
    if not hit:
        return []
    totals = {r: float(ctx.step_total_ns(r)) for r in hit}
    rank, _ = ctx.worst_rank(KIND, hit, totals)
    gaps = per.gaps[rank]
    saving = hit[rank]
    steps = max(ctx.step_count(rank), 1)
    nxt = g.next_row[gaps]
    launches = ctx.trace.launches_of(nxt)
    names = top_names(ctx, nxt)
    busy = float(ctx.coverages[(rank, per.device[rank])]["busy"].total_ns)
    detail = (
        f"GPU {per.device[rank]}{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(hit)))} waited for the CPU to launch "
        f"work {len(gaps)} times ({len(gaps) / steps:.0f} per step): {fmt_ms(saving / steps)} "
        f"idle a step ({fmt_ms(saving)} over {steps} step{'s' if steps != 1 else ''} of "
        f"{fmt_ms(totals[rank])}, {fmt_pct(saving / totals[rank])}). The kernels that "
        f"followed ran {fmt_ms(float(np.median(s.dur_ns[nxt])))} on median, while each launch "
        f"call took {fmt_ms(float(np.median(s.dur_ns[launches[launches >= 0]])))} on the CPU; "
        f"the GPU was busy {fmt_ms(busy)} in all."
    )
    return [
        f
        for f in [
            ctx.finding(
                KIND,
                saving,
                totals[rank],
                title="GPU waits on kernel launches: many short kernels, CPU-bound dispatch",
                detail=detail,
                fix=FIX,
                saving_how=(
                    "The idle gaps that ended as soon as the next kernel's launch returned "
                    "(each at most 1 ms), summed: run back to back, as a CUDA graph runs them, "
                    "the same kernels would not leave them."
                ),
                evidence=step_evidence(ctx, gaps, g.duration_ns.astype(np.float64), names),
            )
        ]
        if f is not None
    ]
