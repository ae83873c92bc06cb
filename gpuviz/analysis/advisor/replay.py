"""Savings predicted by replaying steps' dependency graphs (docs/critical_path.md).

A rule whose fix is "this work, that much faster" (a straggler rank's compute as fast as the
median rank's, fp32 GEMMs on tensor cores) asks :func:`replay_saving` what the steps would
then take: the graph knows what overlaps the work and what waits for it, where the rule's own
estimate counts all of it. The replay runs on up to :data:`MAX_STEPS` steps spread over the
trace (their mean saving times the step count); on traces past :data:`MAX_SLICES` slices or
:data:`MAX_RANKS` ranks (and on each rank of such a job advised rank by rank) it does not run,
and the rule keeps its estimate.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.advisor.context import AdviceContext
from gpuviz.analysis.dep_graph import StepGraph, build_step_graph, step_numbers
from gpuviz.analysis.whatif import Change, predict

MAX_STEPS = 3
MAX_SLICES = 400_000
MAX_RANKS = 16

PREDICTED = "Predicted by replay of the steps' dependency graphs (docs/critical_path.md): "
"""How a finding's ``saving_how`` begins when its saving is the replay's."""


def replay_saving(
    ctx: AdviceContext,
    select: Callable[[StepGraph], npt.NDArray[np.bool_]],
    factor: float,
    rank: int | None = None,
) -> float | None:
    """The saving over all steps of making ``select(graph)``'s nodes ``factor`` times faster.

    Parameters
    ----------
    ctx : AdviceContext
    select : callable
        The nodes to change in a step's graph.
    factor : float
        How many times faster.
    rank : int, optional
        Whose steps count (their number and time); the job's (each step's longest rank) when
        None.

    Returns
    -------
    float or None
        ns; None where the replay does not apply (a trace too large, no step every rank has,
        nothing selected, GPU work most of whose launches the trace lacks).
    """
    trace = ctx.trace
    # ctx.replay is off for one rank of a job past these limits, advised rank by rank: the
    # rank's file alone is under them, the job read whole is not.
    if not ctx.replay or len(trace.slices) > MAX_SLICES or len(trace.ranks) > MAX_RANKS:
        return None
    steps = ctx.steps
    numbers = step_numbers(steps)
    if not numbers:
        return None
    pick = sorted({numbers[int(i)] for i in np.linspace(0, len(numbers) - 1, MAX_STEPS)})
    savings = []
    for n in pick:
        g = build_step_graph(trace, steps, n)
        m = select(g)
        gpu = m & (g.thread < 0)
        # GPU work whose launches are not in the trace is anchored nowhere in the graph: the
        # replay could not say what it waits for, nor what waits for it.
        if not m.any() or (gpu.any() and (g.launch_row[gpu] >= 0).mean() < 0.5):
            continue
        p = predict(trace, g, [Change("(rule)", factor, mask=m)])
        if rank is None:
            savings.append(float(p.measured_ns.max() - p.predicted_ns.max()))
        else:
            i = np.flatnonzero(g.ranks == rank)
            if len(i):
                savings.append(float(p.measured_ns[i[0]] - p.predicted_ns[i[0]]))
    if not savings:
        return None
    count = ctx.step_count(rank) if rank is not None else len(numbers)
    return max(float(np.mean(savings)), 0.0) * count
