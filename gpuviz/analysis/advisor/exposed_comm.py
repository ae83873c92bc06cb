"""``exposed_comm``: communication that no compute hides, as a share of the step.

Condition: on some GPU, time in NCCL kernels while no compute kernel runs (the step
breakdown's exclusive ``comm``), or, with gloo, GPU idle time while the CPU is inside a
collective (idle gaps whose cause is ``comm``). The part of it spent waiting for the last rank
to arrive is left out: that is the straggler's (see ``straggler``), not the communication's.

Saving: that exposed, non-waiting communication time: with perfect overlap it would hide
behind compute (an upper bound: the last gradient bucket of a step can never fully hide).
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.activity import rank_device_pairs
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_ms, fmt_pct
from gpuviz.analysis.coverage import Coverage
from gpuviz.analysis.gaps import COMM
from gpuviz.analysis.intervals import intersect, merge

KIND = "exposed_comm"

FIX = (
    "Overlap communication with compute: let DDP start all-reduces during the backward "
    "(smaller buckets, e.g. `DistributedDataParallel(model, bucket_cap_mb=10, "
    "gradient_as_bucket_view=True)`); with FSDP prefetch (`backward_prefetch=BACKWARD_PRE`, "
    "`forward_prefetch=True`); communicate less often (accumulate gradients over micro-batches "
    "inside `model.no_sync()`); use NCCL rather than gloo for CUDA tensors."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``exposed_comm`` finding of a trace (empty when the condition does not hold)."""
    a = ctx.activity
    waits = _wait_intervals(ctx)
    g = ctx.gaps
    per: dict[int, float] = {}
    where: dict[int, tuple[int, float, float, str]] = {}
    keys = set(rank_device_pairs(a.rank[ctx.comm], a.device[ctx.comm]))
    nccl = {rank for rank, _ in keys}
    on_comm = g.cause == COMM
    keys |= set(rank_device_pairs(g.rank[on_comm], g.device[on_comm]))
    comm_gaps = _by_rank_device(g.rank, g.device, np.flatnonzero(on_comm))
    for rank, device in sorted(keys):
        cov = ctx.coverages[(rank, device)]
        w = waits.get(rank, (np.empty(0, np.int64), np.empty(0, np.int64)))
        # NCCL kernels with no compute beside them, less the waiting for the last rank.
        comm = (cov["comm"].starts, cov["comm"].ends)
        comp = (cov["compute"].starts, cov["compute"].ends)
        exposed = _minus(comm, comp)
        kernel_ns = _length(exposed) - _length(intersect(exposed, w))
        # gloo (ranks without NCCL kernels): GPU idle while the CPU communicates, less the
        # waiting. With NCCL the CPU side only enqueues: its kernels are the communication.
        pick = comm_gaps.get((rank, device), _NO_ROWS) if rank not in nccl else _NO_ROWS
        idle = merge(g.start_ns[pick], g.end_ns[pick])
        cpu_ns = _length(idle) - _length(intersect(idle, w))
        saving = float(kernel_ns + cpu_ns)
        if saving > per.get(rank, 0.0):
            per[rank] = saving
            kind = "NCCL kernels" if kernel_ns >= cpu_ns else "CPU-side (gloo) collectives"
            where[rank] = (device, float(_length(exposed)), float(_length(idle)), kind)
    # idle is empty for NCCL ranks (see above), so kind says NCCL there
    if not per:
        return []
    totals = {r: float(ctx.step_total_ns(r)) for r in per}
    rank, _ = ctx.worst_rank(KIND, per, totals)
    device, exposed_ns, idle_ns, kind = where[rank]
    waited = exposed_ns + idle_ns - per[rank]
    straggler = ctx.ranks is not None and ctx.ranks.straggler is not None
    lone = ctx.ranks is None and _distributed(ctx)
    detail = (
        f"GPU {device}{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(per)))} spent {fmt_ms(per[rank])} in "
        f"communication ({kind}) that no compute hid: {fmt_pct(per[rank] / totals[rank])} of "
        f"{fmt_ms(totals[rank])} of steps"
        + (
            f". Besides that it waited {fmt_ms(waited)} for other ranks to arrive, which is "
            "their lateness, not communication" + (" (see straggler)." if straggler else ".")
            if waited > 0
            else "."
        )
        + (
            " With one rank's file only, the time it waited for the other ranks cannot be told "
            "apart from communication: open all ranks' files together."
            if lone
            else ""
        )
    )
    f = ctx.finding(
        KIND,
        per[rank],
        totals[rank],
        title="Communication is not hidden behind compute",
        detail=detail,
        fix=FIX,
        saving_how=(
            "Communication time with no compute beside it, less the time spent waiting for the "
            "last rank, summed: perfect overlap would hide it (an upper bound)."
        ),
        evidence=_evidence(ctx, rank, device),
    )
    return [f] if f is not None else []


