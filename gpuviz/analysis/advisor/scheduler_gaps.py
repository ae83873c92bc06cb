"""``scheduler_gaps``: the serving engine's CPU work between steps stalls the GPU.

Condition: on a rank, the gaps between consecutive serving steps (from one step's end,
its CPU range and GPU work done, to the next step's start: the scheduler's time, in which no
step's work ran) add up to at least :data:`MIN_SHARE` of the steps' time.

Saving: the gaps. An engine that schedules the next batch while the GPU runs the current one
(vLLM's async scheduling, SGLang's overlap scheduler) hides them.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.advisor._servingrules import step_evidence
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_ms, fmt_pct
from gpuviz.analysis.serving_markers import SOURCES

KIND = "scheduler_gaps"
MIN_SHARE = 0.1

FIX = (
    "Overlap scheduling with the GPU's work: vLLM's async scheduling (`--async-scheduling`), "
    "SGLang's overlap scheduler (on unless `--disable-overlap-schedule`); keep detokenization "
    "and logging off the scheduler's thread; for `generate()`, sample on the GPU and avoid "
    "`.item()`/`.cpu()` between steps."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``scheduler_gaps`` finding of a trace (empty when the condition does not hold)."""
    r = ctx.serving
    if r is None:
        return []
    st, gap = ctx.steps, r.serving.gap_before_ns
    hit: dict[int, float] = {}
    rows_of: dict[int, list[int]] = {}
    for rank in sorted({int(x) for x in st.rank.tolist()}):
        rows = [i for i in st.of_rank(rank).tolist() if st.source[i] in SOURCES and gap[i] > 0]
        total = float(ctx.step_total_ns(rank))
        gaps = float(gap[rows].sum()) if rows else 0.0
        if rows and total > 0 and gaps >= MIN_SHARE * total:
            hit[rank] = min(gaps, total)
            rows_of[rank] = rows
    if not hit:
        return []
    totals = {k: float(ctx.step_total_ns(k)) for k in hit}
    rank, _ = ctx.worst_rank(KIND, hit, totals)
    rows = rows_of[rank]
    g = gap[rows].astype(np.float64)
    detail = (
        f"Between {len(rows)} step{'s' if len(rows) != 1 else ''}{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(hit)))} "
        f"no step's work ran for {fmt_ms(float(g.sum()))} in all ({fmt_ms(float(np.median(g)))} "
        f"before a step on median), {fmt_pct(float(g.sum()) / totals[rank])} of the steps' "
        f"{fmt_ms(totals[rank])}: the engine scheduled the next batch while the GPU waited."
    )
    f = ctx.finding(
        KIND,
        hit[rank],
        totals[rank],
        title="Scheduler gaps between serving steps",
        detail=detail,
        fix=FIX,
        saving_how="The gaps between steps: scheduled while the GPU runs the previous step, they hide.",
        evidence=step_evidence(ctx, rows, key=lambda i: -int(gap[i])),
    )
    return [f] if f is not None else []
