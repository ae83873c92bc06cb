"""``host_sync``: the CPU blocks until the GPU drains, and the GPU then idles.

Condition: idle gaps whose cause is ``sync`` (a synchronizing call, such as
``cudaStreamSynchronize`` under ``.item()``/``.cpu()``, began before the gap and returned as it
began; see :mod:`gpuviz.analysis.gaps`). ``aten::item`` on a CPU tensor makes no such call, so
it never counts.

Saving: per gap, the shorter of the gap and the time the CPU was blocked in the call. Without
the sync the CPU would have used the blocked time to queue the next work; it cannot win back
more than that (a CPU-bound loop gains little from dropping its syncs).

Severity follows the saving's share, with one exception: syncs that recur (at least one per
step, and three in all) and leave the GPU idle for at least 2% of the steps, but cost little
now because the loop is CPU-bound (the CPU was blocked for less time than the GPU then
idled), are reported as ``info``. They will
cost a full pipeline drain each once launches get cheaper, and ``.item()`` breaks CUDA-graph
capture and ``torch.compile`` graphs, the usual fixes for a CPU-bound loop.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from gpuviz.analysis.activity import rank_value
from gpuviz.analysis.advisor._gaprules import worst_device_per_rank
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase, worst_per_rank
from gpuviz.analysis.advisor.findings import (
    MAX_EVIDENCE,
    REPORT_SHARE,
    Evidence,
    Finding,
    fmt_ms,
    fmt_pct,
)
from gpuviz.analysis.gaps import SYNC
from gpuviz.analysis.stacks import enclosing_ops

KIND = "host_sync"
MIN_RECURRING = 3

FIX = (
    "Do not read GPU values on the CPU inside the step: keep losses and metrics as tensors "
    "and call `.item()`/`.cpu()`/`print` every N steps; copy results with "
    "`.to('cpu', non_blocking=True)` into pinned memory; drop `torch.cuda.synchronize()` from "
    "the loop (time with `torch.cuda.Event(enable_timing=True)`); avoid ops with data-dependent "
    "shapes (`nonzero`, boolean masks) in the hot path."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``host_sync`` finding of a trace (empty when the condition does not hold)."""
    g = ctx.gaps
    s = ctx.trace.slices
    picked = g.cause == SYNC
    if not picked.any():
        return []
    blocked = np.where(picked, s.dur_ns[np.maximum(g.sync_row, 0)], 0)
    saving = np.minimum(g.duration_ns, blocked).astype(np.float64)
    per = worst_device_per_rank(ctx, picked, saving)
    totals = {r: float(ctx.step_total_ns(r)) for r in per.saving_ns}
    rank, _ = worst_per_rank(per.saving_ns, totals)
    gaps = per.gaps[rank]
    sync_rows = g.sync_row[gaps]
    callers = _callers(ctx, sync_rows)
    top = Counter(callers).most_common(3)
    order = gaps[np.argsort(-saving[gaps], kind="stable")][:MAX_EVIDENCE]
    evidence = [
        Evidence(
            rank=rank_value(int(g.rank[i])),
            device=int(g.device[i]),
            start_ns=int(s.start_ns[g.sync_row[i]]),
            end_ns=int(g.end_ns[i]),
            thread=ctx.thread_of(int(g.sync_row[i])),
            names=(callers[int(np.flatnonzero(gaps == i)[0])],),
            count=1,
        )
        for i in order
    ]
    total = per.saving_ns[rank]
    idle = float(g.duration_ns[gaps].sum())
    sources = ", ".join(f"{name} ({n}×)" for name, n in top)
    detail = (
        f"{len(gaps)} synchronization{'s' if len(gaps) > 1 else ''}{ranks_phrase(ctx, rank, sorted(per.saving_ns))} blocked the CPU "
        f"({fmt_ms(float(blocked[gaps].sum()))} in all) until GPU {per.device[rank]} drained; "
        f"it then sat idle {fmt_ms(idle)} until the CPU queued more work "
        f"({fmt_pct(idle / totals[rank])} of {fmt_ms(totals[rank])} of steps). "
        f"They come from {sources}."
    )
    # Recurring syncs that cost little because the loop is CPU-bound (the CPU was blocked for
    # less time than the GPU then idled), while the GPU does idle after them noticeably.
    recurring = len(gaps) >= max(ctx.step_count(rank), MIN_RECURRING)
    cheap = total < REPORT_SHARE * totals[rank] and float(blocked[gaps].sum()) < idle
    visible = idle >= REPORT_SHARE * totals[rank]
    info_only = recurring and cheap and visible
    if info_only:
        detail += (
            " The CPU was barely blocked: the loop is CPU-bound, so they cost little now; once "
            "launches get cheaper each one costs a pipeline drain, and `.item()` breaks "
            "CUDA-graph capture and `torch.compile` graphs."
        )
    f = ctx.finding(
        KIND,
        total,
        totals[rank],
        title="The CPU waits for the GPU, then the GPU waits for the CPU (host syncs)",
        detail=detail,
        fix=FIX,
        saving_how=(
            "Per sync, the shorter of the GPU's idle gap after it and the time the CPU was "
            "blocked in it: the CPU could have queued work that long ahead."
        ),
        evidence=evidence,
        severity="info" if info_only else None,
    )
    return [f] if f is not None else []


def _callers(ctx: AdviceContext, rows: np.ndarray) -> list[str]:
    """For each sync call, the PyTorch op that made it (outermost ``aten::`` op) and the call."""
    chains = enclosing_ops(ctx.trace, rows)
    out = []
    for row, chain in zip(rows.tolist(), chains):
        call = ctx.trace.name_of(row)
        aten = [ctx.trace.name_of(r) for r in chain if ctx.trace.name_of(r).startswith("aten::")]
        out.append(f"{aten[0]} > {call}" if aten else call)
    return out
