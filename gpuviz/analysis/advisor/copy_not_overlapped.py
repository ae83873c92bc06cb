"""``copy_not_overlapped``: large host copies that run while their GPU computes nothing.

Condition: host-to-device and device-to-host copies from pinned memory (pageable ones are
``pageable_copy``'s: pin them first) of at least :data:`MIN_BYTES` run, for some of their time,
while no kernel runs on their GPU. Copies launched from inside a collective (gloo stages CUDA
tensors through the host) are the collective's, not the program's, and are left out.

Saving: per GPU, the exposed copy time (copy time with no kernel beside it), but no more than
the GPU's compute time: a copy issued early on a side stream can hide behind compute, and only
behind as much compute as there is.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.activity import rank_device_pairs
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_bytes, fmt_ms, fmt_pct
from gpuviz.trace.model import Kind

KIND = "copy_not_overlapped"
MIN_BYTES = 1 << 20

FIX = (
    "Issue the copy early on a side stream so that it overlaps compute: from pinned memory, "
    "`with torch.cuda.stream(copy_stream): nxt = x.to('cuda', non_blocking=True)`, then "
    "`torch.cuda.current_stream().wait_stream(copy_stream)` (and `nxt.record_stream(...)`) "
    "before using it; a prefetching loader (`pin_memory=True` plus a CUDA-stream prefetcher) "
    "does this for inputs."
)


def _host_copy(name: str) -> bool:
    return ("HtoD" in name or "DtoH" in name) and "Pageable" not in name


def _launched_in_collectives(ctx: AdviceContext) -> np.ndarray:
    """Per activity row: whether its launch call ran inside a CPU-side collective."""
    from gpuviz.analysis.gaps import cpu_collective_coverages

    a = ctx.activity
    s = ctx.trace.slices
    out = np.zeros(len(a), dtype=bool)
    by_rank = cpu_collective_coverages(ctx.trace)
    if not by_rank:
        return out
    launch = ctx.trace.launches_of(a.rows)
    has = launch >= 0
    for rank in np.unique(a.rank[has]).tolist():
        cov = by_rank.get(rank)
        if cov is None or len(cov) == 0:
            continue
        pick = np.flatnonzero(has & (a.rank == rank))
        t = s.start_ns[launch[pick]]
        out[pick] = cov.covered(t, t + 1) > 0
    return out


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``copy_not_overlapped`` finding of a trace (empty when the condition does not hold)."""
    a = ctx.activity
    s = ctx.trace.slices
    big = (
        (a.kind == Kind.MEMCPY)
        & ctx.mask(_host_copy)[s.name[a.rows]]
        & (s.bytes[a.rows] >= MIN_BYTES)
    )
    if big.any():
        big &= ~_launched_in_collectives(ctx)
    if not big.any():
        return []
    per: dict[int, float] = {}
    where: dict[int, tuple[int, np.ndarray, np.ndarray, float, float]] = {}
    for rank, device in rank_device_pairs(a.rank[big], a.device[big]):
        cov = ctx.coverages[(rank, device)]
        on = np.flatnonzero(big & (a.rank == rank) & (a.device == device))
        t0, t1 = a.start_ns[on], a.end_ns[on]
        exposed = (t1 - t0) - cov["compute+comm"].covered(t0, t1)
        hidden_by = float(cov["compute"].total_ns)
        saving = min(float(exposed.sum()), hidden_by)
        if saving > per.get(rank, 0.0):
            per[rank] = saving
            where[rank] = (device, on, exposed, float(exposed.sum()), hidden_by)
    if not per:
        return []
    totals = {r: float(ctx.step_total_ns(r)) for r in per}
    rank, _ = ctx.worst_rank(KIND, per, totals)
    device, on, exposed, exposed_ns, compute_ns = where[rank]
    rows = a.rows[on]
    nbytes = float(s.bytes[rows].sum())
    detail = (
        f"{len(rows)} copies of {fmt_bytes(nbytes)} on GPU {device}"
        f"{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(per)))} ran {fmt_ms(exposed_ns)} with no kernel beside "
        f"them ({fmt_pct(exposed_ns / totals[rank])} of {fmt_ms(totals[rank])} of steps); the "
        f"GPU computed {fmt_ms(compute_ns)} that they could have hidden behind."
    )
    order = rows[np.argsort(-exposed, kind="stable")]
    f = ctx.finding(
        KIND,
        per[rank],
        totals[rank],
        title="Large copies run while the GPU computes nothing",
        detail=detail,
        fix=FIX,
        saving_how=(
            "The copies' time with no kernel beside them, at most the GPU's compute time: a "
            "copy on a side stream hides behind as much compute as there is."
        ),
        evidence=ctx.slice_evidence(order),
    )
    return [f] if f is not None else []
