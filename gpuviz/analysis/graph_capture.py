"""Graph captures: the launches recorded between ``cudaStreamBeginCapture`` and
``cudaStreamEndCapture`` (``hip…`` on ROCm), in a trace of the capture.

While a stream captures, launches do not run: CUDA and HIP record each kernel, copy and set as
a node of the graph, in launch order, and a later ``cudaGraphLaunch`` runs them all. A profile
of the capture (vLLM and SGLang write one per batch size under ``capture_traces/``, beside the
run, with ``execution_details.json`` naming the files) thus holds no GPU work for the graph, but
holds what matters for attribution: each launch call, inside its op, its ``nn.Module`` frame and
its Python stack. ROCm's launch calls carry the kernel's name and grid (``args.kernel``,
``args.grid``); CUDA's carry neither, so there the kind of work (kernel, copy, set) and its order
are all a capture tells (:mod:`gpuviz.analysis.graph_merge` aligns on what there is).

:func:`gpuviz.trace.graph_captures.capture_files` finds the capture traces beside a run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution, NodeKind
from gpuviz.analysis.names import name_mask

I64 = npt.NDArray[np.int64]

BEGIN = re.compile(r"^(?:cuda|hip|cu)StreamBeginCapture(?:ToGraph)?(?:_v\d+)?(?:_ptsz|_spt)?$")
END = re.compile(r"^(?:cuda|hip|cu)StreamEndCapture(?:_v\d+)?(?:_ptsz|_spt)?$")
LAUNCH = re.compile(r"Launch(?:Cooperative)?Kernel|Memcpy\w*Async|Memset\w*Async")
"""Calls that add a node to a capturing stream's graph (graph launches excluded by name)."""

COPY, SET, KERNEL = "(copy)", "(set)", "(kernel)"
"""What a launch is when its kernel's name is not recorded (CUDA): the kind of work only."""


@dataclass
class CapturedGraph:
    """One capture: its launches in order.

    Attributes
    ----------
    begin_node : int
        The ``…StreamBeginCapture`` call (a node of the capture trace's attribution).
    launch_node : int64
        The launch calls inside the capture, in time order.
    names : list of str
        Per launch, the kernel's name where the call records it (ROCm's ``args.kernel``), else
        :data:`KERNEL`, :data:`COPY` or :data:`SET`.
    grids : list of tuple or None
        Per launch, ``args.grid`` where recorded.
    """

    begin_node: int
    launch_node: I64
    names: list[str]
    grids: list[tuple[int, ...] | None]


def captured_graphs(att: Attribution) -> list[CapturedGraph]:
    """The captures of a trace, in time order (cached on the attribution).

    Parameters
    ----------
    att : Attribution
        ``attribute(capture_trace)``.

    Returns
    -------
    list of CapturedGraph
        One per ``…StreamBeginCapture`` that an ``…StreamEndCapture`` on its thread closes.
    """
    return att.memo("captured_graphs", lambda: _captures(att))


def _captures(att: Attribution) -> list[CapturedGraph]:
    sym = att.trace.symbols
    runtime = att.kind == NodeKind.RUNTIME
    begin = np.flatnonzero(name_mask(sym, lambda n: bool(BEGIN.match(n)))[att.name] & runtime)
    if len(begin) == 0:
        return []
    end = np.flatnonzero(name_mask(sym, lambda n: bool(END.match(n)))[att.name] & runtime)
    launch_mask = name_mask(sym, lambda n: bool(LAUNCH.search(n)) and "Graph" not in n)
    launch = np.flatnonzero(launch_mask[att.name] & runtime)
    f = att.forest
    out = []
    for b in begin.tolist():
        g, t0 = f.group[b], f.start_ns[b]
        ends = end[(f.group[end] == g) & (f.start_ns[end] > t0)]
        if len(ends) == 0:
            continue
        t1 = f.start_ns[ends].min()
        mine = launch[
            (f.group[launch] == g) & (f.start_ns[launch] > t0) & (f.start_ns[launch] < t1)
        ]
        mine = mine[np.argsort(f.start_ns[mine], kind="stable")]
        names, grids = _launch_names(att, mine)
        out.append(CapturedGraph(int(b), mine, names, grids))
    return out


def _launch_names(att: Attribution, nodes: I64) -> tuple[list[str], list[tuple[int, ...] | None]]:
    """Per launch call, its kernel's name (or the kind of work) and grid."""
    s = att.trace.slices
    strings = att.trace.symbols.strings
    names: list[str] = []
    grids: list[tuple[int, ...] | None] = []
    for node in nodes.tolist():
        row = int(att.forest.rows[node])
        args = att.trace.args.get(int(s.args[row]))
        call = strings[int(s.name[row])]
        kernel = args.get("kernel")
        if isinstance(kernel, str) and kernel:
            names.append(kernel)
        else:
            names.append(COPY if "Memcpy" in call else SET if "Memset" in call else KERNEL)
        grid = args.get("grid")
        if isinstance(grid, list) and all(isinstance(v, int) for v in grid):
            grids.append(tuple(grid))
        else:
            grids.append(None)
    return names, grids
