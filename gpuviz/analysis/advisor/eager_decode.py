"""``eager_decode``: decode steps launched op by op (no CUDA graph) leave the GPU idle.

Condition: on a rank, decode steps that replayed no graph (no ``cudaGraphLaunch``/
``hipGraphLaunch`` in their CPU range) kept the GPU busy less than :data:`MAX_BUSY_SHARE` of
their time on median. A decode step's kernels are short (one token a request), so launching
each from Python takes longer than running it.

Saving: the GPU's idle time in those steps: replayed as one graph, the same kernels run back
to back.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.advisor._servingrules import phase_rows, step_evidence
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_ms, fmt_pct

KIND = "eager_decode"
MAX_BUSY_SHARE = 0.6

FIX = (
    "Replay decode steps as CUDA graphs: vLLM and SGLang capture them unless told not to "
    "(drop `--enforce-eager` / `--disable-cuda-graph`, raise the captured batch sizes); for "
    'Hugging Face `generate()`, a static KV cache and `torch.compile(mode="reduce-overhead")` '
    '(`cache_implementation="static"`).'
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``eager_decode`` finding of a trace (empty when the condition does not hold)."""
    r = ctx.serving
    hit: dict[int, float] = {}
    rows_of: dict[int, list[int]] = {}
    for rank, rows in phase_rows(ctx, "decode").items():
        eager = [i for i in rows if not r.serving.graph[i]]
        if not eager:
            continue
        dur = ctx.steps.duration_ns[eager].astype(np.float64)
        busy = r.serving.busy_ns[eager].astype(np.float64)
        if np.median(busy / np.maximum(dur, 1)) <= MAX_BUSY_SHARE:
            hit[rank] = float((dur - busy).sum())
            rows_of[rank] = eager
    if not hit:
        return []
    totals = {k: float(ctx.step_total_ns(k)) for k in hit}
    rank, _ = ctx.worst_rank(KIND, hit, totals)
    rows = rows_of[rank]
    d_ns = ctx.steps.duration_ns[rows]
    b_ns = r.serving.busy_ns[rows]
    detail = (
        f"{len(rows)} decode step{'s' if len(rows) != 1 else ''}{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(hit)))} "
        f"ran without a graph: {fmt_ms(float(np.median(d_ns)))} a step on median, of which the "
        f"GPU was busy {fmt_ms(float(np.median(b_ns)))} "
        f"({fmt_pct(float(b_ns.sum()) / max(float(d_ns.sum()), 1.0))}); the rest it waited for "
        "the CPU to launch the next kernel."
    )
    f = ctx.finding(
        KIND,
        hit[rank],
        totals[rank],
        title="Decode steps launched eagerly: the GPU waits on the CPU",
        detail=detail,
        fix=FIX,
        saving_how=(
            "The GPU's idle time inside the eager decode steps: a graph replays the same "
            "kernels back to back."
        ),
        evidence=step_evidence(
            ctx, rows, key=lambda i: -(ctx.steps.duration_ns[i] - r.serving.busy_ns[i])
        ),
    )
    return [f] if f is not None else []
