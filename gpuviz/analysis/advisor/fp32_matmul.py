"""``fp32_matmul``: fp32 GEMMs on CUDA cores where tensor cores were there to use.

Condition: on a GPU of compute capability 8.0 or more (``deviceProperties``), kernels that are
fp32 GEMMs without tensor cores (:func:`gpuviz.analysis.names.is_fp32_simt_gemm`: ``sgemm``,
``f32f32_f32f32`` or ``ffma`` GEMMs, no ``tf32``) hold at least :data:`MIN_BUSY_SHARE` of the
GPU's busy time. Without ``deviceProperties`` the rule stays silent: an older GPU has no tensor
cores for fp32.

Saving: predicted by replay (:mod:`gpuviz.analysis.advisor.replay`): the steps with those
kernels ``1 / SPEEDUP_SHARE`` times faster, so that work they overlap saves nothing. Where the
replay does not run: :data:`SPEEDUP_SHARE` of those kernels' time. TF32 tensor cores run dense GEMMs several
times faster than fp32 CUDA cores (about 8x at peak on A100 and H100, and bf16 faster still);
assuming only 2x keeps the estimate low for small or memory-bound GEMMs.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.activity import rank_device_pairs
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_ms, fmt_pct
from gpuviz.analysis.advisor.replay import PREDICTED, replay_saving
from gpuviz.analysis.dep_graph import GPU, StepGraph
from gpuviz.analysis.names import is_fp32_simt_gemm
from gpuviz.trace.model import Kind

KIND = "fp32_matmul"
MIN_BUSY_SHARE = 0.10
SPEEDUP_SHARE = 0.5

FIX = (
    'Let fp32 matmuls use TF32 tensor cores: `torch.set_float32_matmul_precision("high")` '
    "(and `torch.backends.cudnn.allow_tf32 = True` for convolutions), or run the model under "
    '`torch.autocast("cuda", dtype=torch.bfloat16)`.'
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``fp32_matmul`` finding of a trace (empty when the condition does not hold)."""
    a = ctx.activity
    s = ctx.trace.slices
    fp32 = ctx.mask(is_fp32_simt_gemm)[s.name[a.rows]] & (a.kind == Kind.KERNEL)
    if not fp32.any():
        return []
    per: dict[int, float] = {}
    where: dict[int, tuple[int, np.ndarray, float]] = {}
    for rank, device in rank_device_pairs(a.rank[fp32], a.device[fp32]):
        props = ctx.device_properties(rank, device)
        major, minor = props.get("computeMajor"), props.get("computeMinor", 0)
        if not isinstance(major, int) or (major, minor or 0) < (8, 0):
            continue
        on = fp32 & (a.rank == rank) & (a.device == device)
        gemm_ns = float((a.end_ns[on] - a.start_ns[on]).sum())
        busy = float(ctx.coverages[(rank, device)]["busy"].total_ns)
        if busy <= 0 or gemm_ns < MIN_BUSY_SHARE * busy:
            continue
        if gemm_ns * SPEEDUP_SHARE > per.get(rank, -1.0):
            per[rank] = gemm_ns * SPEEDUP_SHARE
            where[rank] = (device, a.rows[on], busy)
    if not per:
        return []
    totals = {r: float(ctx.step_total_ns(r)) for r in per}
    rank, _ = ctx.worst_rank(KIND, per, totals)
    device, rows, busy = where[rank]
    gemm_ns = per[rank] / SPEEDUP_SHARE
    by_name: dict[str, list[int]] = defaultdict(list)
    for row, name in zip(rows.tolist(), ctx.trace.symbols.lookup(s.name[rows])):
        by_name[name].append(row)
    top = sorted(by_name.items(), key=lambda kv: -int(s.dur_ns[kv[1]].sum()))[:2]
    props = ctx.device_properties(rank, device)
    names = "; ".join(f"{n} ×{len(r)}" for n, r in top)
    detail = (
        f"fp32 GEMMs without tensor cores took {fmt_ms(gemm_ns)}, {fmt_pct(gemm_ns / busy)} of "
        f"GPU {device}'s busy time{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(per)))}, on "
        f"{props.get('name') or 'a GPU'} (compute capability {props.get('computeMajor')}."
        f"{props.get('computeMinor', 0)}), which has TF32 and bf16 tensor cores. Kernels: {names}."
    )
    order = rows[np.argsort(-s.dur_ns[rows], kind="stable")]
    saving, how = (
        per[rank],
        (
            "Half the time of the fp32 GEMM kernels: TF32 tensor cores run them at least 2x "
            "faster (about 8x at peak)."
        ),
    )
    gemm = ctx.mask(is_fp32_simt_gemm)

    def select(g: StepGraph) -> npt.NDArray[np.bool_]:
        names = s.name[np.maximum(g.row, 0)]
        return (g.rank == rank) & (g.kind == GPU) & (g.row >= 0) & gemm[names]

    replayed = replay_saving(ctx, select, 1.0 / SPEEDUP_SHARE, rank)
    if replayed is not None:
        saving = replayed
        how = PREDICTED + (
            "the steps with the fp32 GEMM kernels 2x faster (TF32 tensor cores run them at "
            "least 2x faster, about 8x at peak)."
        )
    f = ctx.finding(
        KIND,
        saving,
        totals[rank],
        title="fp32 matmuls run on CUDA cores, not tensor cores",
        detail=detail,
        fix=FIX,
        saving_how=how,
        evidence=ctx.slice_evidence(order),
    )
    return [f] if f is not None else []
