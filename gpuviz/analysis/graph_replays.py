"""CUDA/HIP graph replays: the kernels one ``cudaGraphLaunch`` / ``hipGraphLaunch`` ran.

A graph replay is one runtime (or driver) call, ``cudaGraphLaunch``, ``hipGraphLaunch`` or
``cuGraphLaunch``, that runs every kernel, copy and set captured into the graph. Kineto links
them the way it links any launch: each kernel of the replay carries the launch call's
``correlation`` id (CUPTI and roctracer both do; seen in vLLM's ROCm decode trace, where 421
kernels share the id of one ``hipGraphLaunch``). So :func:`gpuviz.analysis.attribution.attribute`
already holds a replayed kernel's time at the graph launch node; this module names those
replays and the graphs they run:

- a graph is told apart by the ``graph id`` its kernels carry where Kineto writes one, else by
  the sequence of its kernels' names (two replays of one graph run the same kernels, in order);
- a replay's kernels are in the order of their ``graph node id`` where Kineto writes it (newer
  CUPTI: nodes are numbered in capture order, across streams; torch's
  ``torch.cuda._annotate_cuda_graph_trace`` matches ``mark_kernels`` annotations by it), else
  in start order;
- a graph is one rank's: in a rank folder read whole, each process counted its ``graph id``
  from 1 and captured its own graphs (pipeline stages capture different ones), so two ranks'
  replays are never one graph, whatever their ids or kernels;
- graphs are numbered from 1 in order of their first replay (over every rank of a folder),
  and each replay is one unit, ``graph N: K kernels``, attributed to the replay's own
  launching op, module and line: the operator table gives replays outside any op a row of
  that name (:func:`graph_op_rows`), the module table names its outside row after it.

With a trace of the capture, :mod:`gpuviz.analysis.graph_merge` attributes each replayed kernel
to the op, module and line that launched it at capture instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution, NodeKind
from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
from gpuviz.analysis.names import graph_launch_mask

I64 = npt.NDArray[np.int64]


@dataclass
class GraphReplays:
    """The graph replays of one trace.

    Attributes
    ----------
    launch_node : int64
        Per replay, the call-forest node of its graph launch call, in time order.
    graph : int64
        Per replay, the number of the graph it ran (from 1, in order of first replay).
    kernels : int64
        Per replay, the kernels, copies and sets it ran.
    kernel_replay : int64
        Per entry of ``Attribution.gpu_rows``, the replay that ran it, -1 for none.
    rank : int64
        Per replay, the rank of its launch call's process (``Tracks.rank``).
    node_id : int64 or None
        Per entry of ``Attribution.gpu_rows``, the ``graph node id`` Kineto writes on graphed
        kernels (newer CUPTI; 0 where absent); None where no replay's kernel has one.
    """

    launch_node: I64
    graph: I64
    kernels: I64
    kernel_replay: I64
    rank: I64
    node_id: I64 | None = None
    _order: I64 | None = None
    _offsets: I64 | None = None

    def __len__(self) -> int:
        return len(self.launch_node)

    def label(self, replay: int) -> str:
        """The unit's name: ``graph N: K kernels``."""
        k = int(self.kernels[replay])
        return f"graph {int(self.graph[replay])}: {k} kernel{'' if k == 1 else 's'}"

    def kernel_order(self, replay: int, att: Attribution) -> I64:
        """The ``gpu_rows`` indices of ``replay``'s kernels, in start order (then stream)."""
        if self._order is None or self._offsets is None:
            # Every replay's at once: one sort, not a pass over all kernels per replay.
            idx = np.flatnonzero(self.kernel_replay >= 0)
            rows = att.gpu_rows[idx]
            s = att.trace.slices
            keys: list[npt.NDArray[Any]] = [s.track[rows], s.start_ns[rows]]
            if self.node_id is not None:
                # Node ids count the graph's nodes in capture order: across streams too.
                keys.append(self.node_id[idx])
            by = np.lexsort((*keys, self.kernel_replay[idx]))
            self._order = idx[by]
            self._offsets = np.concatenate([[0], np.cumsum(self.kernels)]).astype(np.int64)
        return self._order[self._offsets[replay] : self._offsets[replay + 1]]


