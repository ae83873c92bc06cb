"""``mixed_step_slow``: prefill chunks in decode batches make the decode latency jump.

Condition: on a rank with both mixed (prefill and decode requests in one step) and
decode-only steps, the median mixed step lasts at least :data:`MIN_RATIO` times the median
decode step. Every running request waits for the mixed step before its next token.

Saving: each mixed step's time beyond :data:`MIN_RATIO` decode steps: a smaller prefill chunk
bounds a mixed step near a decode step's time.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.advisor._servingrules import phase_rows, step_evidence
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_ms

KIND = "mixed_step_slow"
MIN_RATIO = 2.0

FIX = (
    "Bound the prefill work a step carries: a smaller chunk (vLLM `--max-num-batched-tokens` "
    "with chunked prefill, SGLang `--chunked-prefill-size`), or separate prefill from decode "
    "(disaggregated serving) where inter-token latency matters most."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``mixed_step_slow`` finding of a trace (empty when the condition does not hold)."""
    mixed, decode = phase_rows(ctx, "mixed"), phase_rows(ctx, "decode")
    dur = ctx.steps.duration_ns
    hit: dict[int, float] = {}
    med: dict[int, tuple[float, float]] = {}
    for rank, rows in mixed.items():
        if rank not in decode:
            continue
        m, d = float(np.median(dur[rows])), float(np.median(dur[decode[rank]]))
        if d > 0 and m >= MIN_RATIO * d:
            hit[rank] = float(np.maximum(dur[rows] - MIN_RATIO * d, 0).sum())
            med[rank] = (m, d)
    if not hit:
        return []
    totals = {k: float(ctx.step_total_ns(k)) for k in hit}
    rank, _ = ctx.worst_rank(KIND, hit, totals)
    rows = mixed[rank]
    m, d = med[rank]
    detail = (
        f"{len(rows)} mixed step{'s' if len(rows) != 1 else ''}{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(hit)))} "
        f"took {fmt_ms(m)} on median against {fmt_ms(d)} for a decode step ({m / d:.1f}x): "
        "every running request waited that long for its next token."
    )
    f = ctx.finding(
        KIND,
        hit[rank],
        totals[rank],
        title="Mixed prefill-decode steps much longer than decode steps",
        detail=detail,
        fix=FIX,
        saving_how=(
            f"Each mixed step's time beyond {MIN_RATIO:g} median decode steps: a smaller "
            "prefill chunk bounds it."
        ),
        evidence=step_evidence(ctx, rows, key=lambda i: -int(dur[i])),
    )
    return [f] if f is not None else []
