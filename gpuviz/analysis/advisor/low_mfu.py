"""``low_mfu``: the steps use a small share of the GPU's peak, and the counted ops run far below
their roof.

Condition: the device's peaks are known (:mod:`gpuviz.analysis.peaks`), the trace has shapes
(the ops' FLOPs are counted), and a rank's MFU over its steps with a known MFU (their time at
each precision's dense peak over their windows) is under :data:`LOW_MFU`.

Saving: every GEMM, convolution and attention call that reached less than
:data:`TARGET_SHARE` of its roof (the compute peak of its precision, or its intensity times
the bandwidth) brought up to it: ``time · (1 − share / TARGET_SHARE)``, per step, at most the
step. Ops with no FLOP count (elementwise, norms, copies) are ``memory_bound_hot``'s.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.advisor._roofrules import evidence, gains, shape_phrase, top_shapes
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_pct
from gpuviz.analysis.inductor_names import is_inductor_kernel
from gpuviz.analysis.op_args import ELEMENTWISE_FLOPS

KIND = "low_mfu"
LOW_MFU = 0.4
"""Under this MFU the rule looks at the ops. Tuned large-model training reaches 0.4-0.6 in
bf16 (the recording of ``tests/data/roofline``: a bf16 8192³ GEMM alone, 0.80)."""
TARGET_SHARE = 0.7
"""The share of its roof a tuned op reaches (cuBLAS's bf16 GEMMs of that recording: 0.69 to
0.84; flash attention forward 0.33 to 0.36, so attention rarely gets all of its figure)."""

FIX = (
    "Give the GPU larger, tensor-core-friendly work: GEMM dimensions that are multiples of 64 "
    "(128 on Hopper), a larger batch or micro-batch, bf16 autocast "
    '(`torch.autocast("cuda", dtype=torch.bfloat16)`) or TF32 for fp32 '
    '(`torch.set_float32_matmul_precision("high")`), `F.scaled_dot_product_attention` '
    'instead of hand-written attention, and `torch.compile(model, mode="max-autotune")` '
    "for small GEMMs."
)


def rank_mfu(ctx: AdviceContext) -> dict[int, tuple[float, float, int]]:
    """Per rank: MFU over its steps with FLOPs, their FLOPs, and how many such steps."""
    hw = ctx.hardware
    out: dict[int, tuple[float, float, int]] = {}
    acc: dict[int, list[float]] = {}
    for i, s in enumerate(hw.steps):
        # a step's MFU counts each precision at its own peak, and is None where unknown
        # (little coverage, inconsistent figures): such steps say nothing of the rank's
        if s.flops <= 0 or s.mfu is None or s.duration_ns <= 0:
            continue
        rank = int(ctx.steps.rank[i])
        a = acc.setdefault(rank, [0.0, 0.0, 0.0, 0.0])
        a[0] += s.mfu * s.duration_ns  # its time at peak
        a[1] += s.duration_ns
        a[2] += 1
        a[3] += s.flops
    for rank, (at_peak, dur, n, flops) in acc.items():
        out[rank] = (at_peak / dur, flops, int(n))
    return out


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``low_mfu`` finding of a trace (empty when the condition does not hold)."""
    hw = ctx.hardware
    if hw.peaks.peaks is None or len(hw.calls.rows) == 0:
        return []
    mfus = {r: v for r, v in rank_mfu(ctx).items() if v[0] < LOW_MFU}
    if not mfus:
        return []
    # GEMMs, convolutions, attention: aten::add/mul have FLOPs too, but are memory_bound_hot's,
    # and so are Inductor's generated kernels (the FLOPs of their fused adds and muls).
    elementwise = np.array(
        [
            hw.shapes[j].name in ELEMENTWISE_FLOPS or is_inductor_kernel(hw.shapes[j].name)
            for j in hw.calls.shape.tolist()
        ],
        dtype=bool,
    )
    picked = np.isfinite(hw.calls.flops) & ~elementwise
    g = gains(ctx, picked, TARGET_SHARE)
    per = {r: g.saving_ns[r] for r in mfus if g.saving_ns.get(r, 0.0) > 0}
    if not per:
        return []
    totals = {r: float(ctx.step_total_ns(r)) for r in per}
    rank, _ = ctx.worst_rank(KIND, per, totals)
    value, _, n = mfus[rank]
    peaks = hw.peaks.peaks
    precisions = sorted(
        {s.precision for i, s in enumerate(hw.steps) if s.precision and ctx.steps.rank[i] == rank}
    )
    peak_words = ", ".join(f"{p} {peaks.tflops(p):g}" for p in precisions if peaks.tflops(p))
    shapes = top_shapes(g, rank)
    ops = "; ".join(shape_phrase(ctx, g, rank, j, flops=True) for j in shapes)
    detail = (
        f"MFU {fmt_pct(value)} over {n} step{'s' if n != 1 else ''}"
        f"{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(per)))} against {peaks.label}'s dense peak "
        f"({peak_words} TFLOP/s), under the {fmt_pct(LOW_MFU)} of a tuned run. The counted "
        f"ops furthest below their roof by time: {ops}."
    )
    f = ctx.finding(
        KIND,
        per[rank],
        totals[rank],
        title=f"Model FLOPs utilization is {fmt_pct(value)}",
        detail=detail,
        fix=FIX,
        saving_how=(
            f"Each GEMM, convolution and attention call below {fmt_pct(TARGET_SHARE)} of its "
            f"roof brought up to it (time × (1 − share / {TARGET_SHARE:g})), per step, at most "
            "the step."
        ),
        evidence=evidence(ctx, rank, shapes),
    )
    return [f] if f is not None else []
