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
class StepRecord:
    """One serving step's figures: a ``serving.steps`` entry of ``gpuviz summary --json``
    (times in ns), with what its phase's figures need besides (why MFU and MBU are unknown).

    A rank folder summarized a rank at a time keeps these of each rank
    (:func:`gpuviz.analysis.rank_parts.rank_part`), shifts their starts to the folder's zero
    and gives them their rank, then makes the phases again (:func:`merge_records`).
    """

    rank: int | None
    step: int
    source: str
    phase: str | None
    requests: int | None
    prefill_requests: int | None
    decode_requests: int | None
    tokens: int | None
    prefill_tokens: int | None
    decode_tokens: int | None
    kv_tokens: int | None
    start_ns: int
    duration_ns: int
    busy_ns: int
    gap_before_ns: int
    graph: bool
    mfu: float | None
    mfu_note: str
    mfu_lower_bound: bool
    bytes_read: int | None
    mbu: float | None
    mbu_note: str
    attention_flops: float | None
    attention_calls: int
    attention_note: str
    mfu_with_attention: float | None
    unknown: str
    flops: float | None = None
    """The FLOPs counted from shapes (None: none known); not in the JSON, which has the
    summary's ``mfu.steps``. The Roofline view's phase points read them."""

    def to_json(self) -> dict[str, Any]:
        """The ``serving.steps`` entry."""
        return {
            "rank": self.rank,
            "step": self.step,
            "source": self.source,
            "phase": self.phase,
            "requests": self.requests,
            "prefill_requests": self.prefill_requests,
            "decode_requests": self.decode_requests,
            "tokens": self.tokens,
            "prefill_tokens": self.prefill_tokens,
            "decode_tokens": self.decode_tokens,
            "kv_tokens": self.kv_tokens,
            "start_us": _us(self.start_ns),
            "duration_us": _us(self.duration_ns),
            "busy_us": _us(self.busy_ns),
            "gap_before_us": None if self.gap_before_ns < 0 else _us(self.gap_before_ns),
            "graph": self.graph,
            "mfu": _round(self.mfu),
            "bytes_read": self.bytes_read,
            "mbu": _round(self.mbu),
            "attention_flops": self.attention_flops,
            "attention_calls": self.attention_calls,
            "attention_note": self.attention_note or None,
            "mfu_with_attention": _round(self.mfu_with_attention),
            "unknown": self.unknown or None,
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
    records: list[StepRecord] = field(default_factory=list)
    bandwidth_tb_s: float | None = None

    def phase(self, name: str) -> PhaseFigures | None:
        """The figures of one phase, or None."""
        return next((p for p in self.phases if p.phase == name), None)

    def to_json(self) -> dict[str, Any]:
        """The ``serving`` object of ``gpuviz summary --json`` (docs/serving.md)."""
        return serving_json(self.records, self.phases, self.ttft_ns, self.tpot_ns, self.notes)


def serving_json(
    records: list[StepRecord],
    phases: list[PhaseFigures],
    ttft_ns: float | None,
    tpot_ns: float | None,
    notes: list[str],
) -> dict[str, Any]:
    """The ``serving`` object of ``gpuviz summary --json`` (docs/serving.md)."""
    return {
        "sources": sorted({r.source for r in records}),
        "ttft_us": None if ttft_ns is None else _us(ttft_ns),
        "tpot_us": None if tpot_ns is None else _us(tpot_ns),
        "phases": [p.to_json() for p in phases],
        "steps": [r.to_json() for r in records],
        "notes": list(notes),
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
    replayed = _replay_bytes(trace, steps) if any(sv.graph) else None
    if replayed is not None:  # the graphs' FLOPs, from their captures, join the steps'
        figs = [_with_replay(f, replayed, i, steps, peaks) for i, f in enumerate(figs)]
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
            got = None if replayed is None else replayed.nbytes[i]
            if got is None:
                nb.nbytes[i] = None
                nb.why[i] = (replayed.why[i] if replayed is not None else "") or GRAPH_UNKNOWN
            else:  # the capture's ops, and the step's own around the replay
                nb.nbytes[i] = (nb.nbytes[i] or 0) + got
                nb.why[i] = ""
        share, why = mbu(nb.nbytes[i], int(steps.duration_ns[i]), bandwidth)
        step_mbu.append(share)
        mbu_note.append(nb.why[i] or why)
    from gpuviz.analysis.serving_attention import attention_flops

    att = attention_flops(trace, steps, sv.annotation)
    with_att: list[float | None] = []
    for i in range(n):
        f = figs[i] if i < len(figs) else None
        peak = getattr(f, "peak_tflops", None)
        a, m, d = att.flops[i], step_mfu[i], int(steps.duration_ns[i])
        ok = a is not None and m is not None and peak and d > 0
        with_att.append(m + a / (d * 1e-9 * peak * 1e12) if ok else None)  # type: ignore[operator]
    records = [
        StepRecord(
            rank=None if steps.rank[i] < 0 else int(steps.rank[i]),
            step=int(steps.number[i]),
            source=steps.source[i],
            phase=sv.phase[i],
            requests=sv.requests[i],
            prefill_requests=sv.prefill_requests[i],
            decode_requests=sv.decode_requests[i],
            tokens=sv.tokens[i],
            prefill_tokens=sv.prefill_tokens[i],
            decode_tokens=sv.decode_tokens[i],
            kv_tokens=sv.kv_tokens[i],
            start_ns=int(steps.start_ns[i]),
            duration_ns=int(steps.duration_ns[i]),
            busy_ns=int(sv.busy_ns[i]),
            gap_before_ns=int(sv.gap_before_ns[i]),
            graph=sv.graph[i],
            mfu=step_mfu[i],
            mfu_note=mfu_note[i],
            mfu_lower_bound=lower[i],
            bytes_read=nb.nbytes[i],
            mbu=step_mbu[i],
            mbu_note=mbu_note[i],
            attention_flops=att.flops[i],
            attention_calls=att.calls[i],
            attention_note=att.why[i],
            mfu_with_attention=with_att[i],
            unknown=sv.why[i],
            flops=_flops(figs[i] if i < len(figs) else None),
        )
        for i in range(n)
        if steps.source[i] in SERVING_SOURCES
    ]
    phases, ttft, tpot, notes = phases_of(records, bandwidth)
    return ServingReport(
        steps,
        sv,
        phases,
        step_mfu,
        step_mbu,
        nb.nbytes,
        ttft,
        tpot,
        notes,
        att,
        with_att,
        records,
        bandwidth,
    )


def phases_of(
    records: list[StepRecord], bandwidth_tb_s: float | None
) -> tuple[list[PhaseFigures], float | None, float | None, list[str]]:
    """The phases of serving steps (in the order prefill, mixed, decode, unknown), TTFT,
    TPOT and why either is unknown.

    Parameters
    ----------
    records : list of StepRecord
        The steps, of one rank or of several.
    bandwidth_tb_s : float or None
        The device's peak bandwidth, for the phases' MBU.
    """
    phases = []
    for name in (*PHASES, UNKNOWN):
        rows = [r for r in records if (r.phase or UNKNOWN) == name]
        if rows:
            phases.append(_phase(name, rows, bandwidth_tb_s))
    order = {"prefill": 0, "mixed": 1, "decode": 2, UNKNOWN: 3}
    phases.sort(key=lambda p: order[p.phase])
    notes = []
    pre = next((p for p in phases if p.phase == "prefill"), None)
    dec = [r for r in records if r.phase == "decode"]
    ttft = pre.mean_ns if pre is not None else None
    if pre is None:
        notes.append("TTFT unknown (no prefill step in the trace)")
    tpot = None
    if dec:
        tpot = float(np.mean([r.duration_ns + max(r.gap_before_ns, 0) for r in dec]))
    else:
        notes.append("TPOT unknown (no decode step in the trace)")
    return phases, ttft, tpot, notes


def merge_records(
    parts: list[tuple[list[StepRecord], int | None, int]],
) -> list[StepRecord]:
    """The steps of a rank folder from its ranks' own, in rank order.

    Parameters
    ----------
    parts : list of (records, rank, shift_ns)
        Each rank's steps (from its file read alone), its rank in the folder, and how far the
        folder's zero lies before the file's own (the folder's zero is the earliest event of
        any rank, a file's its own earliest).
    """
    import dataclasses

    out: list[StepRecord] = []
    for records, rank, shift in sorted(parts, key=lambda p: -1 if p[1] is None else p[1]):
        out += [dataclasses.replace(r, rank=rank, start_ns=r.start_ns + shift) for r in records]
    return out


GRAPH_UNKNOWN = (
    "the step replayed a graph, whose ops (and shapes) are in its capture "
    "(--capture-trace, or capture_traces/ beside the trace, gives them)"
)


def _replay_bytes(trace: Trace, steps: Steps) -> Any:
    """:func:`gpuviz.analysis.mbu_graphs.replay_bytes`, imported only for a step that replays
    a graph (it needs the trace's attribution)."""
    from gpuviz.analysis.mbu_graphs import replay_bytes

    return replay_bytes(trace, steps)


def _with_replay(fig: Any, replayed: Any, i: int, steps: Steps, peaks: Any) -> Any:
    """Step ``i``'s MFU figures with its graph replays' FLOPs (from their captures) added at
    their precisions and their kernels' time counted as known, judged again; as it was where
    the replays add nothing or the step was inconsistent already."""
    import dataclasses

    from gpuviz.analysis.step_flops import judge

    if i >= len(replayed.flops) or not replayed.flops[i] or fig.inconsistent:
        return fig
    by = dict(fig.by_precision)
    for precision, f in replayed.flops[i].items():
        by[precision] = by.get(precision, 0.0) + f
    out = dataclasses.replace(
        fig,
        by_precision=by,
        known_ns=fig.known_ns + replayed.known_ns[i],
        lower_bound=False,
        floor=None,
        mfu_note=None,
    )
    judge(out, int(steps.duration_ns[i]), peaks, 0, "no FLOPs known")
    return out


def _flops(fig: Any) -> float | None:
    """A step's counted FLOPs, None where none are known (0 means nothing was counted)."""
    got = getattr(fig, "flops", None)
    return float(got) if got else None


def _phase(name: str, rows: list[StepRecord], bandwidth: float | None) -> PhaseFigures:
    dur = np.array([r.duration_ns for r in rows], dtype=np.float64)
    total = float(dur.sum())
    toks = [r.tokens for r in rows]
    tokens = None if any(t is None for t in toks) else int(sum(t for t in toks if t is not None))
    reqs = [r.requests for r in rows]
    gaps = [r.gap_before_ns for r in rows if r.gap_before_ns >= 0]
    mfus = [r.mfu for r in rows]
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
        graph_steps=sum(r.graph for r in rows),
        gap_mean_ns=float(np.mean(gaps)) if gaps else None,
    )
    if all(m is not None for m in mfus) and total > 0:
        fig.mfu = float(sum(m * d for m, d in zip(mfus, dur, strict=True) if m is not None) / total)
        fig.mfu_is_lower_bound = any(r.mfu_lower_bound for r in rows)
    else:
        fig.mfu_note = next(
            (r.mfu_note for r in rows if r.mfu is None), "the steps have no duration"
        )
    b = [r.bytes_read for r in rows]
    if any(x is None for x in b):
        fig.mbu_note = next(r.mbu_note for r in rows if r.bytes_read is None)
    else:
        fig.mbu, fig.mbu_note = mbu(sum(x for x in b if x is not None), int(total), bandwidth)
    return fig
