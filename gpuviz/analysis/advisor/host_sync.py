"""``host_sync``: the CPU blocks until the GPU drains, and the GPU then idles.

Condition: idle gaps whose cause is ``sync`` (a synchronizing call, such as
``cudaStreamSynchronize`` under ``.item()``/``.cpu()``, began before the gap and returned as it
began; see :mod:`gpuviz.analysis.gaps`). ``aten::item`` on a CPU tensor makes no such call, so
it never counts.

The launch-bound gaps that follow a sync's gap are the sync's, within the time the CPU was
blocked in it (:attr:`gpuviz.analysis.gaps.IdleGaps.sync_ns`): the sync emptied the queue, so
the GPU then waits for each launch, and CUDA graphs, the launch-bound fix, cannot capture a
sync. On a loop with ``torch.cuda.synchronize()`` and ``.item()`` after each layer this finding
comes before ``launch_bound`` (cause before symptom).

Saving: per sync, the shorter of the time the CPU was blocked in the call and the GPU's idle
gaps it accounts for. Without the sync the CPU would have used the blocked time to queue the
next work; it cannot win back more than that (a CPU-bound loop gains little from dropping its
syncs).

Severity follows the saving's share, with one exception: syncs that recur (at least one per
step, and three in all) and leave the GPU idle for at least 2% of the steps, but cost little
now because the loop is CPU-bound (the CPU was blocked for less time than the GPU then
idled), are reported as ``info``. They will
cost a full pipeline drain each once launches get cheaper, and ``.item()`` breaks CUDA-graph
capture and ``torch.compile`` graphs, the usual fixes for a CPU-bound loop.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from gpuviz.analysis.activity import rank_value
from gpuviz.analysis.advisor._gaprules import worst_device_per_rank
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
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
    saving = np.where(picked, g.sync_ns, 0).astype(np.float64)
    per = worst_device_per_rank(ctx, picked, saving)
    totals = {r: float(ctx.step_total_ns(r)) for r in per.saving_ns}
    rank, _ = ctx.worst_rank(KIND, per.saving_ns, totals)
    gaps = per.gaps[rank]
    # A sync's own gap and the launch gaps that follow it share its row: count each call once.
    sync_rows = np.unique(g.sync_row[gaps])
    blocked_ns = float(s.dur_ns[sync_rows].sum())
    callers = _callers(ctx, sync_rows)
    caller_of = dict(zip(sync_rows.tolist(), callers))
    top = Counter(callers).most_common(3)
    order = gaps[np.argsort(-saving[gaps], kind="stable")][:MAX_EVIDENCE]
    evidence = [
        Evidence(
            rank=rank_value(int(g.rank[i])),
            device=int(g.device[i]),
            start_ns=int(s.start_ns[g.sync_row[i]]),
            end_ns=int(g.end_ns[i]),
            thread=ctx.thread_of(int(g.sync_row[i])),
            names=(caller_of[int(g.sync_row[i])],),
            count=1,
        )
        for i in order
    ]
    total = per.saving_ns[rank]
    idle = float(g.duration_ns[gaps].sum())
    n_steps = max(ctx.step_count(rank), 1)
    sources = ", ".join(f"{name} ({n}×)" for name, n in top)
    detail = (
        f"{len(sync_rows)} synchronization{'s' if len(sync_rows) > 1 else ''}{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(per.saving_ns)))} blocked the CPU "
        f"({fmt_ms(blocked_ns)} in all) until GPU {per.device[rank]} drained; "
        f"it then sat idle {fmt_ms(idle / n_steps)} a step until the CPU queued more work "
        f"({fmt_ms(idle)} over {n_steps} step{'s' if n_steps != 1 else ''} of "
        f"{fmt_ms(totals[rank])}, {fmt_pct(idle / totals[rank])}). "
        f"They come from {sources}."
    )
    # Recurring syncs that cost little because the loop is CPU-bound (the CPU was blocked for
    # less time than the GPU then idled), while the GPU does idle after them noticeably.
    recurring = len(sync_rows) >= max(ctx.step_count(rank), MIN_RECURRING)
    cheap = total < REPORT_SHARE * totals[rank] and blocked_ns < idle
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
            "Per sync, the shorter of the GPU's idle gaps after it (its own and the launch "
            "gaps that follow it) and the time the CPU was blocked in it: the CPU could have "
            "queued work that long ahead."
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


AFTER_SYNC_SHARE = 0.5
"""When at least this share of the launch-bound idle time follows host syncs…"""

MIN_SYNCS_PER_STEP = 4
"""…and there are at least this many syncs a step (more than a loss's ``.item()`` at the end
of each step, which leaves the step's body to a CUDA graph), the syncs are its cause:
``host_sync`` comes first."""


def cause_before_symptom(ctx: AdviceContext, findings: list[Finding]) -> list[Finding]:
    """Put ``host_sync`` before ``launch_bound`` when the launch-bound gaps follow the syncs.

    A sync empties the GPU's queue, so the launches after it each leave the GPU waiting: on a
    loop with ``torch.cuda.synchronize()`` and ``.item()`` after each layer the launch-bound
    gaps are the syncs' symptom, and the launch-bound fix (CUDA graphs, ``torch.compile``'s
    reduce-overhead) cannot capture a sync. When at least :data:`AFTER_SYNC_SHARE` of the
    launch-bound idle time follows syncs (:attr:`gpuviz.analysis.gaps.IdleGaps.after_sync`)
    and the syncs split the steps (:data:`MIN_SYNCS_PER_STEP` a step or more),
    ``host_sync`` moves just before ``launch_bound``, is at least a warning, and both details
    say why. Their savings stay as measured: dropping the syncs alone wins back no more
    than the time the CPU was blocked in them.
    """
    kinds = [f.kind for f in findings]
    if KIND not in kinds or "launch_bound" not in kinds:
        return findings
    return symptom_order(symptom_sums(ctx), findings)


def symptom_sums(ctx: AdviceContext) -> tuple[float, float, int, int]:
    """What :func:`cause_before_symptom` weighs: the launch-bound idle time, the part of it
    that follows syncs, the distinct syncs that split steps, and the step count.

    Each is a sum over ranks (a sync row is one rank's), so a job advised rank by rank adds
    its ranks' sums (:mod:`gpuviz.analysis.advisor.by_rank`).
    """
    from gpuviz.analysis.advisor.launch_bound import MAX_GAP_NS
    from gpuviz.analysis.gaps import LAUNCH

    g = ctx.gaps
    launch = (g.cause == LAUNCH) & (g.duration_ns <= MAX_GAP_NS)
    total = float(g.duration_ns[launch].sum())
    after = float(g.duration_ns[launch & g.after_sync].sum())
    syncs = len(np.unique(g.sync_row[g.cause == SYNC]))
    return total, after, syncs, len(ctx.steps)


def symptom_order(sums: tuple[float, float, int, int], findings: list[Finding]) -> list[Finding]:
    """:func:`cause_before_symptom` of ``findings`` given :func:`symptom_sums`'s figures."""
    kinds = [f.kind for f in findings]
    if KIND not in kinds or "launch_bound" not in kinds:
        return findings
    total, after, syncs, n_steps = sums
    dense = syncs >= MIN_SYNCS_PER_STEP * max(n_steps, 1)
    if total <= 0 or after < AFTER_SYNC_SHARE * total or not dense:
        return findings
    i_sync, i_launch = kinds.index(KIND), kinds.index("launch_bound")
    hs, lb = findings[i_sync], findings[i_launch]
    # At least a warning: its own saving may be small (a CPU-bound loop), but the larger
    # launch-bound saving waits for it.
    severity = "warning" if hs.severity == "info" else hs.severity
    note = (
        f" {fmt_pct(after / total)} of the GPU's launch-bound idle time follows these syncs: "
        "each one empties the queue, so the GPU then waits for every launch, and CUDA graphs "
        "(the launch-bound fix) cannot capture a sync. Remove them first."
    )
    hs = replace(hs, severity=severity, detail=hs.detail + note)
    lb = replace(
        lb,
        detail=lb.detail + f" {fmt_pct(after / total)} of these gaps follow host syncs (see "
        "host_sync): CUDA graphs cannot capture a sync, so remove the syncs first.",
    )
    at = min(i_sync, i_launch)  # the findings before it are neither
    rest = [f for f in findings[at:] if f.kind not in (KIND, "launch_bound")]
    return [*findings[:at], hs, lb, *rest]