def graph_replays(att: Attribution) -> GraphReplays:
    """The graph replays of ``att``'s trace (cached on the attribution).

    Parameters
    ----------
    att : Attribution

    Returns
    -------
    GraphReplays
        Empty (no replays) for a trace without graph launches.
    """
    return att.memo("graph_replays", lambda: _find(att))


def _find(att: Attribution) -> GraphReplays:
    n_k = len(att.gpu_rows)
    is_graph = graph_launch_mask(att.trace.symbols)[att.name]
    is_graph &= att.kind == NodeKind.RUNTIME
    launch = att.gpu_launch
    hit = launch >= 0
    hit[hit] = is_graph[launch[hit]]
    if not hit.any():
        empty = np.zeros(0, dtype=np.int64)
        return GraphReplays(empty, empty, empty, np.full(n_k, -1, dtype=np.int64), empty)
    nodes = np.unique(launch[hit])
    nodes = nodes[np.argsort(att.forest.start_ns[nodes], kind="stable")]
    where = np.full(len(att.forest), -1, dtype=np.int64)
    where[nodes] = np.arange(len(nodes))
    kernel_replay = np.where(hit, where[np.maximum(launch, 0)], -1)
    kernels = np.bincount(kernel_replay[hit], minlength=len(nodes)).astype(np.int64)
    t = att.trace
    rank = t.tracks.rank[t.slices.track[att.forest.rows[nodes]]].astype(np.int64)
    replays = GraphReplays(
        nodes, np.zeros(len(nodes), dtype=np.int64), kernels, kernel_replay, rank
    )
    # The graph ids of each replay's first kernel tell whether Kineto wrote graph args at all:
    # only then are every graphed kernel's args decoded.
    first = np.flatnonzero(hit)[np.unique(kernel_replay[hit], return_index=True)[1]]
    ids = _graph_args(att, first)
    if (ids[:, 1] > 0).any():
        graphed = np.flatnonzero(hit)
        node_id = np.zeros(n_k, dtype=np.int64)
        node_id[graphed] = _graph_args(att, graphed)[:, 1]
        replays.node_id = node_id
    replays.graph = _graph_numbers(att, replays, ids[:, 0])
    return replays


class _GraphArgs(msgspec.Struct):
    graph_id: Any = msgspec.field(default=None, name="graph id")
    node_id: Any = msgspec.field(default=None, name="graph node id")


def _graph_args(att: Attribution, idx: I64) -> I64:
    """``(graph id, graph node id)`` of the kernels ``idx`` (``gpu_rows`` indices), 0 where
    absent; decoded in one msgspec call that skips every other arg."""
    store, s = att.trace.args, att.trace.slices
    texts = [store.raw(int(a)) if a >= 0 else b"{}" for a in s.args[att.gpu_rows[idx]].tolist()]
    got = msgspec.json.decode(b"[" + b",".join(texts) + b"]", type=list[_GraphArgs])
    out = np.zeros((len(idx), 2), dtype=np.int64)
    for i, g in enumerate(got):
        out[i, 0] = g.graph_id if isinstance(g.graph_id, int) else 0
        out[i, 1] = g.node_id if isinstance(g.node_id, int) else 0
    return out


def _graph_numbers(att: Attribution, replays: GraphReplays, graph_id: I64) -> I64:
    """Each replay's graph, numbered from 1 in order of first replay: by its rank and the
    ``graph id`` of its kernels where Kineto writes one (``graph_id``: per replay, 0 where
    absent), else by its rank and the sequence of its kernels' names.

    The rank is part of the key because each process numbers its graphs from 1 and captures
    its own: rank 1's "graph id 1" is not rank 0's, and two ranks that replay the same kernels
    replay two graphs, each matched with its own rank's capture
    (:mod:`gpuviz.analysis.graph_merge`). One rank's trace numbers as without it.
    """
    s = att.trace.slices
    seen: dict[object, int] = {}
    out = np.zeros(len(replays), dtype=np.int64)
    for r in range(len(replays)):
        gid = int(graph_id[r])
        rank = int(replays.rank[r])
        if gid > 0:
            key: object = (rank, "id", gid)
        else:
            key = (rank, "names", s.name[att.gpu_rows[replays.kernel_order(r, att)]].tobytes())
        out[r] = seen.setdefault(key, len(seen) + 1)
    return out


