"""``idle_devices``: GPUs that get no work in a DataParallel or multi-GPU step.

Condition, per step:

- DataParallel steps (``DataParallel.forward``, :func:`gpuviz.analysis.splits.find_splits`):
  a GPU of the step's device list gets no rows (DataParallel splits a batch of 10 over 8 GPUs
  as 2,2,2,2,2 and leaves 3 GPUs without work);
- other steps in which two or more GPUs of a rank work: a GPU that works in other such steps
  does nothing in this one.

Saving: per step, the busiest GPU's time less the mean over all the step's GPUs (the idle
ones too), the most that spreading the work evenly could save.

Severity is not the saving's share: an idle GPU is worth knowing about even when the GPUs do
little. It is ``warning`` when GPUs idle in at least half of the multi-GPU steps (the batch is
too small for the GPU count), and ``info`` when it happens less often (a last, partial batch).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from gpuviz.analysis.activity import rank_value
from gpuviz.analysis.advisor.context import AdviceContext
from gpuviz.analysis.advisor.findings import MAX_EVIDENCE, Evidence, Finding, fmt_ms

KIND = "idle_devices"

FIX = (
    "Give every GPU work: use a batch divisible by the GPU count (`batch % "
    "torch.cuda.device_count() == 0`, `DataLoader(..., drop_last=True)` for the last partial "
    "batch), or pass only the GPUs you can fill (`DataParallel(model, device_ids=[...])`); "
    "better, use DistributedDataParallel with a DistributedSampler, one process per GPU."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``idle_devices`` finding of a trace (empty when the condition does not hold)."""
    steps = _dp_steps(ctx) or _multi_gpu_steps(ctx)
    if not steps:
        return []
    idle_steps = [s for s in steps if s["idle"]]
    if not idle_steps:
        return []
    rank = idle_steps[0]["rank"]
    total = float(ctx.step_total_ns(rank))
    saving = sum(
        max(s["gpu_ns"].values()) - float(np.mean(list(s["gpu_ns"].values()))) for s in idle_steps
    )
    often = len(idle_steps) * 2 >= len(steps)
    first = idle_steps[0]
    idle = sorted(first["idle"])
    rows = first.get("rows")
    split = f" ({', '.join(str(rows[d]) for d in sorted(rows))} rows)" if rows is not None else ""
    detail = (
        f"In {len(idle_steps)} of {len(steps)} multi-GPU steps some GPUs got no work: in step "
        f"{first['step']}, GPU{'s' if len(idle) > 1 else ''} {', '.join(map(str, idle))} of "
        f"{', '.join(map(str, sorted(first['gpu_ns'])))} idled{split}. The busiest GPU's "
        f"time less the mean over all of them, summed over those steps: {fmt_ms(saving)}."
    )
    evidence = [
        Evidence(
            rank=rank_value(s["rank"]),
            device=d,
            start_ns=s["start_ns"],
            end_ns=s["end_ns"],
            names=(s["label"],),
        )
        for s in idle_steps
        for d in sorted(s["idle"])
    ][:MAX_EVIDENCE]
    f = ctx.finding(
        KIND,
        saving,
        total,
        title="Some GPUs get no work in multi-GPU steps",
        detail=detail,
        fix=FIX,
        saving_how=(
            "Per step, the busiest GPU's time less the mean over all the step's GPUs (idle ones "
            "included), summed: the most an even split could save."
        ),
        evidence=evidence,
        severity="warning" if often else "info",
    )
    return [f] if f is not None else []


def _dp_steps(ctx: AdviceContext) -> list[dict]:
    """DataParallel steps: per (rank, step) the GPUs, their rows and GPU time, the idle ones."""
    by: dict[tuple[int, int], list] = defaultdict(list)
    for r in ctx.splits:
        by[(-1 if r.rank is None else r.rank, r.step)].append(r)
    windows = _dp_windows(ctx)
    out = []
    for (rank, step), rows in sorted(by.items()):
        known = all(r.rows is not None for r in rows)
        busy = {r.device: float(r.gpu_ns) for r in rows}
        idle = {r.device for r in rows if (r.rows == 0 if known else r.gpu_ns == 0)}
        if not known and not any(busy.values()):
            continue
        start, end = windows.get((rank, step), (0, 0))
        out.append(
            {
                "rank": rank,
                "step": step,
                "label": f"DataParallel.forward #{step}",
                "gpu_ns": busy,
                "idle": idle,
                "rows": {r.device: r.rows for r in rows} if known else None,
                "start_ns": start,
                "end_ns": end,
            }
        )
    return out


def _dp_windows(ctx: AdviceContext) -> dict[tuple[int, int], tuple[int, int]]:
    """(rank, DataParallel step) -> the ``DataParallel.forward`` range."""
    s, t = ctx.trace.slices, ctx.trace.tracks
    from gpuviz.trace.model import Kind

    fid = ctx.trace.symbols.find("DataParallel.forward")
    rows = np.flatnonzero(
        (s.name == fid) & ((s.kind == Kind.USER_ANNOTATION) | (s.kind == Kind.CPU_OP))
    )
    out = {}
    for rank in np.unique(t.rank[s.track[rows]]).tolist():
        mine = rows[t.rank[s.track[rows]] == rank]
        mine = mine[np.argsort(s.start_ns[mine], kind="stable")]
        for i, r in enumerate(mine.tolist()):
            out[(int(rank), i)] = (int(s.start_ns[r]), int(s.start_ns[r] + s.dur_ns[r]))
    return out


def _multi_gpu_steps(ctx: AdviceContext) -> list[dict]:
    """Steps in which 2+ GPUs of a rank work; a GPU working in other such steps may idle."""
    b = ctx.breakdown
    d = b.devices
    busy = d.compute_ns + d.comm_ns + d.copy_ns + d.set_ns
    out = []
    for rank in np.unique(d.rank).tolist():
        mine = np.flatnonzero(d.rank == rank)
        per_step: dict[int, dict[int, float]] = defaultdict(dict)
        for j in mine.tolist():
            per_step[int(d.step[j])][int(d.device[j])] = float(busy[j])
        multi = {k: v for k, v in per_step.items() if sum(x > 0 for x in v.values()) >= 2}
        working = {dev for v in multi.values() for dev, x in v.items() if x > 0}
        for k, v in sorted(multi.items()):
            gpu = {dev: v.get(dev, 0.0) for dev in working}
            out.append(
                {
                    "rank": int(rank),
                    "step": int(b.steps.number[k]),
                    "label": b.steps.label(k),
                    "gpu_ns": gpu,
                    "idle": {dev for dev, x in gpu.items() if x == 0},
                    "rows": None,
                    "start_ns": int(b.steps.start_ns[k]),
                    "end_ns": int(b.steps.end_ns[k]),
                }
            )
    return out
