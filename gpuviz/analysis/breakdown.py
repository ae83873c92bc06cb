"""``gpuviz breakdown``'s tables: one entry point over the attribution, by op, op and shape,
module, source line, kernel or step.

>>> table = breakdown(trace, "module")            # doctest: +SKIP
>>> table.rows[0].key, table.rows[0].backward_device_ns  # doctest: +SKIP
('TinyLM_0', 41250000)

The op, module and line tables come from :mod:`gpuviz.analysis.op_table`,
:mod:`gpuviz.analysis.modules` and :mod:`gpuviz.analysis.source_lines`; the kernel and step
tables are here. Everything reads one cached :func:`gpuviz.analysis.attribution.attribute`.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.attribution import Attribution, attribute
from gpuviz.analysis.breakdown_table import BY_VALUES, Breakdown, BreakdownRow
from gpuviz.analysis.compiled_calls import annotate_fused_flops
from gpuviz.analysis.compiled_regions import compile_info_of, compiled_origins, refine
from gpuviz.analysis.graph_merge import add_captured, capture_runs, merge_of, without_merged
from gpuviz.analysis.modules import module_table
from gpuviz.analysis.op_table import node_times, op_table
from gpuviz.analysis.source_lines import line_table
from gpuviz.analysis.steps import find_steps
from gpuviz.trace.model import Trace


class NoStacksError(ValueError):
    """``--by module``/``--by line`` on a trace recorded without Python stacks."""


NO_STACKS = (
    "has no Python stack (python_function events): record it with `gpuviz profile` "
    "(stacks are on unless --no-stack), or torch.profiler.profile(with_stack=True)"
)


def breakdown(trace: Trace, by: str, mine: bool = False) -> Breakdown:
    """The breakdown table of ``trace``.

    Parameters
    ----------
    trace : Trace
    by : str
        One of ``op``, ``op-shape``, ``module``, ``line``, ``kernel``, ``step``.
    mine : bool
        For ``line``: the user's own files only (see :mod:`gpuviz.analysis.source_lines`).

    Returns
    -------
    Breakdown

    Raises
    ------
    ValueError
        ``by`` is not one of those.
    NoStacksError
        ``module`` or ``line`` of a trace without ``python_function`` events.
    """
    if by not in BY_VALUES:
        raise ValueError(f"by={by!r}: expected one of {', '.join(BY_VALUES)}")
    att = attribute(trace)
    if by in ("module", "line") and not att.has_stacks():
        raise NoStacksError(NO_STACKS)
    if by == "step":
        return step_breakdown_table(att)
    # Compiled code's kernels to the modules and lines that wrote them (issue 49): from the
    # compile-info folder a command attached to the trace, else from kernel names.
    origins = compiled_origins(att, compile_info_of(trace))
    merge = merge_of(att) if by in ("op", "op-shape", "module", "line") else None
    if merge is not None:
        # Graph replays with their capture: each matched kernel where it was captured.
        base = att.memo("graph_merge_base", lambda: without_merged(att, merge))
        runs = capture_runs(att, merge)  # a captured op's FLOPs: once per replay
        make = {
            "op": lambda a: op_table(a, runs=runs),
            "op-shape": lambda a: op_table(a, by_shape=True, runs=runs),
            "module": module_table,
        }.get(by, lambda a: line_table(a, mine))
        table = make(base)
        refined = refine(add_captured(table, att, merge, mine), att, origins)
        return annotate_fused_flops(refined, att, origins)
    if by == "op":
        table = op_table(att)
    elif by == "op-shape":
        table = op_table(att, by_shape=True)
    elif by == "module":
        table = module_table(att)
    elif by == "line":
        table = line_table(att, mine=mine)
    else:
        table = kernel_breakdown(att)
    # Inductor's generated kernels: the FLOPs of the FX nodes they fuse (issue 49).
    return annotate_fused_flops(refine(table, att, origins), att, origins)


def kernel_breakdown(att: Attribution) -> Breakdown:
    """Kernels, copies and sets by exact name: launches and device time (no host time)."""
    names = att.trace.slices.name[att.gpu_rows]
    uniq, inv, counts = np.unique(names, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    total = np.bincount(inv, weights=att.gpu_dur_ns, minlength=len(uniq))
    strings = att.trace.symbols.strings
    rows = [
        BreakdownRow(
            key=strings[int(u)],
            calls=int(c),
            cpu_self_ns=0,
            cpu_total_ns=0,
            device_self_ns=round(t),
            device_total_ns=round(t),
            kind="kernel",
        )
        for u, c, t in zip(uniq.tolist(), counts.tolist(), total.tolist(), strict=True)
    ]
    return Breakdown(
        by="kernel", rows=rows, kernel_rows=att.gpu_rows, kernel_row=inv.astype(np.int64)
    ).sorted()


def step_breakdown_table(att: Attribution) -> Breakdown:
    """Steps (``gpuviz.analysis.steps.find_steps``) in order: wall time, host time, and the
    device time of the kernels launched inside each step's host window."""
    from gpuviz.analysis.serving_steps import is_serving, serving_steps

    trace = att.trace
    steps = find_steps(trace)
    n = len(steps.number)
    # A serving step's phase, requests and tokens (docs/serving.md); training rows keep theirs.
    sv = serving_steps(trace, steps) if is_serving(steps) else None
    launch = att.gpu_launch
    ok = launch >= 0
    launch_ns = np.where(ok, att.forest.start_ns[np.maximum(launch, 0)], -1)
    launch_rank = trace.tracks.rank[trace.slices.track[att.gpu_rows]].astype(np.int64)
    kernel_row = np.full(len(att.gpu_rows), -1, dtype=np.int64)
    # The step markers' own host time, to give each step torch's self time of its range.
    _, cpu_self, _, _ = node_times(att)
    marker = np.flatnonzero(att.step_marker())
    m_rank = trace.tracks.rank[trace.slices.track[att.forest.rows[marker]]].astype(np.int64)
    m_start = att.forest.start_ns[marker]
    ranks = sorted({int(r) for r in steps.rank.tolist()})
    # Each launch to the step whose host window holds it: one search per rank, not per step.
    for rank in ranks:
        of_rank = np.flatnonzero(steps.rank == rank)
        of_rank = of_rank[np.argsort(steps.cpu_start_ns[of_rank], kind="stable")]
        w0, w1 = steps.cpu_start_ns[of_rank], steps.cpu_end_ns[of_rank]
        k = np.flatnonzero(ok & (launch_rank == rank))
        at = np.searchsorted(w0, launch_ns[k], side="right") - 1
        inside = (at >= 0) & (launch_ns[k] < w1[np.maximum(at, 0)])
        kernel_row[k[inside]] = of_rank[at[inside]]
    device = np.bincount(
        kernel_row[kernel_row >= 0], weights=att.gpu_dur_ns[kernel_row >= 0], minlength=n
    )
    rows = []
    for i in range(n):
        rank, c0, c1 = int(steps.rank[i]), int(steps.cpu_start_ns[i]), int(steps.cpu_end_ns[i])
        dev = round(device[i])
        hit = np.flatnonzero((m_rank == rank) & (m_start == c0))
        self_ns = int(cpu_self[marker[hit[0]]]) if len(hit) else c1 - c0
        label = f"{steps.source[i]}#{int(steps.number[i])}"
        if len(ranks) > 1:
            label = f"rank {rank} {label}"
        rows.append(
            BreakdownRow(
                key=label,
                calls=1,
                cpu_self_ns=self_ns,
                cpu_total_ns=c1 - c0,
                device_self_ns=dev,
                device_total_ns=dev,
                kind="step",
                duration_ns=int(steps.end_ns[i] - steps.start_ns[i]),
                extra={
                    "rank": None if rank < 0 else rank,
                    "step": int(steps.number[i]),
                    **(
                        {}
                        if sv is None
                        else {
                            "phase": sv.phase[i],
                            "requests": sv.requests[i],
                            "tokens": sv.tokens[i],
                            "graph": sv.graph[i],
                        }
                    ),
                },
            )
        )
    return Breakdown(
        by="step",
        rows=rows,
        kernel_rows=att.gpu_rows,
        kernel_row=kernel_row,
        unattributed_device_ns=int(att.gpu_dur_ns[kernel_row < 0].sum()),
    )
