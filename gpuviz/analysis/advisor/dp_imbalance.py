"""``dp_imbalance``: uneven GPU work across the replicas of a DataParallel step.

Condition: in DataParallel steps where every GPU got rows, the busiest replica's GPU time is
more than :data:`MAX_OVER_MEAN` times the mean (``max/mean > 1.2``). DataParallel loads its
first GPU more: it scatters the input from there and gathers the outputs back to it.

Saving: per such step, the busiest replica's GPU time less the mean, summed.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from gpuviz.analysis.advisor.context import AdviceContext
from gpuviz.analysis.advisor.findings import MAX_EVIDENCE, Evidence, Finding, fmt_ms, fmt_pct
from gpuviz.analysis.advisor.idle_devices import _dp_windows

KIND = "dp_imbalance"
MAX_OVER_MEAN = 1.2

FIX = (
    "Balance the replicas, or leave DataParallel: DistributedDataParallel runs one process per "
    "GPU with no scatter or gather through one device "
    "(`torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])` under "
    "`torchrun`); with DataParallel, put the output on another device (`output_device=`) or "
    "keep GPU 0 out of the replicas."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``dp_imbalance`` finding of a trace (empty when the condition does not hold)."""
    by: dict[tuple[int, int], list] = defaultdict(list)
    for r in ctx.splits:
        by[(-1 if r.rank is None else r.rank, r.step)].append(r)
    uneven = []
    for key, rows in sorted(by.items()):
        gpu = np.array([float(r.gpu_ns) for r in rows])
        if len(rows) < 2 or any(r.rows == 0 for r in rows) or gpu.mean() <= 0:
            continue
        if gpu.max() > MAX_OVER_MEAN * gpu.mean():
            uneven.append((key, rows, gpu))
    if not uneven:
        return []
    rank = uneven[0][0][0]
    total = float(ctx.step_total_ns(rank))
    saving = float(sum(g.max() - g.mean() for _, _, g in uneven))
    first_heavy = sum(int(np.argmax(g) == 0) for _, _, g in uneven)
    windows = _dp_windows(ctx)
    (_, step), rows, gpu = max(uneven, key=lambda u: u[2].max() - u[2].mean())
    spread = ", ".join(f"GPU {r.device} {fmt_ms(r.gpu_ns)}" for r in rows)
    detail = (
        f"In {len(uneven)} of {len(by)} DataParallel steps the busiest replica's GPU time was "
        f"more than {MAX_OVER_MEAN}x the mean; worst, step {step}: {spread} "
        f"(max/mean {gpu.max() / gpu.mean():.2f}). "
        + (
            f"GPU {rows[0].device}, which scatters the batch and gathers the outputs, was the "
            f"busiest in {first_heavy} of them. "
            if first_heavy
            else ""
        )
        + f"Uneven time summed: {fmt_ms(saving)} ({fmt_pct(saving / total)} of the steps)."
    )
    evidence = []
    for (r, s), rows_, g in uneven[:MAX_EVIDENCE]:
        start, end = windows.get((r, s), (0, 0))
        heavy = rows_[int(np.argmax(g))]
        evidence.append(
            Evidence(
                rank=None if r < 0 else r,
                device=heavy.device,
                start_ns=start,
                end_ns=end,
                names=(f"DataParallel.forward #{s}",),
            )
        )
    f = ctx.finding(
        KIND,
        saving,
        total,
        title="DataParallel replicas get uneven GPU work",
        detail=detail,
        fix=FIX,
        saving_how=(
            "Per uneven step, the busiest replica's GPU time less the mean over replicas, summed."
        ),
        evidence=evidence,
    )
    return [f] if f is not None else []
