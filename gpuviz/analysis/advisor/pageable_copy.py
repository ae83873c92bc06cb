"""``pageable_copy``: copies from or to pageable (unpinned) host memory.

Condition: copies whose name says ``Pageable`` (``Memcpy HtoD (Pageable -> Device)``).

Saving: per copy, its time less the time the same bytes take at pinned-memory speed:
the best pinned copy bandwidth in this trace for that direction (copies of 1 MiB or more), or
:data:`PINNED_GBPS` GB/s where the trace has none (what a PCIe 4.0 x16 link sustains; PCIe 5
and NVLink-C2C hosts do better, so the estimate is low there). Pinned copies can also run
asynchronously (``non_blocking=True``) and hide behind compute, which this does not count.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_bytes, fmt_ms
from gpuviz.trace.model import Kind

KIND = "pageable_copy"
PINNED_GBPS = 20.0
BANDWIDTH_MIN_BYTES = 1 << 20

FIX = (
    "Copy from pinned memory, asynchronously: pin the host tensor once (`x = x.pin_memory()`) "
    "or let the loader do it (`DataLoader(..., pin_memory=True)`), then "
    "`x.to('cuda', non_blocking=True)`; for results, copy into a pinned buffer "
    "(`out = torch.empty(shape, pin_memory=True); out.copy_(y, non_blocking=True)`)."
)


def _direction(name: str) -> str:
    return "DtoH" if "DtoH" in name else "HtoD"


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``pageable_copy`` finding of a trace (empty when the condition does not hold)."""
    s, t = ctx.trace.slices, ctx.trace.tracks
    pageable = ctx.mask(lambda n: "Pageable" in n)
    pinned = ctx.mask(lambda n: "Pinned" in n)
    copies = np.flatnonzero((s.kind == Kind.MEMCPY) & pageable[s.name])
    if len(copies) == 0:
        return []
    job = ctx.job
    if job is not None and job.pinned_gbps is not None:
        bw = dict(job.pinned_gbps)  # one rank of a job: the best of all ranks' copies
    else:
        bw = _pinned_bandwidth(ctx, np.flatnonzero((s.kind == Kind.MEMCPY) & pinned[s.name]))
    nbytes = np.maximum(s.bytes[copies], 0).astype(np.float64)
    dirs = [_direction(n) for n in ctx.trace.symbols.lookup(s.name[copies])]
    gbps = np.array([bw.get(d, PINNED_GBPS) for d in dirs])
    ideal = nbytes / (gbps * 1e9) * 1e9
    saving = np.maximum(s.dur_ns[copies] - ideal, 0.0)
    rank_of = t.rank[s.track[copies]]
    per = {int(r): float(saving[rank_of == r].sum()) for r in np.unique(rank_of).tolist()}
    totals = {r: float(ctx.step_total_ns(r)) for r in per}
    rank, _ = ctx.worst_rank(KIND, per, totals)
    mine = rank_of == rank
    rows = copies[mine]
    total_bytes = float(nbytes[mine].sum())
    total_ns = float(s.dur_ns[rows].sum())
    measured = total_bytes / total_ns if total_ns else 0.0  # bytes per ns = GB/s
    used = sorted(set(float(v) for v in gbps[mine]))
    basis = ", ".join(f"{v:.0f}" for v in used)
    detail = (
        f"{len(rows)} copies{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(per)))} moved {fmt_bytes(total_bytes)} "
        f"through pageable host memory in {fmt_ms(total_ns)} ({measured:.1f} GB/s); from "
        f"pinned memory they would take about {fmt_ms(total_ns - per[rank])} at {basis} GB/s. "
        f"A pageable copy also blocks the CPU until it is done."
    )
    order = rows[np.argsort(-s.dur_ns[rows], kind="stable")]
    f = ctx.finding(
        KIND,
        per[rank],
        totals[rank],
        title="Copies through pageable host memory: slow, and they block the CPU",
        detail=detail,
        fix=FIX,
        saving_how=(
            "Each pageable copy's time less its bytes at the best pinned bandwidth seen in this "
            f"trace for its direction ({PINNED_GBPS:.0f} GB/s where none was), summed."
        ),
        evidence=ctx.slice_evidence(order),
    )
    return [f] if f is not None else []


def pinned_bandwidth(ctx: AdviceContext) -> dict[str, float]:
    """The trace's own best pinned bandwidth (GB/s) per direction, over copies of at least
    1 MiB: what a job advised rank by rank takes the best of over its ranks."""
    s = ctx.trace.slices
    pinned = ctx.mask(lambda n: "Pinned" in n)
    return _pinned_bandwidth(ctx, np.flatnonzero((s.kind == Kind.MEMCPY) & pinned[s.name]))


def _pinned_bandwidth(ctx: AdviceContext, rows: np.ndarray) -> dict[str, float]:
    """Best pinned bandwidth (GB/s) per direction, over copies of at least 1 MiB."""
    s = ctx.trace.slices
    out: dict[str, float] = {}
    big = rows[(s.bytes[rows] >= BANDWIDTH_MIN_BYTES) & (s.dur_ns[rows] > 0)]
    for row, name in zip(big.tolist(), ctx.trace.symbols.lookup(s.name[big])):
        gbps = float(s.bytes[row]) / float(s.dur_ns[row])
        d = _direction(name)
        out[d] = max(out.get(d, 0.0), gbps)
    return out
