"""What the serving rules share: a serving trace's steps of one phase on one rank, and the
evidence of a step (docs/serving.md, docs/advisor.md)."""

from __future__ import annotations

from typing import Any

from gpuviz.analysis.activity import rank_value
from gpuviz.analysis.advisor.context import AdviceContext
from gpuviz.analysis.advisor.findings import Evidence


def phase_rows(ctx: AdviceContext, phase: str) -> dict[int, list[int]]:
    """Per rank, the step rows of one phase (empty for a training trace)."""
    r = ctx.serving
    if r is None:
        return {}
    out: dict[int, list[int]] = {}
    for i, ph in enumerate(r.serving.phase):
        if ph == phase:
            out.setdefault(int(r.steps.rank[i]), []).append(i)
    return out


def step_evidence(ctx: AdviceContext, rows: list[int], key: Any = None) -> list[Evidence]:
    """One evidence per step row (its window), the largest ``key`` first."""
    st = ctx.steps
    rows = sorted(rows, key=key) if key is not None else rows
    return [
        Evidence(
            rank=rank_value(int(st.rank[i])),
            device=None,
            start_ns=int(st.start_ns[i]),
            end_ns=int(st.end_ns[i]),
            names=(f"{st.source[i]} step {int(st.number[i])}",),
            count=1,
        )
        for i in rows
    ]
