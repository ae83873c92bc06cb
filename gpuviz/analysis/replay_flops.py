"""The FLOPs of a step's CUDA/HIP graph replays, from the ops that captured their kernels in
the same trace.

A replay (``cudaGraphLaunch``: :mod:`gpuviz.analysis.graph_replays`) runs kernels without
their ops: those ran once, when the graph was captured, and launched nothing that ran then.
``torch.compile(mode="reduce-overhead")`` captures its graph inside the profiled window (the
first step records it, then replays it; the later steps only replay). Counted as ops are,
each captured op's FLOPs would fall in the capture's step, with the kernel time of every
later replay (the replayed kernels take their capture launch's call: a compiled call's
device time held four steps' kernels on the H100 recording, and step 0 claimed 100% of
its GPU time known, 128% in fact), and the replaying steps would have none.

So, where the merge (:mod:`gpuviz.analysis.graph_merge`) paired replayed kernels with the
launches of a capture in this trace:

- each replayed kernel takes the counted call (:mod:`gpuviz.analysis.op_calls`, with the
  Inductor kernels' calls of :mod:`gpuviz.analysis.compiled_calls` where the compile info
  is attached) innermost around its capture launch;
- a replay adds each such call's FLOPs once, at the call's precision, to the step whose CPU
  range holds the replay's launch (as that step's device time counts the replay's
  kernels: :func:`gpuviz.analysis.step_flops.launched_device_ns`), and its kernels' time
  to the step's time with known FLOPs where the call's FLOPs are known;
- the calls a replay took (:attr:`ReplayFlops.captured`) count in no step by themselves:
  each of their executions is a replay's;
- the op-shape table and the roofline count such a call's FLOPs and bytes once per replay that
  ran its kernels, over those kernels' time (:func:`executed`): one execution's FLOPs over
  four replays' time made its TFLOP/s four times too low.

Replays of a capture in another trace (``--capture-trace``) are a serving step's matter
(:mod:`gpuviz.analysis.mbu_graphs`); they count here in no step, as before.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.op_calls import Calls
from gpuviz.analysis.steps import Steps
from gpuviz.trace.model import Trace

if TYPE_CHECKING:
    from gpuviz.analysis.attribution import Attribution

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@dataclass
class ReplayFlops:
    """The replays' share of each step's FLOPs (see the module notes).

    Attributes
    ----------
    by_precision : list of dict of str to float
        Per step, the FLOPs of its replays' calls, by precision.
    known_ns : int64
        Per step, the device time of its replays' kernels whose call's FLOPs are known.
    captured : bool
        Per call, whether a replay ran its kernels (then it counts in no step itself).
    """

    by_precision: list[dict[str, float]]
    known_ns: I64
    captured: npt.NDArray[np.bool_]


@dataclass
class ReplayCalls:
    """The replayed kernels that took a counted call from their capture in the same trace.

    Attributes
    ----------
    kernel : int64
        Each such kernel (an index into the attribution's ``gpu_rows``).
    call : int64
        Its call (an index into ``Calls.rows``).
    replay : int64
        Its replay (:class:`~gpuviz.analysis.graph_replays.GraphReplays`).
    dur_ns : int64
        Its device time.
    replay_rank, replay_start_ns : int64
        Per replay, its launch call's rank and start.
    """

    kernel: I64
    call: I64
    replay: I64
    dur_ns: I64
    replay_rank: I64
    replay_start_ns: I64


def replay_calls(trace: Trace, call_rows: I64) -> ReplayCalls | None:
    """Each replayed kernel's counted call: the innermost around its capture launch.

    Parameters
    ----------
    trace : Trace
    call_rows : int64
        Each counted call's op row (``Calls.rows``).

    Returns
    -------
    ReplayCalls or None
        None where no replayed kernel was matched to a capture in this trace.
    """
    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.graph_merge import merge_of
    from gpuviz.analysis.graph_replays import graph_replays

    att = attribute(trace)
    merge = merge_of(att)
    if merge is None:
        return None
    own = merge.own(att)
    kernels, launch_nodes = merge.kernel[own], merge.launch_node[own]
    if not len(kernels) or not len(call_rows):
        return None
    call_of_node = _calls_around(att, launch_nodes, call_rows)
    call = call_of_node[np.searchsorted(np.unique(launch_nodes), launch_nodes)]
    hit = call >= 0
    kernels, call = kernels[hit], call[hit]
    replays = graph_replays(att)
    s = trace.slices
    launch_rows = att.forest.rows[replays.launch_node]
    return ReplayCalls(
        kernel=kernels,
        call=call,
        replay=replays.kernel_replay[kernels].astype(np.int64),
        dur_ns=att.gpu_dur_ns[kernels].astype(np.int64),
        replay_rank=trace.tracks.rank[s.track[launch_rows]].astype(np.int64),
        replay_start_ns=s.start_ns[launch_rows].astype(np.int64),
    )


def executed(calls: Calls, rc: ReplayCalls) -> Calls:
    """``calls`` with each captured call's figures those of its executions: FLOPs and bytes
    once per replay that ran its kernels, its device time theirs (the roofline of its shape:
    work over the time it took, not one execution's work over every replay's time)."""
    n = len(calls.rows)
    pairs = np.unique(np.stack([rc.replay, rc.call]), axis=1)
    runs = np.bincount(pairs[1], minlength=n).astype(np.float64)
    captured = runs > 0
    ran_ns = np.bincount(rc.call, weights=rc.dur_ns, minlength=n).astype(np.int64)
    return dataclasses.replace(
        calls,
        flops=np.where(captured, calls.flops * runs, calls.flops),
        nbytes=np.where(captured, calls.nbytes * runs, calls.nbytes),
        device_ns=np.where(captured, ran_ns, calls.device_ns),
    )


def replay_flops(
    rc: ReplayCalls,
    steps: Steps,
    n_calls: int,
    flops: F64,
    precision: npt.NDArray[np.object_],
) -> ReplayFlops:
    """The FLOPs of each step's graph replays (see the module notes).

    Parameters
    ----------
    rc : ReplayCalls
    steps : Steps
    n_calls : int
        How many calls there are.
    flops : float64
        Each call's FLOPs, one execution's (NaN: unknown).
    precision : object array
        Each call's precision.

    Returns
    -------
    ReplayFlops
    """
    n = len(steps)
    out = ReplayFlops([{} for _ in range(n)], np.zeros(n, dtype=np.int64), np.zeros(n_calls, bool))
    out.captured[rc.call] = True
    if not len(rc.kernel):
        return out
    step_of_replay = _steps_of(steps, rc.replay_rank, rc.replay_start_ns)
    step = step_of_replay[rc.replay]
    known = (step >= 0) & np.isfinite(flops[rc.call])
    np.add.at(out.known_ns, step[known], rc.dur_ns[known])
    # Each call once a replay: its FLOPs per execution, at its precision.
    pairs = np.unique(np.stack([rc.replay[known], rc.call[known]]), axis=1)
    for r, c in zip(pairs[0].tolist(), pairs[1].tolist()):
        f = float(flops[c])
        if f > 0:  # a known 0 (a compiled dtype cast) is time covered, not a precision
            by = out.by_precision[int(step_of_replay[r])]
            by[str(precision[c])] = by.get(str(precision[c]), 0.0) + f
    return out


def _calls_around(att: Attribution, nodes: I64, call_rows: I64) -> I64:
    """For each distinct node of ``nodes`` (sorted, as :func:`numpy.unique` gives them), the
    call whose op is innermost around it, -1 for none."""
    forest_rows, op_parent = att.forest.rows, att.op_parent
    order = np.argsort(call_rows, kind="stable")
    sorted_rows = call_rows[order]
    out = []
    for node in np.unique(nodes).tolist():
        at, found = int(op_parent[node]), -1
        while at >= 0:
            row = int(forest_rows[at])
            j = int(np.searchsorted(sorted_rows, row))
            if j < len(sorted_rows) and int(sorted_rows[j]) == row:
                found = int(order[j])
                break
            at = int(op_parent[at])
        out.append(found)
    return np.asarray(out, dtype=np.int64)


def _steps_of(steps: Steps, rank: I64, start: I64) -> I64:
    """For each (rank, start), the step whose CPU range on that rank holds it, -1 for none."""
    out = np.full(len(start), -1, dtype=np.int64)
    for i in range(len(steps)):
        inside = (
            (rank == int(steps.rank[i]))
            & (start >= int(steps.cpu_start_ns[i]))
            & (start < int(steps.cpu_end_ns[i]))
        )
        out[inside & (out < 0)] = i
    return out


__all__ = ["ReplayCalls", "ReplayFlops", "executed", "replay_calls", "replay_flops"]
