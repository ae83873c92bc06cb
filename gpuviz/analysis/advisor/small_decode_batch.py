"""``small_decode_batch``: decode steps too small to use the memory bandwidth they spend.

Condition: on a rank, decode steps ran :data:`MIN_STEPS` or more times with at most
:data:`MAX_BATCH` requests on mean. Every decode step reads all the weights once, whatever its
batch: with few requests that read is shared by few tokens, and the step's time per token is
nearly that of reading the whole model.

Saving: per token, not per step. More requests a step take about the same step time while the
step stays bound by the weights' read, so the time per generated token falls about as the batch
grows. The finding reports the decode time the rank spent as its yardstick, and no step saving
(``info``).
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.advisor._servingrules import phase_rows, step_evidence
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_ms, fmt_pct

KIND = "small_decode_batch"
MAX_BATCH = 8
MIN_STEPS = 2

FIX = (
    "Batch more requests a decode step: raise the engine's concurrency (vLLM `--max-num-seqs`, "
    "SGLang `--max-running-requests`) and send it more at once; for `generate()`, pass more "
    "prompts in one batch. Check the KV cache's room (gpu-memory-utilization) that limits it."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``small_decode_batch`` finding of a trace (empty when the condition does not hold)."""
    r = ctx.serving
    for rank, rows in sorted(phase_rows(ctx, "decode").items()):
        reqs = [r.serving.requests[i] for i in rows]
        if len(rows) < MIN_STEPS or any(q is None for q in reqs):
            continue
        batch = float(np.mean([q for q in reqs if q is not None]))
        if batch > MAX_BATCH:
            continue
        total = float(ctx.steps.duration_ns[rows].sum())
        dec = r.phase("decode")
        mbu = (
            f"; the steps read at least {fmt_pct(dec.mbu)} of the peak bandwidth (MBU)"
            if dec is not None and dec.mbu is not None
            else ""
        )
        detail = (
            f"{len(rows)} decode steps{ranks_phrase(ctx, rank, [rank])} ran {batch:.1f} requests "
            f"each on mean, {fmt_ms(total / len(rows))} a step{mbu}: each step reads every "
            "weight for that many tokens only."
        )
        f = ctx.finding(
            KIND,
            0.0,
            total,
            title="Decode batch too small for the memory bandwidth it spends",
            detail=detail,
            fix=FIX,
            saving_how=(
                "None per step: a larger batch takes about as long a step while the weights' "
                "read bounds it, and yields more tokens per step."
            ),
            evidence=step_evidence(ctx, rows[:10]),
            severity="info",
        )
        return [f] if f is not None else []
    return []
