"""Communication figures of a multi-rank run: NCCL kernel time, and how much of it hides
behind compute, per rank and per profiled step.

The ``ddp`` workload's result carries them (``gpuviz run ddp``); they come from the ranks' traces.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuviz.analysis.activity import gpu_activity
from gpuviz.analysis.intervals import intersection_length, merge, union_length
from gpuviz.trace.model import Kind, Trace

_COMM_CPU_PREFIXES = ("c10d::", "gloo:", "nccl:", "record_param_comms")
"""CPU-side names of collectives: the c10d op that enqueues one, and the ``gloo:``/``nccl:``
range in which the backend runs it (on its own thread for gloo)."""


def comm_figures(trace: Trace, step_prefix: str) -> dict[str, Any]:
    """Per-rank communication figures of a multi-rank trace.

    For each rank: ``nccl_kernels`` and ``nccl_us`` (the union of its NCCL kernels' time),
    ``compute_us`` (the union of its other kernels), ``overlap_us`` (the time both run at
    once on its GPU) and ``overlap_share`` (``overlap_us / nccl_us``), ``exposed_comm_us``
    (NCCL time with no compute beside it); and ``comm_cpu_us``, the time during which a
    collective is under way on its CPU threads (the union of ``c10d::*`` ops and ``gloo:*``/
    ``nccl:*`` ranges; the only figure a gloo run has).
    Every figure covers the profiled steps; ``profiled_steps`` says how many, and ``steps``
    gives ``nccl_us``, ``compute_us`` and ``overlap_us`` for each (a rank's NCCL kernel runs
    until every rank has joined it, so the first profiled step, whose ranks started their
    profilers at slightly different times, shows that skew as NCCL time). At the top,
    ``nccl_us_by_step_min`` is each step's least NCCL time over the ranks: the collective's own
    cost, without the wait for the last rank.

    Parameters
    ----------
    trace : Trace
        The ranks' traces, merged (``load_trace`` of the run's folder).
    step_prefix : str
        Name prefix of the profiled steps' ``user_annotation`` ranges (the engine's
        ``STEP_PREFIX``): a step is a range whose name starts with it.

    Returns
    -------
    dict
        ``ranks`` (one dict per rank, as above), ``nccl_us_by_step_min``, and the sums over
        the ranks: ``nccl_us``, ``overlap_us``, ``overlap_share``.
    """
    act = gpu_activity(trace).of_kind(Kind.KERNEL)
    names = (
        np.asarray(["nccl" in n.lower() for n in trace.symbols.strings], dtype=bool)
        if len(trace.symbols)
        else np.zeros(0, dtype=bool)
    )
    s, t = trace.slices, trace.tracks
    is_nccl = names[s.name[act.rows]] if len(act) else np.zeros(0, dtype=bool)
    slice_rank = t.rank[s.track]
    cpu = np.isin(s.kind, [int(Kind.CPU_OP), int(Kind.USER_ANNOTATION)])
    comm_ids = [i for i, n in enumerate(trace.symbols.strings) if n.startswith(_COMM_CPU_PREFIXES)]
    is_comm_cpu = cpu & np.isin(s.name, comm_ids)
    step_ids = [i for i, n in enumerate(trace.symbols.strings) if n.startswith(step_prefix)]
    out = []
    for rank in sorted({int(r) for r in np.unique(t.rank)}):
        mine = act.rank == rank
        nc = mine & is_nccl
        co = mine & ~is_nccl
        nccl = merge(act.start_ns[nc], act.end_ns[nc])
        compute = merge(act.start_ns[co], act.end_ns[co])
        nccl_us = union_length(*nccl) / 1e3
        overlap_us = intersection_length(nccl, compute) / 1e3
        step_rows = np.flatnonzero(
            (slice_rank == rank) & np.isin(s.name, step_ids) & (s.kind == int(Kind.USER_ANNOTATION))
        )
        step_rows = step_rows[np.argsort(s.start_ns[step_rows], kind="stable")]
        steps = len(step_rows)
        by_step = []
        for r in step_rows.tolist():
            # A profiled step ends after a device synchronization: its kernels start inside it.
            t0, t1 = int(s.start_ns[r]), int(s.start_ns[r] + s.dur_ns[r])
            inside = (act.start_ns >= t0) & (act.start_ns < t1)
            n_s = merge(act.start_ns[nc & inside], act.end_ns[nc & inside])
            c_s = merge(act.start_ns[co & inside], act.end_ns[co & inside])
            by_step.append(
                {
                    "nccl_us": union_length(*n_s) / 1e3,
                    "compute_us": union_length(*c_s) / 1e3,
                    "overlap_us": intersection_length(n_s, c_s) / 1e3,
                }
            )
        row: dict[str, Any] = {
            "rank": None if rank < 0 else rank,
            "profiled_steps": steps,
            "nccl_kernels": int(np.count_nonzero(nc)),
            "nccl_us": nccl_us,
            "compute_us": union_length(*compute) / 1e3,
            "overlap_us": overlap_us,
            "exposed_comm_us": nccl_us - overlap_us,
            "overlap_share": overlap_us / nccl_us if nccl_us > 0 else None,
            # Collective ops nest (c10d::allreduce_ in record_param_comms): count time once.
            "comm_cpu_us": union_length(
                s.start_ns[is_comm_cpu & (slice_rank == rank)],
                s.end_ns[is_comm_cpu & (slice_rank == rank)],
            )
            / 1e3,
            "steps": by_step,
        }
        out.append(row)
    total_nccl = float(sum(float(r["nccl_us"] or 0.0) for r in out))
    total_overlap = float(sum(float(r["overlap_us"] or 0.0) for r in out))
    n_steps = min((len(r["steps"]) for r in out), default=0)
    return {
        "ranks": out,
        # Per profiled step, the least NCCL time of any rank: that of the rank that joined the
        # collectives last, which waited for nobody: the transfer itself, without the skew.
        "nccl_us_by_step_min": [min(r["steps"][k]["nccl_us"] for r in out) for k in range(n_steps)],
        "nccl_us": total_nccl,
        "overlap_us": total_overlap,
        "overlap_share": total_overlap / total_nccl if total_nccl > 0 else None,
    }


__all__ = ["comm_figures"]
