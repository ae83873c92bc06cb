"""A serving trace's steps grouped by phase: time per step, tokens per second, time to first
token, time per output token, prefill MFU and decode MBU (docs/serving.md).

- **TTFT** (time to first token) is the mean time of a prefill step: the forward over the
  prompt that yields the first token. Queueing before the request reached the engine is not
  in a GPU trace.
- **TPOT** (time per output token) is the mean time of a decode step plus the scheduler's gap
  before it (``gap_before_ns``): each decode step gives every running request one token.
- **tokens/s** of a phase is the query tokens of its steps over their time: prompt tokens for
  prefill, new tokens for decode.
- **MFU** of a phase is its steps' time at peak over their time (the step FLOPs of
  :mod:`gpuviz.analysis.step_flops`, each op against its own precision's peak); **MBU** its
  bytes read over their time × peak bandwidth (:mod:`gpuviz.analysis.mbu`). Either is None
  when any step of the phase has it unknown, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuviz.analysis.mbu import mbu, step_bytes
from gpuviz.analysis.serving_annotations import PHASES
from gpuviz.analysis.serving_markers import SOURCES as SERVING_SOURCES
from gpuviz.analysis.serving_steps import ServingSteps, is_serving, serving_steps
from gpuviz.analysis.steps import Steps
from gpuviz.trace.model import Trace

UNKNOWN = "unknown"
"""The phase key of steps whose phase the trace does not tell."""


@dataclass
class PhaseFigures:
    """The steps of one phase together.

    Attributes
    ----------
    phase : str
        ``prefill``, ``decode``, ``mixed`` or ``unknown``.
    steps : int
    total_ns, mean_ns, median_ns : float
        Their time (windows).
    tokens : int or None
        Query tokens over the steps; None when a step's count is unknown.
    tokens_per_s : float or None
    requests_mean : float or None
        Requests a step, on mean.
    graph_steps : int
        Steps that replayed a CUDA/HIP graph.
    gap_mean_ns : float or None
        The scheduler's gap before a step, on mean (the steps after another one).
    mfu, mbu : float or None
    mfu_note, mbu_note : str
        Why the figure is None ("" where known).
    """

    phase: str
    steps: int
    total_ns: float
    mean_ns: float
    median_ns: float
    tokens: int | None
    tokens_per_s: float | None
    requests_mean: float | None
    graph_steps: int
    gap_mean_ns: float | None
    mfu: float | None = None
    mbu: float | None = None
    mfu_note: str = ""
    mbu_note: str = ""
    mfu_is_lower_bound: bool = False

    def to_json(self) -> dict[str, Any]:
        """The ``serving.phases`` entry of ``gpuviz summary --json``."""
        return {
            "phase": self.phase,
            "steps": self.steps,
            "total_us": _us(self.total_ns),
            "mean_step_us": _us(self.mean_ns),
            "median_step_us": _us(self.median_ns),
            "tokens": self.tokens,
            "tokens_per_s": None if self.tokens_per_s is None else round(self.tokens_per_s, 3),
            "requests_mean": self.requests_mean,
            "graph_steps": self.graph_steps,
            "gap_mean_us": None if self.gap_mean_ns is None else _us(self.gap_mean_ns),
            "mfu": None if self.mfu is None else round(self.mfu, 4),
            "mfu_is_lower_bound": self.mfu_is_lower_bound,
            "mfu_note": self.mfu_note or None,
            "mbu": None if self.mbu is None else round(self.mbu, 4),
            "mbu_is_lower_bound": self.mbu is not None,
            "mbu_note": self.mbu_note or None,
        }


@dataclass
class ServingReport:
    """A serving trace's steps and phases.

    Attributes
    ----------
    steps : Steps
    serving : ServingSteps
    phases : list of PhaseFigures
        In the order prefill, mixed, decode, unknown (those present).
    step_mfu, step_mbu : list of float or None
        Per step row.
    step_bytes : list of int or None
        Bytes each step must read (:mod:`gpuviz.analysis.mbu`).
    attention : AttentionFlops
        The attention FLOPs the annotations give (:mod:`gpuviz.analysis.serving_attention`).
    step_mfu_attention : list of float or None
        The step's MFU with those FLOPs added (a lower bound where the step's MFU is).
    ttft_ns, tpot_ns : float or None
    notes : list of str
        Why a headline figure is unknown.
    """

    steps: Steps
    serving: ServingSteps
    phases: list[PhaseFigures]
    step_mfu: list[float | None]
    step_mbu: list[float | None]
    step_bytes: list[int | None]
    ttft_ns: float | None
    tpot_ns: float | None
    notes: list[str] = field(default_factory=list)
    attention: Any = None
    step_mfu_attention: list[float | None] = field(default_factory=list)

    def phase(self, name: str) -> PhaseFigures | None:
        """The figures of one phase, or None."""
        return next((p for p in self.phases if p.phase == name), None)

    def to_json(self) -> dict[str, Any]:
        """The ``serving`` object of ``gpuviz summary --json`` (docs/serving.md)."""
        st, sv = self.steps, self.serving
        rows = []
        for i in range(len(st)):
            if st.source[i] not in SERVING_SOURCES:
                continue
            rows.append(
                {
                    "rank": None if st.rank[i] < 0 else int(st.rank[i]),
                    "step": int(st.number[i]),
                    "source": st.source[i],
                    "phase": sv.phase[i],
                    "requests": sv.requests[i],
                    "prefill_requests": sv.prefill_requests[i],
                    "decode_requests": sv.decode_requests[i],
                    "tokens": sv.tokens[i],
                    "prefill_tokens": sv.prefill_tokens[i],
                    "decode_tokens": sv.decode_tokens[i],
                    "kv_tokens": sv.kv_tokens[i],
                    "start_us": _us(st.start_ns[i]),
                    "duration_us": _us(st.duration_ns[i]),
                    "busy_us": _us(sv.busy_ns[i]),
                    "gap_before_us": None if sv.gap_before_ns[i] < 0 else _us(sv.gap_before_ns[i]),
                    "graph": sv.graph[i],
                    "mfu": _round(self.step_mfu[i]),
                    "bytes_read": self.step_bytes[i],
                    "mbu": _round(self.step_mbu[i]),
                    "attention_flops": self.attention.flops[i],
                    "attention_calls": self.attention.calls[i],
                    "attention_note": self.attention.why[i] or None,
                    "mfu_with_attention": _round(self.step_mfu_attention[i]),
                    "unknown": sv.why[i] or None,
                }
            )
        return {
            "sources": sorted({r["source"] for r in rows}),
            "ttft_us": None if self.ttft_ns is None else _us(self.ttft_ns),
            "tpot_us": None if self.tpot_ns is None else _us(self.tpot_ns),
            "phases": [p.to_json() for p in self.phases],
            "steps": rows,
            "notes": list(self.notes),
        }


def _us(ns: float) -> float:
    return round(float(ns) / 1000.0, 3)


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def serving_report(trace: Trace, steps: Steps, hw: Any = None) -> ServingReport | None:
    """The phases of a serving trace; None when ``steps`` has no serving step.

    Parameters
    ----------
    trace : Trace
    steps : Steps
        ``find_steps(trace)``.
    hw : Hardware, optional
        ``hardware(trace, steps=steps)``: the steps' MFU and the device's bandwidth. Without
        it MFU and MBU are unknown.
    """
    if not is_serving(steps):
        return None
    sv = serving_steps(trace, steps)
    n = len(steps)
    figs = list(getattr(hw, "steps", []) or [])
    peaks = getattr(getattr(hw, "peaks", None), "peaks", None)
    bandwidth = getattr(peaks, "bandwidth_tb_s", None)
    no_peak = getattr(getattr(hw, "peaks", None), "reason", "") or "no device peaks"
    step_mfu: list[float | None] = []
    mfu_note: list[str] = []
    lower: list[bool] = []
    for i in range(n):
        f = figs[i] if i < len(figs) else None
        step_mfu.append(getattr(f, "mfu", None))
        lower.append(bool(getattr(f, "lower_bound", False)))
        mfu_note.append(
            "" if step_mfu[-1] is not None else (getattr(f, "mfu_note", None) or no_peak)
        )
    nb = step_bytes(trace, steps)
    step_mbu: list[float | None] = []
    mbu_note: list[str] = []
    for i in range(n):
        if sv.graph[i]:  # the replay's ops were recorded at capture: the count misses them
            nb.nbytes[i] = None
            nb.why[i] = "the step replayed a graph, whose ops (and shapes) are in its capture"
        share, why = mbu(nb.nbytes[i], int(steps.duration_ns[i]), bandwidth)
        step_mbu.append(share)
        mbu_note.append(nb.why[i] or why)
    serving_rows = [i for i in range(n) if steps.source[i] in SERVING_SOURCES]
    phases = []
    for name in (*PHASES, UNKNOWN):
        rows = [i for i in serving_rows if (sv.phase[i] or UNKNOWN) == name]
        if rows:
            phases.append(
                _phase(name, rows, steps, sv, step_mfu, mfu_note, nb.nbytes, mbu_note, bandwidth)
            )
    order = {"prefill": 0, "mixed": 1, "decode": 2, UNKNOWN: 3}
    phases.sort(key=lambda p: order[p.phase])
    for p in phases:
        p.mfu_is_lower_bound = p.mfu is not None and any(
            lower[i] for i in serving_rows if (sv.phase[i] or UNKNOWN) == p.phase
        )
    notes = []
    pre = next((p for p in phases if p.phase == "prefill"), None)
    dec = next((p for p in phases if p.phase == "decode"), None)
    ttft = pre.mean_ns if pre is not None else None
    if pre is None:
        notes.append("TTFT unknown (no prefill step in the trace)")
    tpot = None
    if dec is not None:
        rows = [i for i in serving_rows if sv.phase[i] == "decode"]
        tpot = float(
            np.mean([steps.duration_ns[i] + max(int(sv.gap_before_ns[i]), 0) for i in rows])
        )
    else:
        notes.append("TPOT unknown (no decode step in the trace)")
    from gpuviz.analysis.serving_attention import attention_flops

    att = attention_flops(trace, steps, sv.annotation)
    with_att: list[float | None] = []
    for i in range(n):
        f = figs[i] if i < len(figs) else None
        peak = getattr(f, "peak_tflops", None)
        a, m, d = att.flops[i], step_mfu[i], int(steps.duration_ns[i])
        ok = a is not None and m is not None and peak and d > 0
        with_att.append(m + a / (d * 1e-9 * peak * 1e12) if ok else None)  # type: ignore[operator]
    return ServingReport(
        steps, sv, phases, step_mfu, step_mbu, nb.nbytes, ttft, tpot, notes, att, with_att
    )


def _phase(
    name: str,
    rows: list[int],
    steps: Steps,
    sv: ServingSteps,
    step_mfu: list[float | None],
    mfu_note: list[str],
    nbytes: list[int | None],
    mbu_note: list[str],
    bandwidth: float | None,
) -> PhaseFigures:
    dur = np.array([int(steps.duration_ns[i]) for i in rows], dtype=np.float64)
    total = float(dur.sum())
    toks = [sv.tokens[i] for i in rows]
    tokens = None if any(t is None for t in toks) else int(sum(t for t in toks if t is not None))
    reqs = [sv.requests[i] for i in rows]
    gaps = [int(sv.gap_before_ns[i]) for i in rows if sv.gap_before_ns[i] >= 0]
    mfus = [step_mfu[i] for i in rows]
    fig = PhaseFigures(
        phase=name,
        steps=len(rows),
        total_ns=total,
        mean_ns=float(dur.mean()),
        median_ns=float(np.median(dur)),
        tokens=tokens,
        tokens_per_s=None if tokens is None or total <= 0 else tokens / (total * 1e-9),
        requests_mean=None
        if any(r is None for r in reqs)
        else sum(r or 0 for r in reqs) / len(reqs),
        graph_steps=sum(sv.graph[i] for i in rows),
        gap_mean_ns=float(np.mean(gaps)) if gaps else None,
    )
    if all(m is not None for m in mfus) and total > 0:
        fig.mfu = float(sum(m * d for m, d in zip(mfus, dur, strict=True) if m is not None) / total)
    else:
        fig.mfu_note = next(mfu_note[i] for i in rows if step_mfu[i] is None)
    b = [nbytes[i] for i in rows]
    if any(x is None for x in b):
        fig.mbu_note = next(mbu_note[i] for i in rows if nbytes[i] is None)
    else:
        fig.mbu, fig.mbu_note = mbu(sum(x for x in b if x is not None), int(total), bandwidth)
    return fig
