"""Attention FLOPs of a serving step from its annotation's token sums, as TraceLens derives
them (AMD-AGI/TraceLens ``docs/conceptual/inference-analysis.md``).

Paged attention runs one custom op over every request of the step (``aiter::mha_batch_prefill``,
FlashInfer, vLLM's paged-attention kernels): its shapes hold the step's tokens, not each
request's lengths, so its FLOPs cannot come from shapes as SDPA's do. The annotation's sums
give them, with H_Q heads and head dimensions d_qk, d_v read from the op's query and value:

- a prefill (context) request attends causally within its chunk and fully to the KV cached
  before it: ``2·H_Q·(d_qk + d_v)·(Σ N_Q·N_KV − Σ N_Q² / 2)``;
- a decode (generation) request attends to all its cached tokens, non-causally:
  ``2·H_Q·(d_qk + d_v)·Σ N_Q·N_KV``;

times the number of attention calls in the step (one a layer). Unknown (None, with the reason)
where the annotation lacks the sums or the step has no such op with shapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from gpuviz.analysis.names import name_mask
from gpuviz.analysis.op_args import ATTENTION_LEAVES, ATTENTION_PARENTS, shape_of
from gpuviz.analysis.serving_annotations import StepAnnotation
from gpuviz.analysis.serving_markers import by_rank, cpu_rows, outermost
from gpuviz.analysis.steps import Steps
from gpuviz.trace.arrays import unique
from gpuviz.trace.model import Kind, Trace

PAGED_ATTENTION = re.compile(r"(mha|attention|attn)", re.IGNORECASE)
"""An op that may be a serving engine's attention (checked further by its query's shape)."""


@dataclass
class AttentionFlops:
    """Per step row: the attention FLOPs the annotation gives, or why not.

    Attributes
    ----------
    flops : list of float or None
    calls : list of int
        Attention calls counted (layers).
    why : list of str
    """

    flops: list[float | None]
    calls: list[int]
    why: list[str]


def request_flops(ann: StepAnnotation, heads: int, d_qk: int, d_v: int) -> float | None:
    """One attention call's FLOPs over the step's requests (the module's formulas), or None
    when a sum it needs is unknown."""
    p, d = ann.prefill, ann.decode
    total = 0.0
    width = 2.0 * heads * (d_qk + d_v)
    if p.requests:
        if p.q_kv is None or p.q_sq is None:
            return None
        total += width * (p.q_kv - p.q_sq / 2.0)
    elif p.requests is None:
        return None
    if d.requests:
        if d.q_kv is None:
            return None
        total += width * d.q_kv
    elif d.requests is None:
        return None
    return total


def attention_flops(
    trace: Trace, steps: Steps, annotations: list[StepAnnotation | None]
) -> AttentionFlops:
    """The attention FLOPs of each step (see the module).

    Parameters
    ----------
    trace : Trace
    steps : Steps
    annotations : list of StepAnnotation or None
        Per step row (``ServingSteps.annotation``).
    """
    s = trace.slices
    counted = set(ATTENTION_LEAVES) | set(ATTENTION_PARENTS)  # FLOPs from shapes already
    mask = name_mask(
        trace.symbols, lambda n: n not in counted and PAGED_ATTENTION.search(n) is not None
    )
    rows_of = by_rank(trace, cpu_rows(trace, Kind.CPU_OP, mask))
    out = AttentionFlops([], [], [])
    for i, ann in enumerate(annotations):
        if ann is None or ann.tokens is None:
            out.flops.append(None)
            out.calls.append(0)
            out.why.append("the step's annotation does not record its token sums")
            continue
        rows = rows_of.get(int(steps.rank[i]), np.empty(0, dtype=np.int64))
        lo, hi = np.searchsorted(s.start_ns[rows], [steps.cpu_start_ns[i], steps.cpu_end_ns[i]])
        mine = rows[lo:hi]
        mine = np.concatenate(
            [outermost(trace, mine[s.track[mine] == t]) for t in unique(s.track[mine]).tolist()]
            or [np.empty(0, dtype=np.int64)]
        )
        calls, per_call = 0, None
        for row in mine.tolist():
            dims = trace.args.get(int(s.args[row])).get("Input Dims")
            if not isinstance(dims, list):
                continue
            q, v = shape_of(dims, 0), shape_of(dims, 2)
            # the step's query tokens, H_Q heads of d_qk: [tokens, H_Q, d_qk]
            if q is None or v is None or len(q) != 3 or q[0] != ann.tokens:
                continue
            calls += 1
            per_call = request_flops(ann, q[1], q[2], v[-1])
        if not calls or per_call is None:
            out.flops.append(None)
            out.calls.append(calls)
            out.why.append(
                "no attention op with the step's tokens in its query's shape"
                if not calls
                else "the step's annotation lacks the Σ N_Q² / Σ N_Q·N_KV sums"
            )
            continue
        out.flops.append(per_call * calls)
        out.calls.append(calls)
        out.why.append("")
    return out