_NO_ROWS = np.empty(0, dtype=np.int64)


def _by_rank_device(
    rank: np.ndarray, device: np.ndarray, rows: np.ndarray
) -> dict[tuple[int, int], np.ndarray]:
    """``rows`` grouped by (rank, device), each group in ascending order: one sort, not a scan
    of every row per pair (per-pair work over ranks, issue 51)."""
    if len(rows) == 0:
        return {}
    r, d = np.asarray(rank)[rows].astype(np.int64), np.asarray(device)[rows].astype(np.int64)
    order = np.lexsort((rows, d, r))
    rows, r, d = rows[order], r[order], d[order]
    cut = np.flatnonzero((np.diff(r) != 0) | (np.diff(d) != 0)) + 1
    return {(int(r[i[0]]), int(d[i[0]])): rows[i] for i in np.split(np.arange(len(rows)), cut)}


def _distributed(ctx: AdviceContext) -> bool:
    """Whether the trace says it is one rank of a larger job (``distributedInfo``)."""
    for info in ctx.trace.ranks:
        world = (info.metadata.get("distributedInfo") or {}).get("world_size")
        if isinstance(world, int) and world > 1:
            return True
    return False


def _length(iv: tuple[np.ndarray, np.ndarray]) -> int:
    s, e = merge(*iv)
    return int((e - s).sum())


def _minus(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple:
    """``a`` with ``b`` cut out, as sorted disjoint intervals."""
    cov = Coverage(*b)
    s, e = merge(*a)
    if len(s) == 0 or len(cov) == 0:
        return s, e
    points = np.unique(np.concatenate([s, e, cov.starts, cov.ends]))
    lo, hi = points[:-1], points[1:]
    inside_a = Coverage(s, e).covered(lo, hi) == hi - lo
    inside_b = cov.covered(lo, hi) > 0
    keep = inside_a & ~inside_b
    return merge(lo[keep], hi[keep])


def _wait_intervals(ctx: AdviceContext) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per rank, the stretches it waited for the last rank at each collective."""
    ra = ctx.ranks
    if ra is None or len(ra.collectives) == 0:
        return {}
    table = ra.collectives
    out = {}
    for col, rank in enumerate(table.ranks.tolist()):
        has = table.present[:, col]
        start = table.arrival_ns[has, col]
        out[int(rank)] = (start, start + table.wait_ns[has, col])
    return out


def _evidence(ctx: AdviceContext, rank: int, device: int) -> list:
    """The longest NCCL kernels (or gloo gaps) of that GPU."""
    a = ctx.activity
    on = np.flatnonzero(ctx.comm & (a.rank == rank) & (a.device == device))
    if len(on):
        order = on[np.argsort(-(a.end_ns[on] - a.start_ns[on]), kind="stable")]
        return ctx.slice_evidence(a.rows[order])
    from gpuviz.analysis.advisor._gaprules import step_evidence

    g = ctx.gaps
    pick = np.flatnonzero((g.cause == COMM) & (g.rank == rank) & (g.device == device))
    return step_evidence(
        ctx, pick, g.duration_ns.astype(np.float64), ["GPU idle: CPU in a collective"]
    )
