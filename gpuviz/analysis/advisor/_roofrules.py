"""Shared arithmetic of the rules built on the roofline (low_mfu, memory_bound_hot)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.advisor.context import AdviceContext
from gpuviz.analysis.advisor.findings import MAX_EVIDENCE, Evidence, fmt_ms, fmt_pct

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


@dataclass
class Gains:
    """Per rank: what bringing the picked op calls up to a target share of their roof saves.

    Each step's saving is capped at the step's window; shapes are indices of
    ``ctx.hardware.shapes``.
    """

    saving_ns: dict[int, float] = field(default_factory=dict)
    time_ns: dict[int, float] = field(default_factory=dict)
    shape_gain: dict[int, dict[int, float]] = field(default_factory=dict)
    shape_time: dict[int, dict[int, float]] = field(default_factory=dict)
    steps: dict[int, int] = field(default_factory=dict)


def gains(ctx: AdviceContext, picked: Mask, target_share: float) -> Gains:
    """Sum over each rank's steps the time ``picked`` calls would save at ``target_share``.

    Parameters
    ----------
    ctx : AdviceContext
    picked : bool array
        One entry per call of ``ctx.hardware.calls``.
    target_share : float
        The share of its roof a tuned op of that kind reaches; a call at or above it gains
        nothing, one at share ``s`` below it gains ``time · (1 − s / target_share)``.
    """
    calls = ctx.hardware.calls
    st = ctx.steps
    share = np.nan_to_num(calls.roof_share, nan=np.inf)
    # 0 ns × (1 − inf) is NaN for the calls np.where leaves out: no warning on stderr for them.
    with np.errstate(invalid="ignore"):
        gain = np.where(
            picked & (share < target_share), calls.device_ns * (1.0 - share / target_share), 0.0
        )
    gain = np.maximum(gain, 0.0)
    out = Gains()
    for i in range(len(st)):
        idx = calls.in_step(st, i)
        idx = idx[picked[idx]]
        if len(idx) == 0:
            continue
        rank = int(st.rank[i])
        out.steps[rank] = out.steps.get(rank, 0) + 1
        step_gain = min(float(gain[idx].sum()), float(st.duration_ns[i]))
        out.saving_ns[rank] = out.saving_ns.get(rank, 0.0) + step_gain
        out.time_ns[rank] = out.time_ns.get(rank, 0.0) + float(calls.device_ns[idx].sum())
        sg = out.shape_gain.setdefault(rank, {})
        stime = out.shape_time.setdefault(rank, {})
        for j, g, t in zip(
            calls.shape[idx].tolist(), gain[idx].tolist(), calls.device_ns[idx].tolist()
        ):
            sg[j] = sg.get(j, 0.0) + g
            stime[j] = stime.get(j, 0.0) + t
    return out


def top_shapes(g: Gains, rank: int, n: int = 3) -> list[int]:
    """The shapes of ``rank`` that gain most, largest first."""
    by = g.shape_gain.get(rank, {})
    return sorted((j for j in by if by[j] > 0), key=lambda j: -by[j])[:n]


def dims_text(dims: object, width: int = 60) -> str:
    """An op's tensor shapes, scalars and missing inputs left out: ``[8192, 8192] [8192, 64]``."""
    parts = [str(d) for d in (dims if isinstance(dims, list) else []) if d]
    text = " ".join(parts) or "[]"
    return text if len(text) <= width else text[: width - 1] + "…"


def shape_phrase(ctx: AdviceContext, g: Gains, rank: int, j: int, flops: bool) -> str:
    """``aten::mm [[64, 64], [64, 64]] bf16: 12.0 ms, 8% of its roof (2.1 TFLOP/s)``."""
    s = ctx.hardware.shapes[j]
    speed = (
        f"{s.tflops:.1f} TFLOP/s"
        if flops and s.tflops is not None
        else (f"{s.tb_s:.2f} TB/s" if s.tb_s is not None else "?")
    )
    share = "?" if s.roof_share is None else fmt_pct(s.roof_share)
    return (
        f"{s.name} {dims_text(s.input_dims)} {s.precision}: {fmt_ms(g.shape_time[rank][j])}, {share} of "
        f"its roof ({speed}), could gain {fmt_ms(g.shape_gain[rank][j])}"
    )


def evidence(ctx: AdviceContext, rank: int, shapes: list[int]) -> list[Evidence]:
    """Per shape (most gain first) its longest kernels on ``rank``, named by op and kernel."""
    s, t = ctx.trace.slices, ctx.trace.tracks
    out: list[Evidence] = []
    per = max(1, MAX_EVIDENCE // max(len(shapes), 1))
    for j in shapes:
        shape = ctx.hardware.shapes[j]
        rows = shape.kernels[t.rank[s.track[shape.kernels]] == rank]
        rows = rows[np.argsort(-s.dur_ns[rows], kind="stable")][:per]
        label = f"{shape.name} {dims_text(shape.input_dims)}"
        # Each kernel as the other rules give a slice, the op and its shapes named first.
        out += [replace(e, names=(label, *(e.names or ()))) for e in ctx.slice_evidence(rows)]
    return out[:MAX_EVIDENCE]