GRAPH_FLOPS = "unknown: holds graph replays, whose ops ran at capture, not in this trace"
"""Why a row holding graph-replayed kernels has no FLOPs."""
GRAPH_FLOPS_CAPTURED = (
    "unknown: holds graph replays; their FLOPs, from the capture in this trace, are counted "
    "per step (summary) and per op (--by op, op-shape), not per module"
)
"""The same, where the graph's capture is in the trace itself (the steps count its replays:
:mod:`gpuviz.analysis.replay_flops`)."""


def graph_held_rows(table: Breakdown, att: Attribution) -> list[int]:
    """The rows of a module or line ``table`` whose device time holds graph-replayed kernels:
    those they hold as their own, those the capture merge added to (``graph_device_us``), and
    the module paths above them."""
    replays = graph_replays(att)
    if not len(replays):
        return []
    own = table.kernel_row[(replays.kernel_replay >= 0) & (table.kernel_row >= 0)]
    held = set(np.unique(own).tolist())
    held |= {i for i, r in enumerate(table.rows) if "graph_device_us" in r.extra}
    if table.by == "module":
        paths = {table.rows[i].key for i in held if table.rows[i].kind == "module"}
        held |= {
            i
            for i, r in enumerate(table.rows)
            if r.kind == "module" and any(p.startswith(r.key + ".") for p in paths)
        }
    return sorted(held)


def loose_graph_launch(att: Attribution) -> I64:
    """Per kernel, its graph launch node where it is a replay's kernel launched outside every
    op (``gpu_op`` -1), else -1."""
    replays = graph_replays(att)
    loose = (replays.kernel_replay >= 0) & (att.gpu_op < 0)
    return np.where(loose, att.gpu_launch, -1)


def graph_op_rows(att: Attribution, n_rows: int, kernel_row: I64) -> tuple[list[BreakdownRow], I64]:
    """Operator-table rows for replays launched outside any op: one row per graph, named
    :meth:`GraphReplays.label`, of kind ``"graph"``.

    A replay inside an op (``aten::…`` around the launch) stays that op's, as torch counts it;
    one outside every op (vLLM's ``CUDAGraphWrapper``, ``torch.cuda.graph.replay()``) would be
    "in no row" otherwise.

    Parameters
    ----------
    att : Attribution
    n_rows : int
        Rows the table has so far: the new rows' indices follow them.
    kernel_row : int64
        Each kernel's row so far (-1 for none).

    Returns
    -------
    rows : list of BreakdownRow
        calls: the graph's replays; host time: their launch calls; device time: their kernels.
    kernel_row : int64
        ``kernel_row`` with the replays' kernels on the new rows.
    """
    replays = graph_replays(att)
    free = (replays.kernel_replay >= 0) & (att.gpu_op < 0) & (kernel_row < 0)
    free &= att.gpu_launch >= 0  # kernels a capture merge placed elsewhere are not the unit's
    if not free.any():
        return [], kernel_row
    labels = [replays.label(r) for r in range(len(replays))]
    used = np.unique(replays.kernel_replay[free]).tolist()
    names = sorted({labels[r] for r in used}, key=lambda x: (int(x.split()[1][:-1]), x))
    index = {name: i for i, name in enumerate(names)}
    row_of_replay = np.full(len(replays), -1, dtype=np.int64)
    for r in used:
        row_of_replay[r] = index[labels[r]]
    f = att.forest
    rows = []
    dev = np.bincount(
        row_of_replay[replays.kernel_replay[free]],
        weights=att.gpu_dur_ns[free],
        minlength=len(names),
    )
    for j, name in enumerate(names):
        mine = replays.launch_node[row_of_replay == j]
        cpu = int((f.end_ns[mine] - f.start_ns[mine]).sum())
        rows.append(
            BreakdownRow(
                key=name,
                calls=len(mine),
                cpu_self_ns=cpu,
                cpu_total_ns=cpu,
                device_self_ns=round(dev[j]),
                device_total_ns=round(dev[j]),
                kind="graph",
            )
        )
    out = kernel_row.copy()
    out[free] = n_rows + row_of_replay[replays.kernel_replay[free]]
    return rows, out
