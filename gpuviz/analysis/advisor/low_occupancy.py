"""``low_occupancy``: heavy kernels that leave most of the GPU unused.

A kernel name is *heavy* on a GPU when its launches take at least :data:`HEAVY_SHARE` of the
GPU's busy time and run at least :data:`MIN_MEAN_NS` on average. Up to :data:`SAMPLE` of its
longest launches are read (``grid``, ``block``, ``est. achieved occupancy %``). It is reported
when, on median over those launches:

- its grid has fewer blocks than the GPU has SMs (``numSms`` in ``deviceProperties``): whole
  SMs sit idle while it runs. Saving: its time times ``1 - blocks / SMs``, what spreading the
  same work over every SM would save at best;
- or (library GEMM, attention and cuDNN kernels aside, which run at low occupancy by design)
  its estimated achieved occupancy is below :data:`LOW_OCCUPANCY_PCT`%. Saving: a quarter of its
  time, a rough figure: more resident warps hide memory latency, but rarely scale linearly.

NCCL kernels are left out: they use few blocks on purpose.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuviz.analysis.activity import rank_device_pairs
from gpuviz.analysis.advisor.context import AdviceContext, ranks_phrase
from gpuviz.analysis.advisor.findings import Finding, fmt_ms, fmt_pct
from gpuviz.analysis.kernels import known_occupancy
from gpuviz.analysis.names import is_gemm_like
from gpuviz.trace.model import Kind

KIND = "low_occupancy"
HEAVY_SHARE = 0.05
MIN_MEAN_NS = 20_000
SAMPLE = 16
LOW_OCCUPANCY_PCT = 10.0
OCCUPANCY_SAVING = 0.25

FIX_GRID = (
    "Give the kernel at least one block per SM ({sms} here): split the work over more "
    "blocks/programs (for a Triton kernel, a grid of `triton.cdiv(n, BLOCK)` programs instead "
    "of a loop inside few of them), or batch more independent work into one launch."
)
FIX_OCC = (
    "Raise occupancy: fewer registers per thread (`__launch_bounds__`, or Triton's "
    "`num_warps`/`num_stages`), less shared memory per block, or more threads per block."
)


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``low_occupancy`` finding of a trace (empty when the condition does not hold)."""
    a = ctx.activity
    s = ctx.trace.slices
    kern = (a.kind == Kind.KERNEL) & ~ctx.comm
    per: dict[int, float] = {}
    info: dict[int, dict[str, Any]] = {}
    for rank, device in rank_device_pairs(a.rank[kern], a.device[kern]):
        sms = ctx.device_properties(rank, device).get("numSms")
        busy = float(ctx.coverages[(rank, device)]["busy"].total_ns)
        on = np.flatnonzero(kern & (a.rank == rank) & (a.device == device))
        names = s.name[a.rows[on]]
        dur = a.end_ns[on] - a.start_ns[on]
        uniq, inv = np.unique(names, return_inverse=True)
        total = np.bincount(inv, weights=dur, minlength=len(uniq))
        count = np.bincount(inv, minlength=len(uniq))
        for k in np.flatnonzero((total >= HEAVY_SHARE * busy) & (total >= MIN_MEAN_NS * count)):
            name = ctx.trace.symbols[int(uniq[k])]
            mine = on[inv == k]
            longest = mine[np.argsort(-dur[inv == k], kind="stable")][:SAMPLE]
            launch = _launch_config(ctx, a.rows[longest])
            saving, why = _saving(name, float(total[k]), launch, sms)
            if saving <= 0 or saving <= per.get(rank, 0.0):
                continue
            per[rank] = saving
            info[rank] = {
                "name": name,
                "device": device,
                "time": float(total[k]),
                "busy": busy,
                "count": int(count[k]),
                "rows": a.rows[longest],
                "why": why,
                "sms": sms,
                **launch,
            }
    if not per:
        return []
    totals = {r: float(ctx.step_total_ns(r)) for r in per}
    rank, _ = ctx.worst_rank(KIND, per, totals)
    i = info[rank]
    shape = f"grid {i['grid']}, block {i['block']}"
    if i["why"] == "grid":
        what = (
            f"runs {i['blocks']} blocks ({shape}) on a GPU of {i['sms']} SMs: "
            f"{i['sms'] - i['blocks']} SMs sit idle while it runs"
        )
        fix, title = FIX_GRID.format(sms=i["sms"]), "A heavy kernel runs fewer blocks than SMs"
    else:
        what = f"reaches an estimated occupancy of {i['occupancy']:.0f}% ({shape})"
        fix, title = FIX_OCC, "A heavy kernel runs at low occupancy"
    detail = (
        f"{i['name']} ({i['count']} launches, {fmt_ms(i['time'])}, {fmt_pct(i['time'] / i['busy'])} "
        f"of GPU {i['device']}'s busy time{ranks_phrase(ctx, rank, ctx.affected(KIND, sorted(per)))}) {what}."
    )
    f = ctx.finding(
        KIND,
        per[rank],
        totals[rank],
        title=title,
        detail=detail,
        fix=fix,
        saving_how=(
            "The kernel's time times the share of SMs it leaves idle (1 - blocks/SMs): the best "
            "that spreading its work over every SM could do."
            if i["why"] == "grid"
            else "A quarter of the kernel's time (a rough figure: occupancy rarely scales linearly)."
        ),
        evidence=ctx.slice_evidence(i["rows"]),
    )
    return [f] if f is not None else []


def _launch_config(ctx: AdviceContext, rows: np.ndarray) -> dict[str, Any]:
    """Median blocks and occupancy over some launches, and the first one's grid and block."""
    blocks, occ, grid, block = [], [], None, None
    for row in rows.tolist():
        args = ctx.trace.args.get(int(ctx.trace.slices.args[row]))
        g, b = args.get("grid"), args.get("block")
        if isinstance(g, list) and isinstance(b, list) and _dims(g) and _dims(b):
            grid, block = grid or list(g), block or list(b)
            blocks.append(int(g[0] * g[1] * g[2]))
        # A 0 with warps resident is no figure: CUPTI computed none for the launch.
        o = known_occupancy(args.get("est. achieved occupancy %"), args.get("warps per SM"))
        if o is not None:
            occ.append(o)
    return {
        "blocks": int(np.median(blocks)) if blocks else None,
        "occupancy": float(np.median(occ)) if occ else None,
        "grid": grid,
        "block": block,
    }


def _dims(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 3 and all(isinstance(x, int) and x > 0 for x in v)


def _saving(name: str, time_ns: float, launch: dict[str, Any], sms: Any) -> tuple[float, str]:
    blocks = launch["blocks"]
    if isinstance(sms, int) and sms > 0 and blocks is not None and blocks < sms:
        return time_ns * (1.0 - blocks / sms), "grid"
    occ = launch["occupancy"]
    if occ is not None and 0 < occ < LOW_OCCUPANCY_PCT and not is_gemm_like(name):
        return time_ns * OCCUPANCY_SAVING, "occupancy"
    return 0.0, ""
