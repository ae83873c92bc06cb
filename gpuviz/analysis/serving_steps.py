"""The steps of a serving loop: which ranges are steps, and each step's phase, requests and tokens.

A serving trace has no ``ProfilerStep``: its loop is the engine's scheduler, and a step is one
forward pass over a batch of requests. :func:`serving_markers` finds, per rank, the first of:

1. the engine's step annotations (``user_annotation``, parsed by
   :mod:`gpuviz.analysis.serving_annotations`): vLLM's ``execute_…_context_…_generation_…``,
   SGLang's ``step[EXTEND …]``/``step[DECODE …]``/``step[MIXED …]``, ATOM's ``prefill[…]``/
   ``decode[…]``. Nested ones (TraceLens's SGLang patch records ``execute_…`` around
   ``step[…]``) are one step;
2. the engine's step function in the Python stack (``with_stack=True``): vLLM's
   ``execute_model``, SGLang's ``forward_batch_generation``, TGI's ``generate_token``; their
   phase comes from the call inside them (SGLang's ``forward_extend``/``forward_decode``) or
   the handler holding them (TGI's ``Prefill``/``Decode``) and is unknown otherwise;
3. Hugging Face ``generate()``: each top-level module call (``nn.Module: …`` range not inside
   another) inside a ``generate`` call; the first is the prefill over the prompt, each later one
   a decode step over one new token a sequence.

:func:`gpuviz.analysis.steps.find_steps` takes these before any training marker, so a training
trace (none of these names) keeps its steps. Serving steps do not tile the time: a step is its
own work (its CPU range and the GPU work it launched), and the time between two steps is the
scheduler's (``gap_before_ns``). :func:`serving_steps` then gives each step its figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.activity import GpuActivity, gpu_activity
from gpuviz.analysis.names import name_mask
from gpuviz.analysis.serving_annotations import DECODE, PREFILL, StepAnnotation, parse_step
from gpuviz.analysis.serving_markers import (
    GRAPH_LAUNCH,
    HF_GENERATE,
    SOURCES,
    by_rank,
    cpu_rows,
    maybe_step,
)
from gpuviz.analysis.steps import Steps
from gpuviz.trace.arrays import unique
from gpuviz.trace.model import Kind, Trace

I64 = npt.NDArray[np.int64]

# The call inside a step function, or the handler holding it, that tells its phase.
_PHASE_CALLS = (
    (re.compile(r".*\): forward_extend$"), PREFILL),
    (re.compile(r".*\): forward_decode$"), DECODE),
    # TGI's gRPC handlers hold its step (server.py's Prefill and Decode call generate_token)
    (re.compile(r".*text_generation_server/server\.py\(\d+\): Prefill$"), PREFILL),
    (re.compile(r".*text_generation_server/server\.py\(\d+\): Decode$"), DECODE),
)
EMBEDDING_OPS = ("aten::embedding", "aten::index_select")


@dataclass
class ServingSteps:
    """The serving figures of each step row of a :class:`~gpuviz.analysis.steps.Steps`.

    Lists hold one entry per step row; None where the step is not a serving step or the trace
    does not record the figure.

    Attributes
    ----------
    phase : list of str or None
        ``prefill``, ``decode`` or ``mixed``.
    requests, prefill_requests, decode_requests : list of int or None
    tokens, prefill_tokens, decode_tokens : list of int or None
        Query tokens computed in the step (prompt tokens of prefill requests, new tokens of
        decode ones).
    kv_tokens : list of int or None
        Σ N_KV over the step's requests, where the annotation gives it.
    annotation : list of StepAnnotation or None
    busy_ns : int64
        Union of the GPU work of the step's rank inside its window.
    gap_before_ns : int64
        From the end of the previous step's window (same rank) to this step's start: the
        scheduler's time, in which no step's work ran; -1 for a rank's first step.
    graph : list of bool
        Whether the step replayed a CUDA/HIP graph (a ``cudaGraphLaunch``/``hipGraphLaunch``
        in its CPU range).
    why : list of str
        Why the phase or tokens are unknown, where they are ("" where known).
    """

    phase: list[str | None] = field(default_factory=list)
    requests: list[int | None] = field(default_factory=list)
    prefill_requests: list[int | None] = field(default_factory=list)
    decode_requests: list[int | None] = field(default_factory=list)
    tokens: list[int | None] = field(default_factory=list)
    prefill_tokens: list[int | None] = field(default_factory=list)
    decode_tokens: list[int | None] = field(default_factory=list)
    kv_tokens: list[int | None] = field(default_factory=list)
    annotation: list[StepAnnotation | None] = field(default_factory=list)
    busy_ns: I64 = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    gap_before_ns: I64 = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    graph: list[bool] = field(default_factory=list)
    why: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.phase)


def is_serving(steps: Steps) -> bool:
    """Whether any step of ``steps`` is a serving step."""
    return any(src in SOURCES for src in steps.source)


def serving_steps(trace: Trace, steps: Steps, activity: GpuActivity | None = None) -> ServingSteps:
    """Each step's phase, requests, tokens, GPU busy time, gap before and graph replay.

    Parameters
    ----------
    trace : Trace
    steps : Steps
        ``find_steps(trace)``.
    activity : GpuActivity, optional
        ``gpu_activity(trace)`` when the caller has it.

    Returns
    -------
    ServingSteps
        One entry per step row; training steps get None figures.
    """
    from gpuviz.analysis.coverage import Coverage

    a = gpu_activity(trace) if activity is None else activity
    out = ServingSteps()
    n = len(steps)
    out.busy_ns = np.zeros(n, dtype=np.int64)
    out.gap_before_ns = np.full(n, -1, dtype=np.int64)
    looked = _Lookups(trace)
    for rank in unique(steps.rank).tolist():
        idx = steps.of_rank(rank)
        on = a.rank == rank
        cov = Coverage(a.start_ns[on], a.end_ns[on])
        out.busy_ns[idx] = cov.covered(steps.start_ns[idx], steps.end_ns[idx])
        out.gap_before_ns[idx[1:]] = steps.start_ns[idx[1:]] - steps.end_ns[idx[:-1]]
    prev_generate: dict[int, int] = {}
    for i in range(n):
        src = steps.source[i]
        rank, c0, c1 = int(steps.rank[i]), int(steps.cpu_start_ns[i]), int(steps.cpu_end_ns[i])
        out.graph.append(looked.any_in(looked.graph_rows, rank, c0, c1))
        ann: StepAnnotation | None = None
        phase: str | None = None
        tokens: int | None = None
        requests: int | None = None
        why = ""
        if src not in SOURCES:
            why = "not a serving step"
        elif src == "generate":
            first = looked.generate_call(rank, c0)
            phase = DECODE if prev_generate.get(rank) == first else PREFILL
            prev_generate[rank] = first
            shape = looked.input_ids_shape(rank, c0, c1)
            if shape is None:
                why = "no input shapes (record_shapes=True) for the token count"
            else:
                requests = shape[0]
                tokens = int(np.prod(shape))
        else:
            ann = looked.best_annotation(rank, c0, c1)
            if ann is not None:
                phase = ann.phase
            else:
                phase = looked.phase_call(rank, c0, c1)
            if phase is None:
                why = (
                    f"{src}'s step is not annotated with its batch (TraceLens's annotation "
                    "patches add it) and no call inside it tells the phase"
                )
        out.annotation.append(ann)
        out.phase.append(phase)
        pf = ann.prefill if ann is not None else None
        dc = ann.decode if ann is not None else None
        if src == "generate":
            pr, dr = (requests, 0) if phase == PREFILL else (0, requests)
            pt, dt = (tokens, 0) if phase == PREFILL else (0, tokens)
        else:
            pr, dr = (pf.requests if pf else None), (dc.requests if dc else None)
            pt, dt = (pf.q_tokens if pf else None), (dc.q_tokens if dc else None)
            requests = ann.requests if ann is not None else None
            tokens = ann.tokens if ann is not None else None
        out.requests.append(requests)
        out.prefill_requests.append(pr)
        out.decode_requests.append(dr)
        out.tokens.append(tokens)
        out.prefill_tokens.append(pt)
        out.decode_tokens.append(dt)
        kv = None
        if pf is not None and dc is not None and pf.kv_tokens is not None:
            kv = None if dc.kv_tokens is None else pf.kv_tokens + dc.kv_tokens
        out.kv_tokens.append(kv)
        if not why and (tokens is None or requests is None):
            why = "the step's annotation does not record its token counts"
        out.why.append(why)
    return out


class _Lookups:
    """Per-rank rows of the names a step's figures are read from, found once per trace."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        sym = trace.symbols
        graph = name_mask(sym, lambda n: GRAPH_LAUNCH.match(n) is not None)
        self.graph_rows = by_rank(trace, cpu_rows(trace, Kind.RUNTIME, graph))
        ann = name_mask(sym, lambda n: maybe_step(n) and parse_step(n) is not None)
        self.ann_rows = by_rank(trace, cpu_rows(trace, Kind.USER_ANNOTATION, ann))
        phase = name_mask(sym, lambda n: any(p.match(n) for p, _ in _PHASE_CALLS))
        self.phase_rows = by_rank(trace, cpu_rows(trace, Kind.PYTHON_FUNCTION, phase))
        gen = name_mask(sym, lambda n: HF_GENERATE.match(n) is not None)
        self.gen_rows = by_rank(trace, cpu_rows(trace, Kind.PYTHON_FUNCTION, gen))
        emb = name_mask(sym, lambda n: n in EMBEDDING_OPS)
        self.emb_rows = by_rank(trace, cpu_rows(trace, Kind.CPU_OP, emb))

    def _within(self, table: dict[int, I64], rank: int, c0: int, c1: int) -> I64:
        rows = table.get(rank)
        if rows is None:
            return np.empty(0, dtype=np.int64)
        st = self.trace.slices.start_ns[rows]
        lo, hi = np.searchsorted(st, [c0, c1], side="left")
        return rows[lo:hi]

    def any_in(self, table: dict[int, I64], rank: int, c0: int, c1: int) -> bool:
        return bool(self._within(table, rank, c0, c1).size)

    def best_annotation(self, rank: int, c0: int, c1: int) -> StepAnnotation | None:
        """The step's annotation that records the most (nested ones say the same step)."""
        names = self.trace.symbols.lookup(
            self.trace.slices.name[self._within(self.ann_rows, rank, c0, c1)]
        )
        found = [a for a in (parse_step(n) for n in names) if a is not None]
        return max(found, key=_known, default=None)

    def phase_call(self, rank: int, c0: int, c1: int) -> str | None:
        """The phase the calls inside the step (or a handler holding it) tell, or None."""
        s = self.trace.slices
        rows = self.phase_rows.get(rank, np.empty(0, dtype=np.int64))
        holding = rows[(s.start_ns[rows] <= c0) & (s.start_ns[rows] + s.dur_ns[rows] >= c1)]
        inside = self._within(self.phase_rows, rank, c0, c1)
        names = self.trace.symbols.lookup(s.name[np.concatenate([inside, holding])])
        phases = {ph for n in names for p, ph in _PHASE_CALLS if p.match(n)}
        return phases.pop() if len(phases) == 1 else None

    def generate_call(self, rank: int, c0: int) -> int:
        """The ``generate`` call that holds a forward starting at ``c0`` (its row; -1)."""
        rows = self.gen_rows.get(rank)
        if rows is None:
            return -1
        s = self.trace.slices
        held = rows[(s.start_ns[rows] <= c0) & (s.start_ns[rows] + s.dur_ns[rows] > c0)]
        return int(held[0]) if held.size else -1

    def input_ids_shape(self, rank: int, c0: int, c1: int) -> list[int] | None:
        """The token ids' shape of the forward's first embedding lookup, or None."""
        rows = self._within(self.emb_rows, rank, c0, c1)
        if not rows.size:
            return None
        args: dict[str, Any] = self.trace.args.get(int(self.trace.slices.args[rows[0]]))
        dims = args.get("Input Dims")
        if not isinstance(dims, list) or len(dims) < 2:
            return None
        name = self.trace.symbols[int(self.trace.slices.name[rows[0]])]
        ids = dims[1] if name == "aten::embedding" else dims[2]
        if not isinstance(ids, list) or not ids or not all(isinstance(x, int) for x in ids):
            return None
        return [int(x) for x in ids] if len(ids) > 1 else [1, int(ids[0])]


def _known(a: StepAnnotation) -> int:
    """How many of an annotation's figures are known."""
    fields = [a.phase, a.batch]
    for g in (a.prefill, a.decode):
        fields += [g.requests, g.q_tokens, g.kv_tokens, g.q_sq, g.q_kv]
    return sum(x is not None for x in fields)
