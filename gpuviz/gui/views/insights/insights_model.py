"""What the Insights view draws, from an :class:`~gpuviz.analysis.advisor.Advice`. Qt-free.

:func:`gpu_choices` lists the GPUs the step chart can show; :func:`step_bars` gives, for one
of them (or the mean over all GPUs), each step's exclusive parts in ms, ready to stack.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.activity import rank_value
from gpuviz.analysis.advisor.findings import Evidence, fmt_ms, fmt_pct
from gpuviz.analysis.steps import PARTS

F64 = npt.NDArray[np.float64]


@dataclass
class StepBars:
    """One bar per step: GPU parts and the CPU split, in ms.

    Attributes
    ----------
    labels : list of str
        ``ProfilerStep#3``, or ``r1 ProfilerStep#3`` for several ranks.
    ticks : list of str
        Short forms for an axis: ``3``, or ``r1:3`` for several ranks.
    gpu : dict of str to float array
        :data:`~gpuviz.analysis.steps.PARTS` -> ms per step (stack them in that order).
    cpu_ops, cpu_other : float array
        ms per step inside PyTorch ops, and outside any.
    """

    labels: list[str]
    ticks: list[str] = field(default_factory=list)
    gpu: dict[str, F64] = field(default_factory=dict)
    cpu_ops: F64 = field(default_factory=lambda: np.empty(0))
    cpu_other: F64 = field(default_factory=lambda: np.empty(0))

    def __len__(self) -> int:
        return len(self.labels)


def gpu_choices(advice: Any) -> list[tuple[str, tuple[int, int] | None]]:
    """``("mean of all GPUs", None)`` (when there are several), then each (rank, device)."""
    d = advice.breakdown.devices
    keys = sorted(set(zip(d.rank.tolist(), d.device.tolist())))
    out: list[tuple[str, tuple[int, int] | None]] = []
    if len(keys) > 1:
        out.append(("mean of all GPUs", None))
    for rank, device in keys:
        r = rank_value(int(rank))
        out.append((f"GPU {device}" if r is None else f"rank {r}, GPU {device}", (rank, device)))
    return out


def step_bars(advice: Any, gpu: tuple[int, int] | None = None) -> StepBars:
    """Each step's parts on one GPU (``(rank, device)``), or averaged over the step's GPUs."""
    b = advice.breakdown
    st, d = b.steps, b.devices
    n = len(st)
    # Python ints from tolist(), not numpy scalars one at a time: a 64-rank job has thousands
    # of steps, and this runs on the GUI thread as the Insights view opens.
    ranks, numbers = st.rank.tolist(), st.number.tolist()
    multi = len(set(ranks)) > 1
    who = {r: f"r{rank_value(r)}" for r in set(ranks)} if multi else {}
    names = {"ProfilerStep": "ProfilerStep#", "gpuviz": "gpuviz step "}
    labels = [
        (f"{who[r]} " if multi else "") + names.get(src, "step ") + str(num)
        for r, num, src in zip(ranks, numbers, st.source, strict=True)
    ]
    ticks = [
        (f"{who[r]}:" if multi else "") + str(num) for r, num in zip(ranks, numbers, strict=True)
    ]
    pick = np.ones(len(d), dtype=bool)
    if gpu is not None:
        pick = (d.rank == gpu[0]) & (d.device == gpu[1])
    count = np.bincount(d.step[pick], minlength=n).astype(np.float64)
    out = StepBars(labels, ticks)
    for p in PARTS:
        total = np.bincount(d.step[pick], weights=getattr(d, f"{p}_ns")[pick], minlength=n)
        out.gpu[p] = np.divide(total, count, out=np.zeros(n), where=count > 0) / 1e6
    out.cpu_ops = b.cpu_op_ns.astype(np.float64) / 1e6
    out.cpu_other = b.cpu_other_ns.astype(np.float64) / 1e6
    if gpu is not None:  # a GPU's chart shows its own rank's steps only
        keep = np.flatnonzero(st.rank == gpu[0])
        out.labels = [labels[i] for i in keep]
        out.ticks = [ticks[i] for i in keep]
        out.gpu = {k: v[keep] for k, v in out.gpu.items()}
        out.cpu_ops, out.cpu_other = out.cpu_ops[keep], out.cpu_other[keep]
    return out


def evidence_text(e: Evidence) -> str:
    """One line for an evidence: where, when, what."""
    text = f"{e.where} · {e.start_ns / 1e6:.3f}–{e.end_ns / 1e6:.3f} ms"
    if e.count and e.count > 1:
        text += f" · {e.count}×"
    if e.names:
        name = e.names[0]
        text += " · " + (name if len(name) <= 90 else name[:89] + "…")
    return text


@dataclass
class StepMfu:
    """Each step's MFU, in the order of :func:`step_bars`' bars.

    Attributes
    ----------
    percent : float array
        MFU in percent; NaN where unknown (no FLOPs counted, or the device's peak unknown).
    peak : str
        The peaks it was measured against, in words (or why there are none).
    lower_bound : bool
        Some step's MFU counts only the ops whose FLOPs are known (the rest of its GPU time
        is in ops without a formula): a floor, said with ">=".
    coverage : float or None
        The smallest share of a step's GPU time whose FLOPs are known.
    note : str or None
        Why no step has an MFU (the first step's reason), where none has.
    """

    percent: F64
    peak: str
    lower_bound: bool = False
    coverage: float | None = None
    note: str | None = None

    def text(self) -> str:
        """The status line's words: ``MFU: mean >= 4.1% of the peak (...)`` or ``unknown (why)``,
        as ``gpuviz summary`` says it."""
        mean = self.mean()
        if mean is None:
            return f"MFU: unknown ({self.note or 'no step has one'})."
        if not self.lower_bound:
            return f"MFU: mean {mean:.1f}% of the peak ({self.peak})."
        known = f"FLOPs known for {100 * self.coverage:.0f}% of GPU time; " if self.coverage else ""
        return f"MFU: mean >= {mean:.1f}% of the peak ({known}{self.peak})."

    def mean(self) -> float | None:
        """The mean over the steps that have one, or None."""
        known = self.percent[np.isfinite(self.percent)]
        return float(known.mean()) if len(known) else None


def hardware_of(advice: Any) -> Any:
    """The roofline figures the advisor computed (``advice.context.hardware``), or None."""
    ctx = getattr(advice, "context", None)
    return getattr(ctx, "hardware", None) if ctx is not None else None


def step_mfu(
    advice: Any, gpu: tuple[int, int] | None = None, hardware: Any = None
) -> StepMfu | None:
    """The MFU of each step of :func:`step_bars` (one GPU's rank, or all); None when the trace
    has no counted FLOPs (recorded without shapes). ``hardware``: figures of the same steps
    under other peaks (the Peaks dialog's), instead of the advisor's."""
    hw = hardware if hardware is not None else hardware_of(advice)
    if hw is None or not any(s.flops > 0 for s in hw.steps):
        return None
    steps = list(hw.steps)
    if gpu is not None:
        steps = [steps[i] for i in np.flatnonzero(advice.breakdown.steps.rank == gpu[0])]
    values = np.array([np.nan if s.mfu is None else 100.0 * s.mfu for s in steps])
    covered = [s.coverage for s in steps if s.mfu is not None and s.coverage is not None]
    lower = any(s.mfu is not None and s.lower_bound for s in steps)
    note = next((s.mfu_note for s in steps if s.mfu_note), None) if not covered else None
    p = hw.peaks.peaks
    if p is None:
        peak = f"no peaks: {hw.peaks.reason}"
    else:
        used = sorted({s.precision for s in hw.steps if s.precision and p.tflops(s.precision)})
        peak = f"{p.label}: " + ", ".join(f"{k} {p.tflops(k):g} TFLOP/s" for k in used)
    return StepMfu(values, peak, lower, min(covered) if covered else None, note)


def serving_status(advice: Any) -> str | None:
    """A serving trace's steps by phase in one line each (docs/serving.md), else None.

    ``prefill: 1 step, 987.367 ms a step, 15556 tokens/s, MFU >= 16.5%`` per phase, then
    TTFT and TPOT; an unknown figure says so.
    """
    ctx = getattr(advice, "context", None)
    report = getattr(ctx, "serving", None) if ctx is not None else None
    if report is None:
        return None
    lines = []
    for p in report.phases:
        tps = "tokens/s unknown" if p.tokens_per_s is None else f"{p.tokens_per_s:.0f} tokens/s"
        mfu = (
            "MFU unknown"
            if p.mfu is None
            else (f"MFU {'>= ' if p.mfu_is_lower_bound else ''}{fmt_pct(p.mfu)}")
        )
        mbu = "MBU unknown" if p.mbu is None else f"MBU >= {fmt_pct(p.mbu)}"
        n = f"{p.steps} step{'s' if p.steps != 1 else ''}"
        lines.append(f"{p.phase}: {n}, {fmt_ms(p.mean_ns)} a step, {tps}, {mfu}, {mbu}")
    ttft = "TTFT unknown" if report.ttft_ns is None else f"TTFT {fmt_ms(report.ttft_ns)}"
    tpot = "TPOT unknown" if report.tpot_ns is None else f"TPOT {fmt_ms(report.tpot_ns)}"
    return "\n".join([*lines, f"{ttft}, {tpot}"])
