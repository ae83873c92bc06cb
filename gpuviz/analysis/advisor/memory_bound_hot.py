"""``memory_bound_hot``: memory-bound ops reach a small share of the memory bandwidth and hold a
large share of the step.

Condition: the device's bandwidth is known, and on a rank the calls of ops whose bytes are
counted but not their FLOPs (elementwise, activation, norm, softmax, dropout, reduction and
copy ops: :func:`gpuviz.analysis.flops.op_bytes`) that moved their bytes at less than
:data:`LOW_SHARE` of the bandwidth hold :data:`MIN_STEP_SHARE` or more of the step time.
Bytes are a lower bound (each tensor read once, written once), so an op's share is too: an op
that re-reads its inputs is faster than it looks.

Saving: those calls brought to :data:`TARGET_SHARE` of the bandwidth:
``time · (1 − share / TARGET_SHARE)``, per step, at most the step. Fusing a chain of them
saves more (the intermediate tensors never go to memory), which this does not count.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.advisor._roofrules import evidence, gains, shape_phrase, top_shapes
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_ms, fmt_pct
from gpuviz.analysis.inductor_names import is_inductor_kernel
from gpuviz.analysis.op_args import ELEMENTWISE_FLOPS

KIND = "memory_bound_hot"
LOW_SHARE = 0.5
"""Below this share of the bandwidth a memory-bound op is slow (a vectorized elementwise
kernel on a large tensor moves its bytes at 70-90% of the datasheet bandwidth)."""
TARGET_SHARE = 0.7
MIN_STEP_SHARE = 0.10

FIX = (
    "Fuse the elementwise chain so each tensor goes through memory once: "
    "`model = torch.compile(model)` fuses pointwise ops, norms and softmax into a few Triton "
    "kernels; use fused implementations (`F.scaled_dot_product_attention`, "
    "`torch.optim.AdamW(fused=True)`, fused LayerNorm/RMSNorm); avoid `.contiguous()`, `.to()` "
    "and copies of transposed tensors inside the step."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``memory_bound_hot`` finding of a trace (empty when the condition does not hold)."""
    hw = ctx.hardware
    peaks = hw.peaks.peaks
    calls = hw.calls
    if peaks is None or not peaks.bandwidth_tb_s or len(calls.rows) == 0:
        return []
    # ops with no FLOP count, aten::add/mul whose one FLOP an element torch counts, and
    # Inductor's generated kernels (fused elementwise work and reductions)
    bytes_only = np.array(
        [
            hw.shapes[j].flops is None
            or hw.shapes[j].name in ELEMENTWISE_FLOPS
            or is_inductor_kernel(hw.shapes[j].name)
            for j in calls.shape.tolist()
        ],
        dtype=bool,
    )
    picked = bytes_only & (np.nan_to_num(calls.roof_share, nan=np.inf) < LOW_SHARE)
    if not picked.any():
        return []
    g = gains(ctx, picked, TARGET_SHARE)
    totals = {r: float(ctx.step_total_ns(r)) for r in g.time_ns}
    hot = {
        r: g.saving_ns[r]
        for r in g.time_ns
        if totals[r] > 0 and g.time_ns[r] >= MIN_STEP_SHARE * totals[r] and g.saving_ns[r] > 0
    }
    if not hot:
        return []
    rank, _ = ctx.worst_rank(KIND, hot, totals)
    shapes = top_shapes(g, rank)
    ops = "; ".join(shape_phrase(ctx, g, rank, j, flops=False) for j in shapes)
    time_ns = g.time_ns[rank]
    detail = (
        f"Memory-bound ops under {fmt_pct(LOW_SHARE)} of {peaks.label}'s "
        f"{peaks.bandwidth_tb_s:g} TB/s took {fmt_ms(time_ns)}, {fmt_pct(time_ns / totals[rank])} "
        f"of the step time{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(hot)))}. Slowest by time: {ops}."
    )
    f = ctx.finding(
        KIND,
        hot[rank],
        totals[rank],
        title="Memory-bound ops use little of the memory bandwidth",
        detail=detail,
        fix=FIX,
        saving_how=(
            f"Each such call brought to {fmt_pct(TARGET_SHARE)} of the bandwidth "
            f"(time × (1 − share / {TARGET_SHARE:g})), per step, at most the step; fusing "
            "saves more, not counted."
        ),
        evidence=evidence(ctx, rank, shapes),
    )
    return [f] if f is not None else []
